"""A stand-in Hadoop installation for mrjob's ``hadoop`` runner: ``$HADOOP_HOME/bin/hadoop``
(:mod:`hadoop_standin`), a streaming jar for mrjob to find, an HDFS folder, and the nodes'
Python: a virtual environment that sees this venv's installed libraries (mrjob, pyarrow,
scikit-learn, as a cluster's nodes have them installed) but not the editable install of
spamflow and its plugins, so a job's own modules come only from what it ships."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent


def node_python(folder: Path) -> Path:
    """A venv whose ``site-packages`` holds one line, this venv's ``site-packages``: a plain
    path in a .pth file adds the folder but runs none of its .pth files (so not the editable
    install's finder)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    purelib = Path(subprocess.run([str(folder / "bin" / "python"), "-c",
                                   "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    (purelib / "cluster-libraries.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return folder / "bin"


def install(root: Path) -> dict[str, str]:
    """The environment under which mrjob's ``hadoop`` runner finds and drives the stand-in."""
    home = root / "hadoop-home"
    (home / "bin").mkdir(parents=True)
    hadoop = home / "bin" / "hadoop"
    hadoop.write_text(f"#!/bin/sh\nexec {sys.executable} -I -S {HERE / 'hadoop_standin.py'} \"$@\"\n")
    hadoop.chmod(0o755)
    jar = home / "share" / "hadoop" / "tools" / "lib" / "hadoop-streaming-3.3.6.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"")  # found by name; the stand-in runs the steps itself
    (root / "hdfs").mkdir()
    nodes = node_python(root / "node-python")
    return {"HADOOP_HOME": str(home), "PATH": f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}",
            "HADOOP_STANDIN_HDFS": str(root / "hdfs"), "HADOOP_STANDIN_TASKS": str(root / "tasks"),
            "HADOOP_STANDIN_TASK_PATH": os.pathsep.join([str(nodes), "/usr/bin", "/bin"]),
            "HADOOP_STANDIN_LOG": str(root / "hadoop-calls.jsonl"),
            "HADOOP_STANDIN_SEED": os.environ.get("HADOOP_STANDIN_SEED", "1")}  # another seed: other splits, orders
