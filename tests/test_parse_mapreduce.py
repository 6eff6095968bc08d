"""The parse stage as a map-only mrjob job (``parse.engine: mapreduce``) gives the page table,
the bad records and the counts of the in-process stage (``engine: memory``) on the inline and
local runners (and Spark ``local[2]``): over gzipped and plain WARC files with bad records, a
revisit whose original is in another file, one that has none, and files served over HTTP by a
server on 127.0.0.1 (one of them missing).  Rows are compared sorted by doc_id, every column;
the doc_ids are also checked against the records' own WARC-Record-IDs."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow.dataset as ds
import pytest
import xxhash

from spamflow.detector import RunSettings, StageContext, StageOutputs, StageResult
from spamflow.errors import BadInputError, SpamflowError
from spamflow.parse.file_job import FileJob, read_result_line
from spamflow.stages.parse import ParseParams, ParseStage

from conftest import assert_close, shared_data
from warc_factory import Resp, html, warc_bytes, warc_with_content_length

NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
GONE = "<urn:uuid:00000000-0000-0000-0000-00000000dead>"  # in no input file
MAX_BYTES = 2048


def _doc_id(record_id: str) -> int:
    return xxhash.xxh3_64_intdigest(record_id.encode()) & (2**63 - 1)


def _pages(n: int, prefix: str) -> list[Resp]:
    return [Resp(f"{prefix}{i}", html(f"title {i}", f"<p>page number {i} text</p><a href='/x{i}'>x</a>"))
            for i in range(n)]


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        """No request log: the inline runner swaps sys.stderr for a bytes buffer while the job runs."""


@pytest.fixture
def served(tmp_path):
    """A folder served over HTTP on 127.0.0.1, and its base URL."""
    root = tmp_path / "served"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _corpus(folder: Path, served: tuple[Path, str]) -> tuple[list[dict], set[str]]:
    """The ingest list (path, snapshot, bytes) of five inputs, and the record ids of the pages
    the table must hold:

    - ``a.warc.gz``: pages, a corrupt gzip member (``unreadable``), a page over ``MAX_BYTES``;
    - ``b.warc`` (plain): a record whose Content-Length is too short to reach its body
      (``wrong_length``, ``empty``), garbage between records (``unreadable``);
    - ``c.warc.gz`` (next month): a revisit of a page of ``a``, a revisit of nothing in the
      input (``unresolved_revisit``);
    - ``d.warc.gz`` over HTTP, and ``gone.warc.gz`` over HTTP, missing (``download``).
    """
    folder.mkdir()
    root, base = served
    a = _pages(4, "http://a.example.com/p") + [Resp("http://a.example.com/huge", html("huge", "word " * 2000))]
    data, offsets = warc_bytes(a)
    corrupt = bytearray(data)
    corrupt[offsets[2] + 20:offsets[3] - 10] = b"\x00" * (offsets[3] - 10 - offsets[2] - 20)
    (folder / "a.warc.gz").write_bytes(bytes(corrupt))

    b = _pages(4, "http://b.example.org/q")
    plain, b_offsets = warc_with_content_length(b, {1: 40}, gzip=False)
    plain = plain[:b_offsets[3]] + b"GARBAGE NOT A WARC HEADER\r\n\r\n" + plain[b_offsets[3]:]
    (folder / "b.warc").write_bytes(plain)

    c = [Resp(a[0].url, b"", status="304 Not Modified", content_type="", kind="revisit",
              date="2026-02-10T10:00:00Z", warc_headers={"WARC-Refers-To": a[0].record_id,
                                                         "WARC-Profile": NOT_MODIFIED}),
         Resp("http://a.example.com/gone.html", b"", status="304 Not Modified", content_type="",
              kind="revisit", date="2026-02-10T10:00:09Z",
              warc_headers={"WARC-Refers-To": GONE, "WARC-Profile": NOT_MODIFIED})]
    (folder / "c.warc.gz").write_bytes(warc_bytes(c)[0])

    d = _pages(3, "http://d.example.net/r")
    (root / "d.warc.gz").write_bytes(warc_bytes(d)[0])

    warcs = [{"path": str(folder / "a.warc.gz"), "snapshot": "2026-01"},
             {"path": str(folder / "b.warc"), "snapshot": "2026-01"},
             {"path": str(folder / "c.warc.gz"), "snapshot": "2026-02"},
             {"path": f"{base}/d.warc.gz", "snapshot": "2026-01"},
             {"path": f"{base}/gone.warc.gz", "snapshot": "2026-01"}]
    for w in warcs:
        local = Path(w["path"]) if "://" not in w["path"] else root / w["path"].rsplit("/", 1)[-1]
        w["bytes"] = local.stat().st_size if local.exists() else 1000
    pages = {r.record_id for r in a if r is not a[2]} | {r.record_id for r in b} | {c[0].record_id} | \
        {r.record_id for r in d}
    return warcs, pages


def _parse(tmp_path: Path, name: str, warcs: list[dict], engine: str, runner: str = "inline",
           runner_args: tuple[str, ...] = (), strict: bool = False) -> tuple[list[dict], StageResult, Path]:
    """The parse stage over the ingest list ``warcs``: (rows sorted by doc_id, result, its folder)."""
    ingest_dir, out = tmp_path / f"{name}-ingest", tmp_path / name
    ingest_dir.mkdir()
    out.mkdir()
    (ingest_dir / "warcs.jsonl").write_text("".join(json.dumps(w) + "\n" for w in warcs))
    upstream = StageOutputs("ingest", ingest_dir, {"warcs": ingest_dir / "warcs.jsonl"}, {})
    settings = RunSettings(runner=runner, runner_args=runner_args, strict=strict, progress=False)
    result = ParseStage().run(StageContext(ParseParams(max_bytes=MAX_BYTES, engine=engine),  # type: ignore[arg-type]
                                           {"ingest": upstream}, out, settings))
    table = ds.dataset(out / result.outputs["pages"]).to_table()
    return sorted(table.to_pylist(), key=lambda r: r["doc_id"]), result, out


def _same_stage_output(got: tuple[list[dict], StageResult, Path], want: tuple[list[dict], StageResult, Path]) -> None:
    rows, result, out = got
    want_rows, want_result, want_out = want
    assert ds.dataset(out / "pages").schema == ds.dataset(want_out / "pages").schema
    assert_close(rows, want_rows, atol=0, where="rows")
    assert sorted(p.name for p in (out / "pages").iterdir()) == sorted(p.name for p in (want_out / "pages").iterdir())
    assert result.counts == want_result.counts
    assert result.bad_records == want_result.bad_records
    assert (out / "bad_records.jsonl").read_text() == (want_out / "bad_records.jsonl").read_text()


@pytest.fixture
def corpus(tmp_path, served):
    return _corpus(tmp_path / "warc", served)


def test_memory_engine_gives_the_hand_worked_table(tmp_path, corpus):
    """The reference the job is compared with, checked against what the files hold."""
    warcs, pages = corpus
    rows, result, _ = _parse(tmp_path, "memory", warcs, "memory")
    assert sorted(r["doc_id"] for r in rows) == sorted(_doc_id(i) for i in pages)
    kinds = sorted((b["file"].rsplit("/", 1)[-1], b["kind"]) for b in result.bad_records)
    assert kinds == [("a.warc.gz", "truncated"), ("a.warc.gz", "unreadable"), ("b.warc", "empty"),
                     ("b.warc", "unreadable"), ("b.warc", "wrong_length"), ("c.warc.gz", "unresolved_revisit"),
                     ("gone.warc.gz", "download")]
    assert (result.counts["files"], result.counts["pages"], result.counts["revisit_pages"]) == (5, 4 + 4 + 1 + 3, 1)


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_mapreduce_engine_equals_the_in_process_stage(tmp_path, corpus, runner):
    warcs, _ = corpus
    memory = _parse(tmp_path, "memory", warcs, "memory")
    job = _parse(tmp_path, runner, warcs, "mapreduce", runner=runner)
    _same_stage_output(job, memory)
    assert not (job[2] / "pages" / "spool").exists()  # the remote file's spool is gone


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_strict_fails_with_the_in_process_message(tmp_path, corpus, runner):
    """The first file in input order with a bad record names it and its offset, on every engine."""
    warcs, _ = corpus
    with pytest.raises(BadInputError) as memory:
        _parse(tmp_path, "memory", warcs, "memory", strict=True)
    with pytest.raises(BadInputError) as job:
        _parse(tmp_path, runner, warcs, "mapreduce", runner=runner, strict=True)
    assert str(job.value) == str(memory.value)
    assert str(memory.value).startswith(f"{warcs[0]['path']} at offset ")


def test_strict_download_failure_names_the_url(tmp_path, corpus):
    warcs, _ = corpus
    gone = [w for w in warcs if w["path"].endswith("gone.warc.gz")]
    with pytest.raises(BadInputError, match=f"{gone[0]['path']} at offset 0: download"):
        _parse(tmp_path, "inline", gone, "mapreduce", strict=True)


def test_auto_keeps_the_local_table_in_process_on_hadoop_and_mapreduce_says_why(tmp_path, corpus):
    """Hadoop's tasks cannot write a local folder: ``auto`` parses here (no hadoop needed),
    ``mapreduce`` is a clear error before any job starts."""
    warcs, _ = corpus
    memory = _parse(tmp_path, "memory", warcs, "memory")
    _same_stage_output(_parse(tmp_path, "auto", warcs, "auto", runner="hadoop"), memory)
    with pytest.raises(SpamflowError, match="'hadoop' runner.*local folder .*storage they share"):
        _parse(tmp_path, "forced", warcs, "mapreduce", runner="hadoop")
    with pytest.raises(SpamflowError, match="'spark' runner"):
        _parse(tmp_path, "yarn", warcs, "mapreduce", runner="spark", runner_args=("--spark-master", "yarn"))


def test_real_warc_samples_give_the_same_table_inline(tmp_path):
    """The real sample files (Common Crawl, ClueWeb09, ARC, brotli bodies, the 2014 data.gov.uk
    crawl whose second file's revisits resolve against the first) on the inline runner."""
    from spamflow.stages.ingest import first_record_snapshot

    folder = shared_data("warc-samples")
    files = sorted(p for p in folder.iterdir() if p.name.endswith((".warc.gz", ".arc.gz"))
                   and not p.name.endswith((".wat.gz", ".wet.gz")))
    warcs = [{"path": str(p), "snapshot": first_record_snapshot(p) or "undated", "bytes": p.stat().st_size}
             for p in files]
    memory = _parse(tmp_path, "memory", warcs, "memory")
    assert memory[1].counts["revisit_pages"] > 0 and len(memory[0]) > 100
    _same_stage_output(_parse(tmp_path, "inline", warcs, "mapreduce"), memory)


def test_engine_is_a_config_key_outside_the_stage_identity(tmp_path, plugins):
    """``parse.engine`` is accepted in YAML and changes no signature: switching engines
    redoes nothing, since both give the same table."""
    from spamflow.config import load_config
    from spamflow.plan import plan_run

    (tmp_path / "a.warc.gz").write_bytes(warc_bytes(_pages(1, "http://a.example.com/p"))[0])
    signatures = {}
    for engine in ("", "auto", "memory", "mapreduce"):
        parse = f"parse: {{engine: {engine}}}\n" if engine else ""
        (tmp_path / "c.yaml").write_text(f"workdir: out\ninput: {{warc: ['*.warc.gz']}}\n{parse}"
                                         "detectors: {obvious: {}}\n")
        plan = plan_run(load_config(tmp_path / "c.yaml", plugins), plugins)
        assert plan["parse"].params["engine"] == (engine or "auto")
        signatures[engine] = {name: stage.signature for name, stage in plan.items()}
    assert all(s == signatures[""] for s in signatures.values())


def test_hadoop_streaming_mapper_reads_nline_input(tmp_path, corpus):
    """As Hadoop streaming runs it with NLineInputFormat: ``<offset>\\t<job JSON>`` on stdin of
    the job script's mapper, one result line out, the part file written."""
    warcs, _ = corpus
    job = FileJob(warcs[1]["path"], "2026-01", 7, str(tmp_path / "out"), MAX_BYTES, False)
    (tmp_path / "out").mkdir()
    script = Path(importlib.util.find_spec("spamflow.parse.mr_parse").origin)  # type: ignore[union-attr, arg-type]
    done = subprocess.run([sys.executable, str(script), "--step-num=0", "--mapper"], input=f"123\t{job.to_json()}\n",
                          capture_output=True, text=True, check=True, timeout=300, env=dict(os.environ))
    from spamflow.parse.mr_parse import NLINE_INPUT_FORMAT, MRParse

    assert [MRParse(args=["-r", r]).hadoop_input_format() for r in ("hadoop", "emr", "spark", "local", "inline")] \
        == [NLINE_INPUT_FORMAT, NLINE_INPUT_FORMAT, None, None, None]
    [line] = done.stdout.splitlines()
    part, result = read_result_line(line)
    assert part == 7 and not isinstance(result, str)
    assert result.counts["pages"] == 4 and (tmp_path / "out" / "part-00007.parquet").exists()
    assert sorted(b["kind"] for b in result.bad_records) == ["empty", "unreadable", "wrong_length"]


def test_job_module_imports_no_config_plugins_or_stages():
    code = ("import sys, spamflow.parse.mr_parse; "
            "print([m for m in sys.modules if m.startswith(('spamflow.config', 'spamflow.plugins', "
            "'spamflow.stages', 'spamflow.detector', 'spamflow_', 'luigi'))])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "[]"


@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None or not shutil.which("java"),
                    reason="needs pyspark (pip install -e '.[test]') and a Java runtime")
@pytest.mark.slow
def test_spark_local_mode_equals_the_in_process_stage(tmp_path, corpus, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")  # keep Spark on loopback
    warcs, _ = corpus
    memory = _parse(tmp_path, "memory", warcs, "memory")
    _same_stage_output(_parse(tmp_path, "spark", warcs, "auto", runner="spark",
                              runner_args=("--spark-master", "local[2]")), memory)


@pytest.mark.parametrize("n", [1, 5, 256, 257, 600])
def test_listing_holds_every_file_once_in_order_over_at_most_256_files(tmp_path, n):
    """One input file per WARC file while there are few (a task each on Spark too), then
    contiguous runs of lines: every job exactly once, in input order."""
    from spamflow.stages.parse import LISTING_FILES, _write_listing

    jobs = [FileJob(f"/data/f{i}.warc.gz", "2026-01", i, "/out/pages", MAX_BYTES, False) for i in range(n)]
    folder = tmp_path / str(n)
    folder.mkdir()
    paths = _write_listing(jobs, folder)
    assert len(paths) == n if n <= LISTING_FILES else len(paths) <= LISTING_FILES
    assert [FileJob.from_json(line) for p in paths for line in p.read_text().splitlines()] == jobs
