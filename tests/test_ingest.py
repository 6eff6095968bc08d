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


def _derived_warc(path: Path, kind: str, *, warcinfo_name: str | None, container: str | None = None) -> None:
    """A small WET (``conversion`` records, text) or WAT (``metadata`` records, JSON) file as
    Common Crawl writes them: a warcinfo record naming the file, then one record per page."""
    from io import BytesIO

    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        if warcinfo_name is not None:
            writer.write_record(writer.create_warcinfo_record(warcinfo_name, {"software": "test"}))
        for i in range(3):
            url = f"https://site{i}.example.org/"
            if kind == "WET":
                body, rec_type, ctype = f"page {i} as text".encode(), "conversion", "text/plain"
            else:
                meta = {"Envelope": {"WARC-Header-Metadata": {"WARC-Target-URI": url}}}
                if container:
                    meta["Container"] = {"Filename": container, "Offset": str(1000 * i)}
                body, rec_type, ctype = json.dumps(meta).encode(), "metadata", "application/json"
            record = writer.create_warc_record(url, rec_type, payload=BytesIO(body), length=len(body),
                                               warc_content_type=ctype, warc_headers_dict={
                                                   "WARC-Date": "2024-05-18T01:58:10Z",
                                                   "WARC-Refers-To": f"<urn:uuid:0000000{i}-aaaa>"})
            writer.write_record(record)


def test_wet_and_wat_files_are_said_to_hold_no_html_naming_the_warc_they_came_from(tmp_path, capsys):
    """Issue 39 item 3: WET/WAT input made 0 pages and exited 0 without a word.  Each such file
    is now a counted bad input (``bad_wet``, ``bad_wat``) saying what it is and which WARC to
    give instead (as the file names it); when nothing else is left the run fails saying so."""
    from spamflow.parse.derived_files import derived_file
    from spamflow_workflows.cli import main

    wet, wat, bare = tmp_path / "x.warc.wet.gz", tmp_path / "x.warc.wat.gz", tmp_path / "bare.wet.gz"
    _derived_warc(wet, "WET", warcinfo_name="CC-MAIN-1-00007.warc.wet.gz")
    _derived_warc(wat, "WAT", warcinfo_name="whatever.gz", container="CC-MAIN-1-00007.warc.gz")
    _derived_warc(bare, "WET", warcinfo_name=None)
    page = tmp_path / "real.warc.gz"
    write_warc(page, [Resp("http://x.example.com/", html("t", "x"), date="2026-01-05T00:00:00Z")])
    fields = tmp_path / "log.warc.gz"  # a crawler's log: metadata records of warc-fields, not a WAT file
    with open(fields, "wb") as fh:
        from io import BytesIO

        from warcio.warcwriter import WARCWriter

        writer = WARCWriter(fh, gzip=True)
        body = b"outlink: http://x.example.com/a\r\n"
        writer.write_record(writer.create_warc_record("http://x.example.com/", "metadata", payload=BytesIO(body),
                                                      length=len(body), warc_content_type="application/warc-fields"))
    assert [derived_file(p) and (derived_file(p).kind, derived_file(p).source)
            for p in (wet, wat, bare, page, fields)] == [
        ("WET", "CC-MAIN-1-00007.warc.gz"), ("WAT", "CC-MAIN-1-00007.warc.gz"), ("WET", None), None, None]

    rows, result = _ingest(tmp_path, [(wet, None), (wat, None), (bare, "s"), (page, None)])
    assert [r["path"] for r in rows] == [str(page)]
    assert {k: v for k, v in result.counts.items() if k.startswith("bad_")} == {
        "bad_not_warc": 0, "bad_wet": 2, "bad_wat": 1}
    reasons = {b["file"]: b["reason"] for b in result.bad_records}
    assert reasons[str(wet)].startswith("a WET file (text extracted from a WARC): no HTML; parse the WARC it "
                                        "came from, CC-MAIN-1-00007.warc.gz (its warcinfo's WARC-Filename")
    assert "CC-MAIN-1-00007.warc.gz (its Container.Filename)" in reasons[str(wat)]
    assert "the file does not name it" in reasons[str(bare)]
    (tmp_path / "strict").mkdir()
    with pytest.raises(BadInputError, match=r"x\.warc\.wet\.gz at offset 0: a WET file"):
        _ingest(tmp_path / "strict", [(wet, None), (page, None)], strict=True)

    config = tmp_path / "wet.yaml"  # only WET and WAT: the run fails (exit 1) saying why
    config.write_text(f"workdir: run\ninput: {{warc: ['{wet}', '{wat}']}}\ndetectors: {{obvious: {{}}}}\n")
    assert main(["run", "-c", str(config), "--no-progress", "--local-scheduler"]) == 1
    err = capsys.readouterr().err
    failed = [line for line in err.splitlines() if line.startswith("spamflow: stage 'ingest' failed: ")]
    assert len(failed) == 1 and "no WARC file of captures to parse" in failed[0], err
    assert f"{wet} is a WET file" in failed[0] and f"{wat} is a WAT file" in failed[0], err


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
