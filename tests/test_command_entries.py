"""Commands that work outside the DAG (``spamflow quilt-sweep``, ``spamflow hss similar``) add
their entry to run.json, and a later command that runs the DAG keeps it: ``quilt-sweep`` then
``hss similar`` then ``report`` gives a run.json with both entries and a report with both
sections (docs/report.md).  Before, each command rewrote run.json from its own plan."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from spamflow_quilt.params import QuiltParams
from spamflow_quilt.sweep import sweep_points

from spamflow.errors import ConfigError

from warc_factory import Resp, html, write_warc

PASSAGES = [f"passage {i} " + " ".join(f"w{i}x{j}" for j in range(12)) for i in range(6)]


def _spamflow(cwd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spamflow_workflows", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture
def small_run(tmp_path):
    """Sources on their own domains and three pages stitched from them; quilt and hss selected."""
    pages = [(f"http://src{i}.example.org/", PASSAGES[i] + f" own words of source {i}") for i in range(6)]
    pages += [(f"http://quilt.example.net/{q}", " ".join(PASSAGES[(q + j) % 6] for j in range(4))) for q in range(3)]
    write_warc(tmp_path / "a.warc.gz", [Resp(url, html("t", f"<p>{text}</p>")) for url, text in pages])
    (tmp_path / "c.yaml").write_text("workdir: out\ninput: {warc: ['*.warc.gz'], snapshot: s1}\n"
                                     "detectors:\n  quilt: {foreign: domain}\n  hss: {}\n")
    return tmp_path


def _stages(run) -> dict:
    return json.loads((run / "out" / "run.json").read_text())["stages"]


@pytest.mark.slow
def test_each_command_keeps_what_the_others_added_to_run_json(small_run):
    out = _spamflow(small_run, "quilt-sweep", "-c", "c.yaml", "--pivot", "3,5,4,0.5")
    assert out.returncode == 0, out.stderr
    sweep = _stages(small_run)["quilt_sweep"]
    assert sweep["command"] == "quilt-sweep" and sweep["ran_now"] is True

    out = _spamflow(small_run, "hss", "similar", "-c", "c.yaml", "http://src0.example.org/")
    assert out.returncode == 0, out.stderr
    stages = _stages(small_run)
    assert {"quilt_sweep", "hss_similar"} <= set(stages)  # hss similar ran the DAG up to hss: the sweep stays
    assert stages["quilt_sweep"]["outputs"] == sweep["outputs"] and stages["quilt_sweep"]["ran_now"] is False

    out = _spamflow(small_run, "report", "-c", "c.yaml")
    assert out.returncode == 0, out.stderr
    stages = _stages(small_run)
    assert {"quilt_sweep", "hss_similar"} <= set(stages)
    page = (small_run / "out" / "report" / "index.html").read_text(encoding="utf-8")
    assert 'id="quilt-sweep"' in page and 'id="hss-similar"' in page


@pytest.mark.slow
def test_an_entry_made_from_other_stages_is_dropped(small_run):
    """Changing parse redoes it: the sweep made from the old page table no longer belongs to the run."""
    assert _spamflow(small_run, "quilt-sweep", "-c", "c.yaml", "--pivot", "3,5,4,0.5").returncode == 0
    text = (small_run / "c.yaml").read_text()
    (small_run / "c.yaml").write_text(text + "parse: {max_bytes: 1000000}\n")
    out = _spamflow(small_run, "run", "-c", "c.yaml", "--no-progress")
    assert out.returncode == 0, out.stderr
    assert "quilt_sweep" not in _stages(small_run)


def test_sweep_points_are_validated():
    pivot = QuiltParams(k=5, m=50, c=4, theta=0.5)
    with pytest.raises(ConfigError, match=r"--theta 7\.0: .*less than or equal to 1"):
        sweep_points(pivot, {"theta": [0.4, 7.0]})
    with pytest.raises(ConfigError, match=r"--k 0: .*greater than or equal to 1"):
        sweep_points(pivot, {"k": [0]})


def test_the_command_refuses_a_bad_point_before_running_anything(small_run):
    out = _spamflow(small_run, "quilt-sweep", "-c", "c.yaml", "--theta", "0.5,7.0")
    assert out.returncode == 2
    assert "--theta 7.0" in out.stderr and "Traceback" not in out.stderr
    assert not (small_run / "out" / "run.json").exists()
    out = _spamflow(small_run, "quilt-sweep", "-c", "c.yaml", "--pivot", "5,50,4")
    assert out.returncode == 2 and "--pivot 5,50,4: give four values" in out.stderr


def test_the_core_command_line_without_the_workflows_says_where_to_start(small_run):
    """``python -m spamflow.cli`` builds the command line but has no DAG: it validates, and a
    command that runs stages says to use ``spamflow`` / ``python -m spamflow_workflows``."""
    out = subprocess.run([sys.executable, "-m", "spamflow.cli", "validate", "-c", "c.yaml"], cwd=small_run,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    out = subprocess.run([sys.executable, "-m", "spamflow.cli", "run", "-c", "c.yaml"], cwd=small_run,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 1 and "python -m spamflow_workflows" in out.stderr and "Traceback" not in out.stderr
    assert not (small_run / "out").exists()
