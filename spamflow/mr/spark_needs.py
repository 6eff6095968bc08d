"""What mrjob's spark runner needs on this machine before a run starts, checked by
``spamflow validate`` (and every run) so that a missing piece is one line, not a stage that
fails minutes in: ``spark-submit`` and Java, a standalone master that answers, and the
``hadoop`` command when the Spark tmp dir is on HDFS."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
from collections.abc import Sequence
from pathlib import Path

from spamflow.storage import needs_hadoop_command

MASTER_TIMEOUT = 3.0
"""Seconds to wait for a TCP connection to a standalone master."""


def option(args: Sequence[str], name: str) -> str | None:
    """The value of ``name`` in mrjob arguments (``--name value`` or ``--name=value``)."""
    args = list(args)
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def spark_submit(args: Sequence[str]) -> str | None:
    """The ``spark-submit`` mrjob would run: ``--spark-submit-bin``, on PATH, or pyspark's."""
    given = option(args, "--spark-submit-bin")
    if given:
        return shutil.which(given.split()[0])
    found = shutil.which("spark-submit")
    if found:
        return found
    spec = importlib.util.find_spec("pyspark")
    if spec and spec.origin:
        bundled = Path(spec.origin).parent / "bin" / "spark-submit"
        return str(bundled) if bundled.is_file() else None
    return None


def master_addresses(master: str) -> list[tuple[str, int]]:
    """(host, port) of a ``spark://`` master URL (several for a highly available master)."""
    kind, _, hosts = master.partition(":")
    if kind != "spark" or not hosts.startswith("//"):  # yarn, local[N], k8s://...: no TCP check
        return []
    out = []
    for part in hosts[2:].split(","):
        host, _, port = part.rpartition(":")
        out.append((host or part, int(port) if port.isdigit() else 7077))
    return out


def reachable(host: str, port: int, timeout: float = MASTER_TIMEOUT) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def spark_problems(args: Sequence[str]) -> list[str]:
    """What is missing for the spark runner with these ``mapreduce.args``, one line each."""
    problems = []
    if importlib.util.find_spec("pyspark") is None and shutil.which("spark-submit") is None:
        problems.append("pyspark or a Spark installation (pip install 'spamflow[spark]')")
    elif spark_submit(args) is None:
        problems.append("the 'spark-submit' command (on PATH, from pyspark, or --spark-submit-bin)")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        problems.append("a Java runtime for Spark ('java' on PATH or JAVA_HOME)")
    master = option(args, "--spark-master") or "local"
    addresses = master_addresses(master)
    if addresses and not any(reachable(h, p) for h, p in addresses):
        problems.append(f"the Spark master {master} to answer (no TCP connection to "
                        f"{', '.join(f'{h}:{p}' for h, p in addresses)} within {MASTER_TIMEOUT:g} s)")
    tmp_dir = option(args, "--spark-tmp-dir") or ""
    if tmp_dir and needs_hadoop_command(tmp_dir) and shutil.which("hadoop") is None and not _hadoop_home_bin():
        problems.append(f"the 'hadoop' command on PATH (or HADOOP_HOME) for --spark-tmp-dir {tmp_dir}")
    return problems


def _hadoop_home_bin() -> bool:
    home = os.environ.get("HADOOP_HOME")
    return home is not None and (Path(home) / "bin" / "hadoop").is_file()
