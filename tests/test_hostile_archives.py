"""Issue 36's "also try": archives built to hurt the reader itself, beyond single bad pages.

* a header line with no end (50 MB of one line, in ARC and WARC): warcio joins its buffers
  one by one, so one such line cost ~50 s of CPU; now it costs what a bad record costs;
* a gzip member that inflates a thousandfold (one ARC record of 400 MB of zeros, 0.4 MB
  gzipped): checking where the record ends inflated it at once (2.9 GB for 2 GB); now in
  steps of 1 MB;
* a reason quoting 50 MB of input: escaped whole before it was cut (23 s);
* both parse engines (in process and the mapreduce job) give the same table and counts
  on all of these together, with a cut record at the end of a one-stream gzip WARC.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from spamflow.detector import RunSettings, StageContext, StageOutputs
from spamflow.errors import MAX_REASON_CHARS, plain_reason
from spamflow.parse.warc_file import parse_warc_file
from spamflow.stages.parse import ParseParams, ParseStage

from warc_factory import Resp, html, warc_bytes

LONG_LINE = 50_000_000
FILEDESC = b"1 0 spamflow test\nURL IP-address Archive-date Content-type Archive-length\n"


def _arc_record(url: str, block: bytes, content_type: str = "text/html", length: int | None = None) -> bytes:
    declared = len(block) if length is None else length
    return f"{url} 10.0.0.1 20050301120001 {content_type} {declared}\n".encode() + block + b"\n"


def _http(body: bytes, extra: bytes = b"") -> bytes:
    return b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n" + extra + b"\r\n" + body


def _good_arc(i: int) -> bytes:
    return _arc_record(f"http://ok.example.com/{i}", _http(html(f"page {i}", f"<p>words of page {i}</p>")))


def _filedesc() -> bytes:
    return _arc_record("filedesc://test.arc", FILEDESC, "text/plain")


def _long_line_arc(path: Path) -> Path:
    path.write_bytes(_filedesc() + _good_arc(1) + b"http://bad.example.com/" + b"A" * LONG_LINE + b"\n" + _good_arc(2))
    return path


def _long_line_warc(path: Path) -> Path:
    first, _ = warc_bytes([Resp("http://ok.example.com/1", html("one", "<p>one</p>"))], gzip=False)
    last, _ = warc_bytes([Resp("http://ok.example.com/2", html("two", "<p>two</p>"))], gzip=False)
    path.write_bytes(first + b"WARC/1.1\r\nWARC-Type: response\r\nX-Junk: " + b"A" * LONG_LINE + b"\r\n\r\n" + last)
    return path


def _inflating_member_arc(path: Path, zeros: int) -> Path:
    """Per-record gzip ARC whose middle member holds ``zeros`` zero bytes (deflate: ~1000:1)."""
    deflate = zlib.compressobj(6, zlib.DEFLATED, 31)
    member = deflate.compress(f"http://big.example.com/ 10.0.0.1 20050301120001 text/html {zeros}\n".encode()
                              + _http(b""))
    step = b"\0" * 10_000_000
    for _ in range(zeros // len(step)):
        member += deflate.compress(step)
    member += deflate.compress(b"\n") + deflate.flush()
    path.write_bytes(gzip.compress(_filedesc()) + gzip.compress(_good_arc(1)) + member + gzip.compress(_good_arc(2)))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("build", [_long_line_arc, _long_line_warc], ids=["arc", "warc"])
def test_a_header_line_without_end_costs_what_a_bad_record_costs(tmp_path, build):
    path = build(tmp_path / ("long.arc" if build is _long_line_arc else "long.warc"))
    started = time.process_time()
    result = parse_warc_file(path, "s", tmp_path / "out.parquet", max_bytes=1_000_000)
    assert time.process_time() - started < 10.0  # a budget, not a speed test: it took ~50 s whole
    urls = sorted(r["url"] for r in ds.dataset(tmp_path / "out.parquet").to_table().to_pylist())
    assert urls == ["http://ok.example.com/1", "http://ok.example.com/2"]
    assert result.counts["bad_unreadable"] == 1
    assert len(result.bad_records[0]["reason"]) < MAX_REASON_CHARS + 100


@pytest.mark.slow
def test_a_member_that_inflates_a_thousandfold_is_checked_in_bounded_memory(tmp_path):
    """Run in a child process, so its peak resident size is its own: the peak of its memory
    map (VmHWM, Linux), not ``ru_maxrss``, which keeps the forking parent's peak across exec."""
    if not Path("/proc/self/status").is_file():
        pytest.skip("reads the peak resident size from /proc (Linux)")
    path = _inflating_member_arc(tmp_path / "bomb.arc.gz", 400_000_000)
    assert path.stat().st_size < 1_000_000  # one read of 1 MB holds the whole member
    script = (
        "import json\nfrom pathlib import Path\n"
        "from spamflow.parse.warc_file import parse_warc_file\n"
        f"r = parse_warc_file(Path({str(path)!r}), 's', Path({str(tmp_path / 'out.parquet')!r}), max_bytes=1_000_000)\n"
        "hwm = next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM:'))\n"
        "print(json.dumps({'counts': dict(r.counts), 'bad': r.bad_records, 'rss_mb': hwm // 1024}))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    out = json.loads(done.stdout)
    assert out["rss_mb"] < 300, out["rss_mb"]  # the member alone is 400 MB inflated
    assert out["counts"]["pages"] == 3 and out["counts"]["bad_truncated"] == 1
    # the record's real end is found: the page after it is read from the next member
    wrong = [b for b in out["bad"] if b["kind"] == "wrong_length"]
    assert len(wrong) == 1 and f"offset {path.stat().st_size - len(gzip.compress(_good_arc(2)))}" in wrong[0]["reason"]


def _escape_all_then_cut(text: str, limit: int) -> str:
    """The definition: every character escaped, then whole escapes kept up to ``limit``."""
    pieces = [c if " " <= c <= "~" else c.encode("unicode_escape").decode("ascii") for c in text]
    if sum(map(len, pieces)) <= limit:
        return "".join(pieces)
    shown, width = [], 0
    for piece in pieces:
        if width + len(piece) > limit:
            break
        shown.append(piece)
        width += len(piece)
    return f"{''.join(shown)}... ({len(text) - len(shown)} more characters)"


@pytest.mark.parametrize("text", ["plain", "a\x00b\nc", "é" * 300, "x" * 199 + "\x01", "\x00" * 1000,
                                  "A" * 5000, "ab\x00" * 100])
def test_plain_reason_is_the_escaped_text_cut_at_a_whole_escape(text):
    assert plain_reason(text) == _escape_all_then_cut(text, MAX_REASON_CHARS)


def test_plain_reason_of_fifty_megabytes_escapes_only_what_it_shows():
    text = "\x00" * LONG_LINE
    started = time.process_time()
    reason = plain_reason(text)
    assert time.process_time() - started < 1.0  # a budget: it took ~20 s
    assert reason == "\\x00" * (MAX_REASON_CHARS // 4) + f"... ({LONG_LINE - MAX_REASON_CHARS // 4} more characters)"


def _hostile_folder(folder: Path) -> list[Path]:
    folder.mkdir()
    paths = [_long_line_arc(folder / "long.arc"), _long_line_warc(folder / "long.warc"),
             _inflating_member_arc(folder / "bomb.arc.gz", 50_000_000)]
    huge = folder / "huge.arc"  # an ARC length of 10^15: the next header is found, the record kept
    huge.write_bytes(_filedesc() + _good_arc(1) + _arc_record("http://bad.example.com/", _http(b"<p>x</p>"),
                                                               length=10**15) + _good_arc(2))
    one_stream = folder / "cut.warc.gz"  # one gzip stream, the last record cut inside its headers
    records, _ = warc_bytes([Resp(f"http://os.example.com/{i}", html(str(i), f"<p>{i}</p>")) for i in range(3)],
                            gzip=False)
    one_stream.write_bytes(gzip.compress(records[:-60]))
    return paths + [huge, one_stream]


@pytest.mark.slow
def test_both_parse_engines_agree_on_hostile_archives(tmp_path):
    paths = _hostile_folder(tmp_path / "in")
    ingest = tmp_path / "ingest"
    ingest.mkdir()
    (ingest / "warcs.jsonl").write_text("".join(
        json.dumps({"path": str(p), "snapshot": "s", "bytes": p.stat().st_size}) + "\n" for p in paths))
    upstream = StageOutputs("ingest", ingest, {"warcs": ingest / "warcs.jsonl"}, {})
    results, tables = {}, {}
    for engine in ("memory", "mapreduce"):
        out = tmp_path / engine
        out.mkdir()
        results[engine] = ParseStage().run(StageContext(ParseParams(engine=engine), {"ingest": upstream}, out,  # type: ignore[arg-type]
                                                        RunSettings(progress=False)))
        rows = ds.dataset(out / results[engine].outputs["pages"]).to_table().to_pylist()
        tables[engine] = sorted((r["doc_id"], r["url"], r["truncated"]) for r in rows)
    memory = results["memory"]
    assert memory.counts == results["mapreduce"].counts
    assert sorted(map(json.dumps, memory.bad_records)) == sorted(map(json.dumps, results["mapreduce"].bad_records))
    assert tables["memory"] == tables["mapreduce"]
    kinds = sorted((Path(b["file"]).name, b["kind"]) for b in memory.bad_records)
    assert ("long.arc", "unreadable") in kinds and ("long.warc", "unreadable") in kinds
    assert ("huge.arc", "wrong_length") in kinds and ("bomb.arc.gz", "truncated") in kinds
    assert ("cut.warc.gz", "cut_short") in kinds
    urls = {u for _, u, _ in tables["memory"]}
    assert {"http://ok.example.com/1", "http://ok.example.com/2", "http://big.example.com/",
            "http://bad.example.com/", "http://os.example.com/0", "http://os.example.com/1"} <= urls
