"""Ingest looks at the start of a remote file, not all of it: an unlabelled file's snapshot
comes from its first 64 KiB, then its first MiB (the whole file only when that does not settle it), and a file the
config labels is not read at all.  Served by a real HTTP server on 127.0.0.1 that honours
Range requests, as S3 and Common Crawl's servers do, and counts the bytes it sends."""

from __future__ import annotations

import functools
import os
import random
import threading
from collections import Counter
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from spamflow.detector import RunSettings, StageContext
from spamflow.inputs import FIRST_HEAD_BYTES, HEAD_BYTES, remote_identity
from spamflow.stages.ingest import IngestParams, IngestStage, WarcFile

from warc_factory import Resp, html, write_warc

pytest.importorskip("fsspec", reason="fsspec reads http:// inputs")


class RangeHandler(SimpleHTTPRequestHandler):
    """Serves ``bytes=a-b`` ranges (206) and counts the body bytes sent per path."""

    sent: Counter[str]

    def send_head(self):  # type: ignore[no-untyped-def]
        spec = self.headers.get("Range", "")
        path = self.translate_path(self.path)
        if not spec.startswith("bytes=") or not os.path.isfile(path):
            return super().send_head()
        size = os.path.getsize(path)
        first, _, last = spec[6:].partition("-")
        start, end = int(first or 0), min(int(last) if last else size - 1, size - 1)
        with open(path, "rb") as fh:
            fh.seek(start)
            self._body = fh.read(end - start + 1)
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(self._body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        return _Body(self._body)

    def copyfile(self, source, outputfile):  # type: ignore[no-untyped-def]
        data = source.read()
        self.sent[self.path] += len(data)
        outputfile.write(data)

    def log_message(self, *args):  # type: ignore[no-untyped-def]
        pass


class _Body:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self) -> bytes:
        return self.data

    def close(self) -> None:
        pass


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    sent: Counter[str] = Counter()
    handler = type("H", (RangeHandler,), {"sent": sent})
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}", sent
    server.shutdown()
    server.server_close()


def _noise(n: int, seed: int) -> str:
    r = random.Random(seed)  # incompressible text, so the gzip file is as large as asked
    return "".join(r.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(n))


def _ingest(tmp_path: Path, files: list[WarcFile]) -> dict:
    out = tmp_path / "ingest"
    out.mkdir()
    result = IngestStage().run(StageContext(params=IngestParams(files=tuple(files)), inputs={}, outdir=out,
                                            settings=RunSettings()))
    return {"rows": (out / "warcs.jsonl").read_text(), "counts": result.counts, "bad": result.bad_records,
            "left": sorted(p.name for p in out.rglob("*") if p.name != "warcs.jsonl")}


def _file(url: str, snapshot: str | None = None) -> WarcFile:
    return WarcFile(path=url, mtime_ns=0, snapshot=snapshot, **{k: v for k, v in remote_identity(url).items()})


def test_an_unlabelled_remote_file_is_dated_from_its_first_64_kib(tmp_path, served):
    """Its first records are short (as a Common Crawl file's warcinfo record is): the first
    64 KiB date it, not the first MiB (nor all of it)."""
    root, base, sent = served
    pages = [Resp(f"http://site{i}.example/", html(f"page {i}", _noise(20_000, i)), date="2026-03-04T05:06:07Z")
             for i in range(300)]
    write_warc(root / "big.warc.gz", pages)
    size = (root / "big.warc.gz").stat().st_size
    assert size > 3 * HEAD_BYTES
    result = _ingest(tmp_path, [_file(f"{base}/big.warc.gz")])
    assert '"snapshot": "2026-03"' in result["rows"] and f'"bytes": {size}' in result["rows"]
    assert 0 < sent["/big.warc.gz"] <= 2 * FIRST_HEAD_BYTES, "ingest downloaded more than the first head"
    assert result["left"] == [], "the spool file is removed"


def test_a_labelled_remote_file_is_not_read(tmp_path, served):
    root, base, sent = served
    write_warc(root / "a.warc.gz", [Resp("http://a.example/", html("a", _noise(50_000, 1)))])
    result = _ingest(tmp_path, [_file(f"{base}/a.warc.gz", snapshot="jan")])
    assert '"snapshot": "jan"' in result["rows"] and result["bad"] == []
    assert sent["/a.warc.gz"] == 0


def test_a_first_record_longer_than_the_head_falls_back_to_the_whole_file(tmp_path, served):
    root, base, sent = served
    write_warc(root / "long.warc.gz", [Resp("http://long.example/", html("long", _noise(3 * HEAD_BYTES, 2)),
                                            date="2026-05-06T07:08:09Z")])
    result = _ingest(tmp_path, [_file(f"{base}/long.warc.gz")])
    assert '"snapshot": "2026-05"' in result["rows"] and result["bad"] == []


def test_a_remote_file_that_is_not_warc_is_counted_with_its_url(tmp_path, served):
    root, base, _ = served
    (root / "junk.warc.gz").write_bytes(b"<html>not a warc</html>" * 100_000)
    result = _ingest(tmp_path, [_file(f"{base}/junk.warc.gz")])
    assert result["counts"]["bad_not_warc"] == 1 and result["counts"]["files"] == 0
    assert result["bad"][0]["file"] == f"{base}/junk.warc.gz"


class PairedRangeHandler(RangeHandler):
    """Holds each ranged GET until a second one is in flight (at most 10 s), and records
    whether any two were in flight at once."""

    barrier: threading.Barrier
    paired: list[bool]

    def send_head(self):  # type: ignore[no-untyped-def]
        if self.command == "GET" and self.headers.get("Range"):
            try:
                self.barrier.wait()
                self.paired.append(True)
            except threading.BrokenBarrierError:
                self.barrier.reset()
        return super().send_head()


def test_unlabelled_remote_files_are_read_several_at_a_time(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    sent: Counter[str] = Counter()
    paired: list[bool] = []
    handler = type("H", (PairedRangeHandler,), {"sent": sent, "paired": paired,
                                                "barrier": threading.Barrier(2, timeout=10)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        for i in range(4):
            write_warc(root / f"f{i}.warc.gz", [Resp(f"http://s{i}.example/", html("t", _noise(90_000, i)),
                                                     date=f"2026-0{i + 1}-02T03:04:05Z")])
        files = [_file(f"{base}/f{i}.warc.gz") for i in range(4)]
        result = _ingest(tmp_path, files)
    finally:
        server.shutdown()
        server.server_close()
    assert [line.split('"snapshot": "')[1][:7] for line in result["rows"].splitlines()] == \
        ["2026-01", "2026-02", "2026-03", "2026-04"]
    assert paired, "every file was read alone, one after another"
