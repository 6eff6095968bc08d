"""Bad input: the run goes on, every problem is counted with file and offset, nothing is
silently lost, and --strict turns the first problem into an error."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from spamflow.errors import BadInputError
from spamflow.parse.warc_file import parse_warc_file

from warc_factory import Resp, html, warc_bytes


def _pages(n, prefix="http://a.example.com/p"):
    return [Resp(f"{prefix}{i}", html(f"t{i}", f"<p>page number {i} text</p>")) for i in range(n)]


def _run(tmp_path, data: bytes, **kw):
    warc = tmp_path / "bad.warc.gz"
    warc.write_bytes(data)
    out = tmp_path / "out.parquet"
    result = parse_warc_file(warc, "2026-01", out, max_bytes=kw.pop("max_bytes", 100_000), **kw)
    return pq.read_table(out).to_pylist(), result, str(warc)


def test_corrupt_gzip_member_in_the_middle_loses_only_that_record(tmp_path):
    data, offsets = warc_bytes(_pages(5))
    start, end = offsets[2], offsets[3]
    corrupt = bytearray(data)
    corrupt[start + 20:end - 10] = b"\x00" * (end - 10 - start - 20)  # destroy record 2's deflate data
    rows, result, name = _run(tmp_path, bytes(corrupt))
    assert [r["url"] for r in rows] == [f"http://a.example.com/p{i}" for i in (0, 1, 3, 4)]
    assert len(result.bad_records) == 1
    bad = result.bad_records[0]
    assert bad["file"] == name and bad["offset"] == offsets[2] and bad["kind"] == "unreadable"
    assert result.counts["bad_unreadable"] == 1


def test_file_cut_short_keeps_everything_before(tmp_path):
    data, offsets = warc_bytes(_pages(4))
    rows, result, name = _run(tmp_path, data[: offsets[3] + 40])
    assert [r["url"] for r in rows] == [f"http://a.example.com/p{i}" for i in range(3)]
    assert [(b["file"], b["offset"]) for b in result.bad_records] == [(name, offsets[3])]


def test_uncompressed_warc_with_garbage_resyncs(tmp_path):
    data, offsets = warc_bytes(_pages(3), gzip=False)
    broken = data[: offsets[1]] + b"GARBAGE NOT A WARC HEADER\r\n\r\n" + data[offsets[1]:]
    rows, result, _ = _run(tmp_path, broken)
    assert [r["url"] for r in rows] == [f"http://a.example.com/p{i}" for i in range(3)]
    assert [b["offset"] for b in result.bad_records] == [offsets[1]]


def test_huge_empty_and_undecodable_pages_are_kept_and_counted(tmp_path):
    huge = html("huge", "<p>" + "word " * 5000 + "</p>")
    bad_utf8 = b"<html><body><p>caf\xe9 ok</p></body></html>"
    data, offsets = warc_bytes([
        Resp("http://a.example.com/huge", huge),
        Resp("http://a.example.com/empty", b""),
        Resp("http://a.example.com/bad", bad_utf8, content_type="text/html; charset=utf-8"),
    ])
    rows, result, name = _run(tmp_path, data, max_bytes=2048)
    assert [r["url"] for r in rows] == ["http://a.example.com/huge", "http://a.example.com/empty", "http://a.example.com/bad"]
    assert rows[0]["truncated"] is True and rows[0]["html_bytes"] == 2048
    assert rows[1]["words"] == []
    assert rows[2]["words"] == ["caf", "ok"]  # the undecodable byte became U+FFFD, a word break
    kinds = {(b["kind"], b["offset"]) for b in result.bad_records}
    assert kinds == {("truncated", offsets[0]), ("empty", offsets[1]), ("decode_errors", offsets[2])}
    assert all(b["file"] == name for b in result.bad_records)


def test_strict_turns_the_first_problem_into_an_error_naming_file_and_offset(tmp_path):
    data, offsets = warc_bytes(_pages(3))
    with pytest.raises(BadInputError) as err:
        _run(tmp_path, data[: offsets[2] + 30], strict=True)
    assert f"bad.warc.gz at offset {offsets[2]}" in str(err.value)


def test_not_a_warc_file(tmp_path):
    rows, result, name = _run(tmp_path, b"this is just a text file\n" * 10)
    assert rows == []
    assert [(b["file"], b["offset"]) for b in result.bad_records] == [(name, 0)]


# --- inputs built to hurt (issue 36) ------------------------------------------------------

def _encoded(bodies: dict[str, tuple[str, bytes]], gzip_records: bool = True) -> bytes:
    """A WARC of one response per url, each body sent with the given Content-Encoding."""
    import gzip as gz
    import re

    records = [Resp(url, data) for url, (_, data) in bodies.items()]
    plain, offsets = warc_bytes(records, gzip=False)
    out = b""
    for (encoding, _), start, end in zip(bodies.values(), offsets, offsets[1:] + [len(plain)]):
        added = b"Content-Encoding: " + encoding.encode() + b"\r\n"
        record = plain[start:end].replace(b"HTTP/1.1 200 OK\r\n", b"HTTP/1.1 200 OK\r\n" + added, 1)
        old = int(re.search(rb"Content-Length: (\d+)", record).group(1))
        record = record.replace(f"Content-Length: {old}".encode(), f"Content-Length: {old + len(added)}".encode(), 1)
        out += gz.compress(record, mtime=0) if gzip_records else record
    return out


@pytest.mark.parametrize("encoding", ["br", "zstd"])
def test_a_brotli_or_zstd_bomb_stops_at_the_page_limit_and_is_counted_truncated(tmp_path, encoding):
    import tracemalloc

    import brotli
    import zstandard

    inflated = b"<html><body><p>" + b"a" * (48 << 20)  # 48 MiB from ~100 bytes
    packed = brotli.compress(inflated, quality=5) if encoding == "br" else zstandard.ZstdCompressor().compress(inflated)
    assert len(packed) < 4096
    data = _encoded({"http://a.example.com/bomb": (encoding, packed),
                     "http://a.example.com/fine": (encoding, html("fine", "<p>fine words</p>"))})
    tracemalloc.start()
    try:
        rows, result, name = _run(tmp_path, data, max_bytes=100_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"{peak / 2**20:.0f} MiB held while parsing a {len(packed)}-byte bomb"
    assert [r["url"] for r in rows] == ["http://a.example.com/bomb", "http://a.example.com/fine"]
    assert rows[0]["truncated"] is True and rows[0]["html_bytes"] == 100_000
    assert rows[1]["truncated"] is False and rows[1]["words"] == ["fine", "words"]
    assert result.counts["bad_truncated"] == 1 and result.counts["pages"] == 2


@pytest.mark.parametrize("encoding", ["br", "zstd"])
def test_bounded_decoders_give_the_whole_body_below_their_limit(encoding):
    import brotli
    import zstandard

    from spamflow.parse import content_encoding

    body = bytes(range(256)) * 4000 + b"x" * 3_000_000
    packed = brotli.compress(body) if encoding == "br" else zstandard.ZstdCompressor().compress(body)
    decoder_type = content_encoding.ENCODINGS[encoding]
    with content_encoding.output_limit(len(body)):
        whole = decoder_type()
    assert b"".join(whole.decompress(packed[i:i + 16384]) for i in range(0, len(packed), 16384)) == body
    with content_encoding.output_limit(10_000):
        capped = decoder_type()
    out = b"".join(capped.decompress(packed[i:i + 16384]) for i in range(0, len(packed), 16384))
    assert 10_000 <= len(out) <= 3 << 20 and body.startswith(out)


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_record_cut_inside_its_http_headers_at_the_end_of_the_file_is_cut_short(tmp_path, gzipped):
    import gzip as gz
    import zlib

    data, offsets = warc_bytes(_pages(2), gzip=gzipped)
    last = gz.decompress(data[offsets[1]:]) if gzipped else data[offsets[1]:]
    head = last[:last.index(b"HTTP/1.1 200 OK\r\n") + 20]  # ends inside "Content-Type: ..."
    if gzipped:  # a gzip member cut off after these bytes (flushed, no end)
        deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
        head = deflate.compress(head) + deflate.flush(zlib.Z_SYNC_FLUSH)
    rows, result, name = _run(tmp_path, data[:offsets[1]] + head)
    assert [r["url"] for r in rows] == ["http://a.example.com/p0"]
    assert [(b["kind"], b["offset"]) for b in result.bad_records] == [("cut_short", offsets[1])]
    assert "HTTP headers" in result.bad_records[0]["reason"] and result.counts["skipped_non_html"] == 0


def test_an_unreadable_reason_is_one_short_printable_line(tmp_path):
    import gzip as gz
    import random

    junk = bytes(random.Random(7).randrange(256) for _ in range(1500)).replace(b"\n", b"x")
    good, _ = warc_bytes(_pages(1))
    data = good + gz.compress(junk + b"\r\n\r\n") + good
    rows, result, _ = _run(tmp_path, data)
    assert len(rows) == 2
    [bad] = result.bad_records
    assert bad["kind"] == "unreadable" and bad["reason"].startswith("unreadable record: ArchiveLoadFailed")
    assert len(bad["reason"]) < 260 and bad["reason"].isascii() and bad["reason"].isprintable()
    assert "more characters)" in bad["reason"]


def test_a_response_without_a_target_uri_says_so(tmp_path):
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>x</p>"
    nameless = (b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Date: 2026-01-15T10:00:00Z\r\n"
                b"Content-Type: application/http; msgtype=response\r\n"
                b"Content-Length: " + str(len(block)).encode() + b"\r\n\r\n" + block + b"\r\n\r\n")
    good, offsets = warc_bytes(_pages(1), gzip=False)
    rows, result, _ = _run(tmp_path, good + nameless + good)
    assert len(rows) == 2
    [bad] = result.bad_records
    assert bad["offset"] == len(good) and "without a WARC-Target-URI header" in bad["reason"]
    assert "NoneType" not in bad["reason"]
