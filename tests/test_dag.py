"""The Luigi DAG: local scheduler and a real luigid, run.json, re-runs that do no work,
execution knobs that do not invalidate outputs, and parameters that do."""

from __future__ import annotations

import http.server
import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from spamflow.config import load_config
from spamflow.detector import RunSettings
from spamflow.plan import plan_run
from spamflow_workflows import run_pipeline

from conftest import luigid_tasks
from warc_factory import Resp, html, write_two_months, write_warc

CONFIG = """\
workdir: out
input:
  warc: {{2026-01: [jan/*.warc.gz], 2026-02: [feb/*.warc.gz]}}
mapreduce: {{runner: {runner}}}
workers: {workers}
detectors:
  obvious: {{}}
"""


@pytest.fixture
def project(tmp_path):
    return write_two_months(tmp_path)


def _config(project: Path, plugins, runner="inline", workers=1, text=CONFIG):
    path = project / "spamflow.yaml"
    path.write_text(text.format(runner=runner, workers=workers))
    return load_config(path, plugins)


def _run(config, plugins, **kw):
    outcome = run_pipeline(config, plugins, RunSettings(runner=config.model.mapreduce.runner,
                                                        workers=config.model.workers, progress=False), **kw)
    assert outcome.ok, outcome.summary
    return json.loads(outcome.manifest.read_text())


def test_local_scheduler_run_writes_run_json(project, plugins):
    manifest = _run(_config(project, plugins), plugins)
    assert manifest["status"] == "success"
    assert list(manifest["stages"]) == ["ingest", "parse", "obvious", "report"]
    for stage in manifest["stages"].values():
        assert set(stage) >= {"outputs", "params", "counts", "seconds"}
        assert stage["ran_now"] is True
    pages = ds.dataset(manifest["stages"]["parse"]["outputs"]["pages"]).to_table().to_pylist()
    assert sorted((p["snapshot"], p["url"]) for p in pages) == sorted(
        [("2026-01", f"http://site{i % 2}.example.co.uk/jan/{i}") for i in range(3)]
        + [("2026-02", f"http://site{i % 2}.example.co.uk/feb/{i}") for i in range(2)])
    hosts = ds.dataset(manifest["stages"]["obvious"]["outputs"]["hosts"]).to_table().to_pylist()
    assert hosts == [
        {"snapshot": "2026-01", "host": "site0.example.co.uk", "number_of_pages": 2, "length_of_hostname": 19},
        {"snapshot": "2026-01", "host": "site1.example.co.uk", "number_of_pages": 1, "length_of_hostname": 19},
        {"snapshot": "2026-02", "host": "site0.example.co.uk", "number_of_pages": 1, "length_of_hostname": 19},
        {"snapshot": "2026-02", "host": "site1.example.co.uk", "number_of_pages": 1, "length_of_hostname": 19},
    ]


def test_rerun_does_no_work_and_knobs_do_not_invalidate(project, plugins):
    first = _run(_config(project, plugins), plugins)
    stamps = {n: Path(s["directory"], "stage.json").stat().st_mtime_ns for n, s in first["stages"].items()}
    again = _run(_config(project, plugins, runner="local", workers=2), plugins)
    assert {n: s["ran_now"] for n, s in again["stages"].items()} == {"ingest": False, "parse": False, "obvious": False,
                                                                 "report": False}
    assert {n: s["directory"] for n, s in again["stages"].items()} == {n: s["directory"] for n, s in first["stages"].items()}
    assert stamps == {n: Path(s["directory"], "stage.json").stat().st_mtime_ns for n, s in again["stages"].items()}


def test_changed_parameters_and_inputs_redo_only_what_depends_on_them(project, plugins):
    first = _run(_config(project, plugins), plugins)
    changed = _run(_config(project, plugins, text=CONFIG + "parse: {{max_bytes: 4096}}\n"), plugins)
    ran = {n: s["ran_now"] for n, s in changed["stages"].items()}
    assert ran == {"ingest": False, "parse": True, "obvious": True, "report": True}
    assert changed["stages"]["parse"]["directory"] != first["stages"]["parse"]["directory"]
    assert Path(first["stages"]["parse"]["directory"]).is_dir()  # the other config's output is kept
    write_warc(project / "feb" / "feb.warc.gz", [Resp("http://new.example.org/", html("n", "<p>new</p>"))])
    third = _run(_config(project, plugins), plugins)
    assert {n: s["ran_now"] for n, s in third["stages"].items()} == {"ingest": True, "parse": True, "obvious": True,
                                                                 "report": True}


def test_failing_stage_fails_the_run_and_leaves_no_partial_output(project, plugins, monkeypatch):
    from spamflow_obvious.features import ObviousFeatures

    def boom(self, ctx):
        (ctx.outdir / "half-written").write_text("x")
        raise RuntimeError("disk full")

    monkeypatch.setattr(ObviousFeatures, "run", boom)
    config = _config(project, plugins)
    outcome = run_pipeline(config, plugins, RunSettings(progress=False))
    assert not outcome.ok
    manifest = json.loads(outcome.manifest.read_text())
    assert manifest["status"] == "failed"
    assert manifest["stages"]["parse"]["complete"] is True
    assert manifest["stages"]["obvious"]["complete"] is False
    stage_root = Path(manifest["stages"]["obvious"]["directory"]).parent
    assert not [p for p in stage_root.iterdir() if p.name.startswith(("obvious-", ".obvious-"))]


def test_run_through_a_real_luigid(project, plugins, luigid):
    _config(project, plugins)
    out = subprocess.run([sys.executable, "-m", "spamflow_workflows", "run", "-c", "spamflow.yaml", "--no-progress",
                          "--scheduler-host", "127.0.0.1", "--scheduler-port", str(luigid)],
                         cwd=project, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    done = luigid_tasks(luigid, "DONE")
    assert sorted(t["params"]["stage"] for t in done.values()) == ["ingest", "obvious", "parse", "report"]
    manifest = json.loads((project / "out" / "run.json").read_text())
    assert manifest["status"] == "success" and manifest["stages"]["parse"]["counts"]["pages"] == 5


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on: bound, then closed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_with_scheduler(project: Path, port: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spamflow_workflows", "run", "-c", "spamflow.yaml", "--no-progress",
                           "--scheduler-host", "127.0.0.1", "--scheduler-port", str(port)],
                          cwd=project, capture_output=True, text=True, timeout=300)


def test_unreachable_luigid_is_one_error_line(project, plugins):
    # before: luigi retried 3 times 30 s apart and printed ~200 lines of tracebacks
    _config(project, plugins)
    port = _closed_port()
    out = _run_with_scheduler(project, port)
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        f"spamflow: error: cannot reach the luigid scheduler at 127.0.0.1:{port} (Connection refused); "
        f"start it there (luigid --port {port}), or drop scheduler.host / --scheduler-host, or pass "
        "--local-scheduler, to use Luigi's local scheduler"]
    assert out.stdout == "" and not (project / "out").exists()  # nothing ran, nothing was written


class _NotLuigid(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_error(404)

    def log_message(self, *args: object) -> None:
        pass


def test_a_server_that_is_not_luigid_is_one_error_line(project, plugins):
    _config(project, plugins)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotLuigid)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        out = _run_with_scheduler(project, port)
    finally:
        server.shutdown()
        server.server_close()
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        f"spamflow: error: cannot reach the luigid scheduler at 127.0.0.1:{port} (something answered HTTP 404, "
        f"but not as luigid); start it there (luigid --port {port}), or drop scheduler.host / --scheduler-host, "
        "or pass --local-scheduler, to use Luigi's local scheduler"]


def test_plan_signatures_ignore_execution_knobs(project, plugins):
    a = plan_run(_config(project, plugins, runner="inline", workers=1), plugins)
    b = plan_run(_config(project, plugins, runner="local", workers=4), plugins)
    assert {n: s.signature for n, s in a.items()} == {n: s.signature for n, s in b.items()}
