"""A real Spark standalone cluster on 127.0.0.1 from the installed pyspark: its master and two
workers (one core, 1 GB each) as Java processes, as ``sbin/start-master.sh`` and
``start-worker.sh`` start them, without their daemon scripts (pyspark's wheel has none).

Used by ``tests/test_spark_cluster.py`` and by ``benchmarks/bench_spark_cluster.py`` (which
puts ``tests/`` on ``sys.path``); the benchmark also reads the JVMs' process ids
(:func:`cluster_processes`) to count their CPU, which is not the run's."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> Path | None:
    """pyspark's folder (its ``jars/`` and ``bin/spark-submit``), or None without pyspark."""
    try:
        import pyspark
    except ImportError:
        return None
    return Path(pyspark.__file__).parent


def why_no_cluster() -> str | None:
    """Why a standalone cluster cannot start here, or None."""
    if shutil.which("java") is None:
        return "needs a Java runtime (java on PATH) for Spark's master and workers"
    home = spark_home()
    if home is None or not (home / "jars").is_dir():
        return "needs pyspark with its jars (pip install -e '.[test]')"
    return None


@dataclass(frozen=True)
class Cluster:
    master: str
    """``spark://127.0.0.1:PORT``"""
    pids: tuple[int, ...]
    """The master's and the workers' JVMs (executors are the workers' children)."""


@contextlib.contextmanager
def standalone_cluster(folder: Path, workers: int = 2) -> Iterator[str]:
    """Start a master and ``workers`` workers on 127.0.0.1 (logs and work folders in
    ``folder``); yield the master URL ``spark://127.0.0.1:PORT`` once every worker is ALIVE;
    stop them all after."""
    with cluster_processes(folder, workers) as cluster:
        yield cluster.master


@contextlib.contextmanager
def cluster_processes(folder: Path, workers: int = 2) -> Iterator[Cluster]:
    """:func:`standalone_cluster`, yielding its master URL and its JVMs' process ids."""
    pyspark_home = spark_home()
    assert pyspark_home is not None
    # the workers start their executors through Spark's launcher, which takes the jars of a
    # home with a RELEASE file (a distribution) and otherwise looks for a source build ("Cannot
    # find any build directories"), and needs the Scala version: a home of links to pyspark's
    # with that file, and the version read off the scala-library jar
    home = folder / "spark-home"
    home.mkdir()
    for entry in pyspark_home.iterdir():
        (home / entry.name).symlink_to(entry)
    (home / "RELEASE").write_text("pyspark's files, for a test cluster\n")
    classpath = f"{home / 'conf'}:{home / 'jars'}/*"
    scala = next((j.name.split("-")[2].rsplit(".", 2)[0] for j in (home / "jars").glob("scala-library-*.jar")), "2.12")
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_SCALA_VERSION": scala}
    port, ui = _free_port(), _free_port()
    master = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []

    def java(name: str, *args: str) -> None:
        log = open(folder / f"{name}.log", "wb")  # noqa: SIM115  # closed with the process below
        procs.append(subprocess.Popen(["java", "-Xmx512m", "-cp", classpath, *args], stdout=log,
                                      stderr=subprocess.STDOUT, env=env, cwd=folder))
        log.close()

    try:
        java("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
             "--webui-port", str(ui))
        for i in range(workers):
            work = folder / f"worker{i}"
            work.mkdir(parents=True, exist_ok=True)
            java(f"worker{i}", "org.apache.spark.deploy.worker.Worker", master, "--host", "127.0.0.1",
                 "--cores", "1", "--memory", "1g", "--webui-port", str(_free_port()), "--work-dir", str(work))
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as r:
                    state = json.load(r)
                if sum(w.get("state") == "ALIVE" for w in state.get("workers", [])) >= workers:
                    break
            except OSError:
                pass
            if time.time() > deadline or any(p.poll() is not None for p in procs):
                logs = "\n".join((folder / f).read_text(errors="replace")[-2000:] for f in os.listdir(folder)
                                 if f.endswith(".log"))
                raise RuntimeError(f"the Spark standalone cluster did not come up:\n{logs}")
            time.sleep(0.5)
        yield Cluster(master, tuple(p.pid for p in procs))
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
