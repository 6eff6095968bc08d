"""Ingest: snapshot labels from config or WARC-Date, and files that are not WARC."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from spamflow.detector import RunSettings, StageContext, StageOutputs
from spamflow.errors import BadInputError
from spamflow.stages.ingest import IngestParams, IngestStage, WarcFile, read_warc_list

from warc_factory import Resp, html, write_warc


def _ingest(tmp_path, files, strict=False):
    out = tmp_path / "out"
    out.mkdir()
    params = IngestParams(files=tuple(WarcFile(path=str(p), bytes=p.stat().st_size, mtime_ns=0, snapshot=label)
                                      for p, label in files))
    result = IngestStage().run(StageContext(params=params, inputs={}, outdir=out,
                                            settings=RunSettings(strict=strict)))
    return read_warc_list(out / result.outputs["warcs"]), result


def test_snapshot_from_the_first_warc_date_unless_the_config_names_one(tmp_path):
    a, b = tmp_path / "a.warc.gz", tmp_path / "b.warc"
    write_warc(a, [Resp("http://x.example.com/", html("t", "x"), date="2025-12-31T23:59:59Z"),
                   Resp("http://x.example.com/2", html("t", "y"), date="2026-01-01T00:00:01Z")])
    write_warc(b, [Resp("http://x.example.com/", html("t", "x"), date="2026-03-02T10:00:00Z")], gzip=False)
    rows, result = _ingest(tmp_path, [(a, None), (b, "crawl-7")])
    assert [(r["path"], r["snapshot"]) for r in rows] == [(str(a), "2025-12"), (str(b), "crawl-7")]
    assert result.counts == {"files": 2, "bytes": a.stat().st_size + b.stat().st_size, "snapshots": 2,
                             "bad_not_warc": 0}


def test_a_file_that_is_not_warc_is_reported_or_with_strict_an_error(tmp_path):
    good, junk = tmp_path / "good.warc.gz", tmp_path / "notes.warc.gz"
    write_warc(good, [Resp("http://x.example.com/", html("t", "x"))])
    junk.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
    rows, result = _ingest(tmp_path, [(good, None), (junk, None)])
    assert [r["path"] for r in rows] == [str(good)]
    assert result.bad_records == [{"file": str(junk), "offset": 0, "kind": "not_warc",
                                   "reason": "no readable WARC record with a WARC-Date at its start"}]
    (tmp_path / "strict").mkdir()
    with pytest.raises(BadInputError, match="notes.warc.gz at offset 0"):
        _ingest(tmp_path / "strict", [(good, None), (junk, None)], strict=True)


def test_cli_strict_run_fails_naming_file_and_offset(tmp_path):
    write_warc(tmp_path / "a.warc.gz", [Resp(f"http://x.example.com/{i}", html("t", "<p>x</p>")) for i in range(3)])
    data = (tmp_path / "a.warc.gz").read_bytes()
    (tmp_path / "a.warc.gz").write_bytes(data[:-25])  # cut the last record short
    (tmp_path / "c.yaml").write_text("workdir: out\ninput: {warc: ['*.warc.gz']}\n")
    lenient = subprocess.run([sys.executable, "-m", "spamflow_workflows", "run", "-c", "c.yaml", "--no-progress"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert lenient.returncode == 0, lenient.stderr
    manifest = json.loads((tmp_path / "out" / "run.json").read_text())
    bad = manifest["stages"]["parse"]["bad_records"]
    assert len(bad) == 1 and bad[0]["file"] == str(tmp_path / "a.warc.gz") and bad[0]["offset"] > 0
    strict = subprocess.run([sys.executable, "-m", "spamflow_workflows", "run", "-c", "c.yaml", "--no-progress",
                             "--strict", "--workdir", "strict-out"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300)
    assert strict.returncode == 1
    assert f"a.warc.gz at offset {bad[0]['offset']}" in strict.stderr
    failed = json.loads((tmp_path / "strict-out" / "run.json").read_text())
    assert failed["status"] == "failed"
    assert failed["stages"]["parse"]["error"].startswith(f"{tmp_path / 'a.warc.gz'} at offset {bad[0]['offset']}: cut_short")
    assert "Traceback" not in strict.stderr  # a bad-input error is a message, not a crash


def test_stage_outputs_name_missing_outputs():
    outputs = StageOutputs("parse", Path("/x"), {"pages": Path("/x/pages")}, {})
    with pytest.raises(KeyError, match="stage 'parse' has no output 'hosts'; it has \\['pages'\\]"):
        outputs["hosts"]


@pytest.mark.parametrize("remote", [False, True])
def test_demo_warc_files_are_recorded_where_they_are_published(tmp_path, remote):
    """Issue 42 item 3: under a remote workdir the demo's (or crawl's) WARC files are recorded by
    their URL in the bucket, which every machine reads, not by the driver's cache path; under a
    local workdir by their local path, as before."""
    from spamflow.storage import mirror_dir

    root = mirror_dir("s3://runs/w", tmp_path / "cache") if remote else tmp_path / "w"
    warc = root / "stages" / "demo-1" / "warc" / "2026-01" / "a.warc.gz"
    warc.parent.mkdir(parents=True)
    write_warc(warc, [Resp("http://x.example.com/", html("t", "x"), date="2026-01-01T00:00:01Z")])
    demo = StageOutputs("demo", root / "stages" / "demo-1", {"warc": root / "stages" / "demo-1" / "warc"}, {})
    out = tmp_path / "out"
    out.mkdir()
    result = IngestStage().run(StageContext(params=IngestParams(from_demo=True), inputs={"demo": demo}, outdir=out,
                                            settings=RunSettings()))
    rows = read_warc_list(out / result.outputs["warcs"])
    expected = "s3://runs/w/stages/demo-1/warc/2026-01/a.warc.gz" if remote else str(warc)
    assert rows == [{"path": expected, "snapshot": "2026-01", "bytes": warc.stat().st_size}]
