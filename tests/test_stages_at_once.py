"""``stages_at_once``: stages that need nothing from each other run at the same time, each in
its own process, with the same outputs as one at a time, and a failing stage's message still
reaches run.json from its child process."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from spamflow.config import load_config
from spamflow.detector import RunSettings
from spamflow_hss.detector import HSSDetector
from spamflow_obvious.features import ObviousDetector
from spamflow_workflows import run_pipeline

from warc_factory import write_two_months

CONFIG = """\
workdir: {workdir}
input:
  warc: {{2026-01: [jan/*.warc.gz], 2026-02: [feb/*.warc.gz]}}
mapreduce: {{runner: inline}}
stages_at_once: {stages_at_once}
detectors:
  obvious: {{}}
  hss: {{}}
"""

MEET_WITHIN = 120.0
"""Seconds a stage waits for the other to start; only a failing run waits this long."""


@pytest.fixture
def project(tmp_path):
    return write_two_months(tmp_path)


def _run(project: Path, plugins, workdir: str, stages_at_once: int):
    path = project / f"{workdir}.yaml"
    path.write_text(CONFIG.format(workdir=workdir, stages_at_once=stages_at_once))
    config = load_config(path, plugins)
    settings = RunSettings(runner="inline", progress=False, stages_at_once=config.model.stages_at_once)
    return run_pipeline(config, plugins, settings)


def _meeting(project: Path, name: str, other: str, original):
    """A stage's run that first says it started, then waits for ``other`` to start: it can only
    finish if both run at the same time."""

    def run(self, ctx):
        (project / f"started-{name}").touch()
        deadline = time.monotonic() + MEET_WITHIN
        while not (project / f"started-{other}").exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} ran alone: {other} did not start within {MEET_WITHIN:.0f} s")
            time.sleep(0.05)
        return original(self, ctx)

    return run


def _table(manifest: dict, stage: str, output: str = "hosts") -> list[dict]:
    rows = ds.dataset(manifest["stages"][stage]["outputs"][output]).to_table().to_pylist()
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def test_independent_stages_run_together_with_the_same_outputs(project, plugins, monkeypatch):
    alone = _run(project, plugins, "alone", 1)
    assert alone.ok, alone.summary
    monkeypatch.setattr(ObviousDetector, "run", _meeting(project, "obvious", "hss", ObviousDetector.run))
    monkeypatch.setattr(HSSDetector, "run", _meeting(project, "hss", "obvious", HSSDetector.run))
    together = _run(project, plugins, "together", 2)
    assert together.ok, together.summary  # one at a time, the first of the two would wait in vain
    one, two = (json.loads(outcome.manifest.read_text()) for outcome in (alone, together))
    assert two["status"] == "success" and set(two["stages"]) == set(one["stages"])
    for stage, output in [("obvious", "hosts"), ("hss", "hosts"), ("parse", "pages")]:
        assert _table(two, stage, output) == _table(one, stage, output), stage
    # each stage's CPU time is its own process's, not the build's
    assert all(s["cpu_seconds"] is not None and s["cpu_seconds"] >= 0 for s in two["stages"].values())


def test_a_failing_stage_in_a_child_process_names_its_error(project, plugins, monkeypatch):
    def boom(self, ctx):
        raise RuntimeError("disk full")

    monkeypatch.setattr(ObviousDetector, "run", boom)
    outcome = _run(project, plugins, "failing", 2)
    assert not outcome.ok
    assert outcome.errors == {"obvious": "RuntimeError: disk full"}
    manifest = json.loads(outcome.manifest.read_text())
    assert manifest["status"] == "failed"
    assert manifest["stages"]["obvious"]["error"] == "RuntimeError: disk full"
    assert manifest["stages"]["hss"]["complete"] is True  # the other branch still ran


def test_flag_and_config_key(project, plugins, tmp_path):
    from spamflow.cli import build_parser
    from spamflow.runs import StageRunner

    path = project / "c.yaml"
    path.write_text(CONFIG.format(workdir="w", stages_at_once=3))
    config = load_config(path, plugins)
    args = build_parser().parse_args(["run", "-c", str(path)])
    assert StageRunner(run_pipeline, args).settings(config).stages_at_once == 3
    args = build_parser().parse_args(["run", "-c", str(path), "--stages-at-once", "2"])
    assert StageRunner(run_pipeline, args).settings(config).stages_at_once == 2
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "-c", str(path), "--stages-at-once", "0"])
    path.write_text(CONFIG.format(workdir="w", stages_at_once=0))
    with pytest.raises(Exception, match="stages_at_once"):
        load_config(path, plugins)
