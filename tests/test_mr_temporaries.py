"""A MapReduce job leaves nothing in the temp folder, whether it succeeds or fails, on every
runner that runs here: mrjob's own folders, the Spark runner's ``<job>-spark`` folder and the
``--py-files`` zips (issue 42: 655 ``<job>-spark/`` and 70 ``spamflow-pyfiles-*`` folders were
left in ``/tmp`` by one demo).  Each case runs in a process of its own with ``TMPDIR`` a
folder of the test's, listed once that process has ended."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

SCRIPT = """\
import sys
from pathlib import Path
from spamflow.errors import SpamflowError
from spamflow.mr import run_job
from spamflow_links.mr_rank_walk import mass_record, node_record
from spamflow_links.mr_walks import MRWalks

folder, runner, extra = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
good = folder / "walk.txt"
good.write_text("".join(f"p\\t{line}\\n" for line in [node_record(0, 0.5, 0.5, 0.0, "1:1.0"),
                        node_record(1, 0.5, 0.5, 0.5, ""), mass_record(0.0, 0, 0.5, 2, 1000)]))
args = ["--rank", "p:0.85:0.0:2", "--steps", "2"]
run_job(MRWalks, [good], folder / "out.txt", runner=runner, args=args, runner_args=extra)
print("lines", len((folder / "out.txt").read_text().splitlines()))
bad = folder / "bad.txt"
bad.write_text("p\\t0\\tX\\tnot a record\\n")
try:
    run_job(MRWalks, [bad], folder / "bad-out.txt", runner=runner, args=args, runner_args=extra)
except SpamflowError as exc:
    print("failed:", str(exc).splitlines()[0][:80])
"""

RUNNERS = [
    pytest.param("inline", (), id="inline"),
    pytest.param("local", (), id="local", marks=pytest.mark.slow),
    pytest.param("spark", ("--spark-master", "local[2]"), id="spark-local2", marks=[
        pytest.mark.slow,
        pytest.mark.skipif(importlib.util.find_spec("pyspark") is None or not shutil.which("java"),
                           reason="needs pyspark (pip install -e '.[test]') and a Java runtime")]),
]


@pytest.mark.parametrize(("runner", "extra"), RUNNERS)
def test_a_job_leaves_nothing_in_the_temp_folder_whether_it_succeeds_or_fails(tmp_path, runner, extra):
    temp, work = tmp_path / "temp", tmp_path / "work"
    temp.mkdir()
    work.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(work), runner, *extra], env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "lines 3" in done.stdout and "failed: MapReduce job MRWalks failed" in done.stdout, done.stdout
    assert sorted(p.name for p in temp.iterdir()) == []
    assert sorted(p.name for p in work.iterdir()) == ["bad.txt", "out.txt", "walk.txt"]
