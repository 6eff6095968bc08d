"""A run driven by a real luigid whose luigid is killed mid-run: the run ends within seconds
with one line that says so (not Luigi's 3 x 30 s of retries with a traceback each), the
stages finished before are kept, and the next run, with luigid back, resumes from them."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import running_luigid
from warc_factory import write_two_months

CONFIG = """\
workdir: out
input:
  warc: {2026-01: [jan/*.warc.gz], 2026-02: [feb/*.warc.gz]}
mapreduce: {runner: inline}
detectors:
  obvious: {}
  quilt: {engine: mapreduce}  # the jobs (inline): long enough to kill luigid while quilt runs
"""


def _run(project: Path, port: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "spamflow_workflows", "run", "-c", str(project / "spamflow.yaml"),
                             "--no-progress", "--scheduler-host", "127.0.0.1", "--scheduler-port", str(port)],
                            cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_a_dead_luigid_ends_the_run_in_one_line_and_the_next_run_resumes(tmp_path):
    (tmp_path / "project").mkdir()
    project = write_two_months(tmp_path / "project")
    (project / "spamflow.yaml").write_text(CONFIG)
    stages = project / "out" / "stages"
    (tmp_path / "luigid1").mkdir()
    (tmp_path / "luigid2").mkdir()
    with running_luigid(tmp_path / "luigid1") as port:
        run = _run(project, port)
        deadline = time.time() + 300
        while not list(stages.glob(".quilt-*")):  # the quilt stage is running (its temporary folder)
            assert run.poll() is None and time.time() < deadline, "the run ended before quilt started"
            time.sleep(0.05)
    out, err = run.communicate(timeout=600)  # luigid is gone (running_luigid stopped it)
    ended = time.time()
    assert run.returncode != 0
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if "stopped answering mid-run" in line]
    assert len(lines) == 1 and f"127.0.0.1:{port}" in lines[0], err
    assert "Retrying attempt" not in err
    finished = {p.parent.name.rsplit("-", 1)[0] for p in stages.glob("*/stage.json")}
    assert {"ingest", "parse"} <= finished
    quilt = list(stages.glob("quilt-*/stage.json"))
    print(f"luigid killed while quilt ran; the run ended {ended - quilt[0].stat().st_mtime:.1f} s after quilt "
          "finished" if quilt else "quilt did not finish")
    with running_luigid(tmp_path / "luigid2") as port2:
        again = _run(project, port2)
        out, err = again.communicate(timeout=600)
    assert again.returncode == 0, out + err
    manifest = json.loads((project / "out" / "run.json").read_text())
    ran = {name for name, stage in manifest["stages"].items() if stage.get("ran_now")}
    assert manifest["status"] == "success" and ran == set(manifest["stages"]) - finished
