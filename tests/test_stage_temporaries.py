"""Issue 36 item 9: a run killed mid-stage leaves ``stages/.<stage>-<sig>.tmp-<pid>`` with
partial parts; redoing a stage removes the temporaries of processes no longer running on this
host, and keeps a live process's (another run may be writing them) and a crawl's resumable
``.crawl-<sig>.work``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from spamflow.config import load_config
from spamflow.detector import RunSettings
from spamflow.plan import plan_run
from spamflow.stage_runner import pid_alive, remove_dead_temporaries
from spamflow_workflows import run_pipeline

from warc_factory import write_two_months


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not pid_alive(child.pid)
    return child.pid


@pytest.fixture
def sleeper():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield child.pid
    child.kill()
    child.wait()


def _leftover(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "pages").mkdir()
    (folder / "pages" / "part-00000.parquet").write_bytes(b"PAR1 half a part")
    return folder


def test_redoing_a_stage_removes_a_dead_runs_temporaries_and_keeps_a_live_ones(tmp_path, plugins, sleeper):
    project = write_two_months(tmp_path)
    (project / "c.yaml").write_text("workdir: out\ninput: {warc: {2026-01: [jan/*.warc.gz]}}\n"
                                    "detectors: {obvious: {}}\n")
    config = load_config(project / "c.yaml", plugins)
    stages = {name: Path(stage.directory) for name, stage in plan_run(config, plugins).items()}
    folder = stages["parse"].parent
    dead = _leftover(folder / f".{stages['parse'].name}.tmp-{_dead_pid()}", "parse")
    dead_other = _leftover(folder / f".quilt-0123abcd.tmp-{_dead_pid()}", "quilt")
    dead_fetch = _leftover(folder / f".{stages['obvious'].name}.fetch-{_dead_pid()}", "obvious")
    dead_file = folder / f".shingles.tsv.tmp-{_dead_pid()}"
    dead_file.write_text("half")
    live = _leftover(folder / f".{stages['parse'].name}.tmp-{sleeper}", "parse")
    work = _leftover(folder / ".crawl-0123abcd.work", "crawl")

    outcome = run_pipeline(config, plugins, RunSettings(progress=False))
    assert outcome.ok, outcome.summary
    assert json.loads(outcome.manifest.read_text())["stages"]["parse"]["ran_now"]
    assert not dead.exists() and not dead_other.exists() and not dead_fetch.exists() and not dead_file.exists()
    assert (live / "pages" / "part-00000.parquet").is_file()
    assert (work / "pages" / "part-00000.parquet").is_file()


def test_remove_dead_temporaries_reads_only_its_own_names(tmp_path, sleeper):
    for name in (f".parse-ab.tmp-{sleeper}", "parse-ab", ".parse-ab.tmp-x", "notes.tmp-1", ".crawl-ab.work"):
        (tmp_path / name).mkdir()
    (tmp_path / f".demo-ab.tmp-{_dead_pid()}").mkdir()
    assert [n.startswith(".demo-ab.tmp-") for n in remove_dead_temporaries(tmp_path)] == [True]
    assert len(list(tmp_path.iterdir())) == 5
    assert remove_dead_temporaries(tmp_path / "none") == []
