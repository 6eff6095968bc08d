"""Web archives as they are: ARC files, WARCs gzipped as one stream, brotli and zstd bodies,
and wrong Content-Lengths in uncompressed WARCs written by other tools.  Each through the
real parse stage (and ingest), on the shared real samples or on files the test writes."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import brotli
import pyarrow.parquet as pq
import pytest
import zstandard
from warcio.archiveiterator import ArchiveIterator

from spamflow.parse.warc_file import parse_warc_file

from conftest import ingest_and_parse, shared_data
from warc_factory import Resp, html, warc_bytes, write_warc


def _parse_file(tmp_path: Path, path: Path):
    out = tmp_path / f"{path.name}.parquet"
    result = parse_warc_file(path, "s", out, max_bytes=1_000_000)
    return pq.read_table(out).to_pylist(), result


# --- ARC -------------------------------------------------------------------------------

def _arc_record(url: str, ip: str, date: str, content_type: str, block: bytes) -> bytes:
    """One ARC v1 record: the header line, then ``block`` (ARC 1.0 spec), then a newline."""
    return f"{url} {ip} {date} {content_type} {len(block)}\n".encode() + block + b"\n"


def _http(body: bytes, content_type: str = "text/html") -> bytes:
    return b"HTTP/1.0 200 OK\r\nContent-Type: " + content_type.encode() + b"\r\n\r\n" + body


def _arc_records() -> list[bytes]:
    filedesc = b"1 0 spamflow test\nURL IP-address Archive-date Content-type Archive-length\n"
    return [
        _arc_record("filedesc://test.arc", "0.0.0.0", "20050301120000", "text/plain", filedesc),
        _arc_record("http://old.example.com/", "10.1.2.3", "20050301120001", "text/html",
                    _http(html("Old home", '<p>nineteen ninety</p><a href="/b.html">b</a>'))),
        _arc_record("http://old.example.com/logo.gif", "10.1.2.3", "20050301120002", "image/gif",
                    _http(b"GIF89a", "image/gif")),
        b"this line is no ARC header\nand the record after it is lost\n",
        _arc_record("http://old.example.com/b.html", "10.1.2.4", "20050301120003", "text/html",
                    _http(html("Bee", "<p>second page</p>"))),
    ]


@pytest.mark.parametrize("compressed", [False, True], ids=["arc", "arc.gz"])
def test_hand_built_arc_gives_pages_like_warc_and_counts_its_bad_record(tmp_path, compressed):
    records = _arc_records()
    offsets = [sum(len(gzip.compress(r, mtime=0)) if compressed else len(r) for r in records[:i])
               for i in range(len(records))]
    data = b"".join(gzip.compress(r, mtime=0) if compressed else r for r in records)
    path = tmp_path / ("old.arc.gz" if compressed else "old.arc")
    path.write_bytes(data)
    rows, ingested, parsed = ingest_and_parse(tmp_path, [path])
    assert ingested.counts["files"] == 1 and ingested.counts["bad_not_warc"] == 0
    assert {json.loads(line)["snapshot"] for line in (tmp_path / "ingest" / "warcs.jsonl").read_text().splitlines()} \
        == {"2005-03"}  # from the filedesc record's date
    rows.sort(key=lambda r: r["warc_offset"])
    assert [(r["url"], r["ip"], r["fetch_time"], r["status"], r["title"], r["warc_offset"]) for r in rows] == [
        ("http://old.example.com/", "10.1.2.3", datetime(2005, 3, 1, 12, 0, 1, tzinfo=UTC), 200, "Old home",
         offsets[1]),
        ("http://old.example.com/b.html", "10.1.2.4", datetime(2005, 3, 1, 12, 0, 3, tzinfo=UTC), 200, "Bee",
         offsets[4]),
    ]
    assert rows[0]["words"] == ["nineteen", "ninety", "b"]
    assert rows[0]["links"] == [{"url": "http://old.example.com/b.html", "anchor": "b", "nofollow": False}]
    assert rows[0]["record_id"] == f"<urn:x-arc:{path.name}#{offsets[1]}>"
    assert parsed.counts["pages"] == 2 and parsed.counts["skipped_non_html"] == 1
    assert parsed.counts["bad_unreadable"] == 1
    [bad] = parsed.bad_records
    assert (bad["file"], bad["offset"], bad["kind"]) == (str(path), offsets[3], "unreadable")


def test_arc_record_ids_are_the_same_in_two_reads(tmp_path):
    path = tmp_path / "old.arc"
    path.write_bytes(b"".join(_arc_records()))
    first, _ = _parse_file(tmp_path, path)
    again, _ = _parse_file(tmp_path, path)
    assert len(first) == 2 and [r["doc_id"] for r in first] == [r["doc_id"] for r in again]


def _numbered_arc(i: int) -> bytes:
    return _arc_record(f"http://o.example.com/{i}", "10.0.0.1", f"2005030112000{i}", "text/html",
                       _http(html(f"T{i}", "<p>" + " ".join(f"w{i}x{j}" for j in range(30)) + "</p>")))


@pytest.mark.parametrize("delta", [-100, 100], ids=["too-short", "too-long"])
@pytest.mark.parametrize("compressed", [False, True], ids=["arc", "arc.gz"])
def test_wrong_arc_length_is_counted_and_the_records_after_it_kept(tmp_path, delta, compressed):
    records = [_arc_records()[0]] + [_numbered_arc(i) for i in range(4)]
    header, rest = records[2].split(b"\n", 1)
    fields = header.split(b" ")
    declared = int(fields[-1]) + delta
    records[2] = b" ".join(fields[:-1] + [str(declared).encode()]) + b"\n" + rest
    offsets = [sum(len(gzip.compress(r, mtime=0)) if compressed else len(r) for r in records[:i])
               for i in range(len(records))]
    path = tmp_path / ("bad.arc.gz" if compressed else "bad.arc")
    path.write_bytes(b"".join(gzip.compress(r, mtime=0) if compressed else r for r in records))
    rows, result = _parse_file(tmp_path, path)
    [bad] = result.bad_records
    assert (bad["offset"], bad["kind"], bad["file"]) == (offsets[2], "wrong_length", str(path))
    assert ("too short" if delta < 0 else "too long") in bad["reason"]
    assert [r["url"] for r in rows] == [f"http://o.example.com/{i}" for i in range(4)]
    assert [r["record_id"] for r in rows] == [f"<urn:x-arc:{path.name}#{o}>" for o in offsets[1:]]
    for i in (0, 2, 3):
        assert rows[i]["words"] == [f"w{i}x{j}" for j in range(30)] and not rows[i]["truncated"]
    if delta < 0:  # the declared bytes of the block, worked out by hand: HTTP header, then body
        kept = rest[:declared].split(b"\r\n\r\n", 1)[1]
        assert rows[1]["words"] == kept.split(b"<p>")[1].decode().split() and rows[1]["truncated"]
        assert 0 < len(rows[1]["words"]) < 30
    else:
        assert rows[1]["words"] == [f"w1x{j}" for j in range(30)] and not rows[1]["truncated"]


def test_pywb_example_arc_is_the_example_com_page(tmp_path):
    arc = shared_data("warc-samples", "pywb-example.arc.gz")
    rows, _, parsed = ingest_and_parse(tmp_path, [arc])
    [page] = rows
    # the ARC header line, read by eye: http://example.com/ 93.184.216.119 20140216050221 text/html 1591
    assert (page["url"], page["ip"], page["fetch_time"]) == (
        "http://example.com/", "93.184.216.119", datetime(2014, 2, 16, 5, 2, 21, tzinfo=UTC))
    assert page["status"] == 200 and page["title"] == "Example Domain" and page["html_bytes"] == 1270
    assert page["words"][:6] == ["example", "domain", "this", "domain", "is", "established"]
    assert parsed.counts["pages"] == 1 and not parsed.bad_records


# --- one gzip stream ---------------------------------------------------------------------

def _site() -> list[Resp]:
    return [Resp(f"http://s.example.com/{i}", html(f"T{i}", f"<p>page {i} words</p>")) for i in range(5)] + [
        Resp("http://s.example.com/robots.txt", b"User-agent: *\n", content_type="text/plain")]


def test_warc_gzipped_as_one_stream_reads_like_the_uncompressed_file(tmp_path):
    records = _site()
    plain, offsets = warc_bytes(records, gzip=False)
    one = tmp_path / "one.warc.gz"
    one.write_bytes(gzip.compress(plain))
    rows, ingested, parsed = ingest_and_parse(tmp_path, [one])
    assert ingested.counts["files"] == 1
    rows.sort(key=lambda r: r["warc_offset"])
    assert [(r["url"], r["words"], r["warc_file"], r["warc_offset"]) for r in rows] == [
        (f"http://s.example.com/{i}", ["page", str(i), "words"], str(one), offsets[i]) for i in range(5)]
    assert parsed.counts["pages"] == 5 and parsed.counts["skipped_non_html"] == 1 and not parsed.bad_records


def test_arc_gzipped_as_one_stream_reads_like_the_uncompressed_arc(tmp_path):
    plain = b"".join(_arc_records())
    path = tmp_path / "one.arc.gz"
    path.write_bytes(gzip.compress(plain))
    rows, result = _parse_file(tmp_path, path)
    hand = plain.index(b"http://old.example.com/b.html")  # offsets are in the decompressed stream
    assert [(r["url"], r["warc_offset"]) for r in rows] == [("http://old.example.com/", len(_arc_records()[0])),
                                                            ("http://old.example.com/b.html", hand)]
    assert [b["kind"] for b in result.bad_records] == ["unreadable"]


def test_cut_one_stream_gzip_keeps_the_records_before_and_names_the_file(tmp_path):
    plain, offsets = warc_bytes(_site(), gzip=False)
    whole = gzip.compress(plain)
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    rows, result = _parse_file(tmp_path, cut)
    assert len(rows) >= 1 and [r["warc_offset"] for r in rows] == offsets[:len(rows)]
    bad = [b for b in result.bad_records if "gzipped as one stream" in b["reason"]]
    assert len(bad) == 1 and bad[0]["file"] == str(cut) and "cut short" in bad[0]["reason"]


def test_data_gov_uk_gzipped_as_one_stream_gives_the_same_pages(tmp_path):
    warc = shared_data("warc-samples", "ukwa-data.gov.uk-2014-a.warc.gz")
    one = tmp_path / "one.warc.gz"
    one.write_bytes(gzip.compress(gzip.decompress(warc.read_bytes())))
    per_record, _ = _parse_file(tmp_path, warc)
    streamed, result = _parse_file(tmp_path, one)
    assert len(per_record) == 36 and not result.bad_records
    assert [(r["url"], r["words"], r["links"]) for r in streamed] == [(r["url"], r["words"], r["links"])
                                                                      for r in per_record]


# --- Content-Encoding ---------------------------------------------------------------------

def test_brotli_zstd_gzip_bodies_are_decoded_and_an_unknown_encoding_is_counted(tmp_path):
    body = html("Packed", "<p>" + " ".join(f"word{i}" for i in range(50)) + "</p>")
    encodings = {"br": brotli.compress(body), "zstd": zstandard.ZstdCompressor().compress(body),
                 "gzip": gzip.compress(body), "compress": b"\x1f\x9d\x90not really lzw"}
    records = [Resp(f"http://e.example.com/{name}", data) for name, data in encodings.items()]
    plain, offsets = warc_bytes(records, gzip=False)
    # add the Content-Encoding header to each record's HTTP header (and fix Content-Length)
    out = b""
    for (name, _), start, end in zip(encodings.items(), offsets, offsets[1:] + [len(plain)]):
        record = plain[start:end].replace(b"HTTP/1.1 200 OK\r\n",
                                          b"HTTP/1.1 200 OK\r\nContent-Encoding: " + name.encode() + b"\r\n", 1)
        old = int(re.search(rb"Content-Length: (\d+)", record).group(1))
        record = record.replace(f"Content-Length: {old}".encode(),
                                f"Content-Length: {old + len(name) + 20}".encode(), 1)
        out += gzip.compress(record, mtime=0)
    path = tmp_path / "enc.warc.gz"
    path.write_bytes(out)
    rows, result = _parse_file(tmp_path, path)
    expected = [f"word{i}" for i in range(50)]
    assert {r["url"].rsplit("/", 1)[1]: r["words"] for r in rows} == {"br": expected, "zstd": expected,
                                                                      "gzip": expected}
    assert all(r["html_bytes"] == len(body) for r in rows)
    [bad] = result.bad_records
    assert bad["kind"] == "undecoded_encoding" and "'compress'" in bad["reason"] and bad["file"] == str(path)
    assert result.counts["pages"] == 3 and result.counts["bad_undecoded_encoding"] == 1


def test_ukwa_brotli_sample_is_decoded(tmp_path):
    warc = shared_data("warc-samples", "ukwa-transfer-compression-brotli.warc.gz")
    with open(warc, "rb") as fh:  # the body decoded by hand, independently of warcio's decoders
        for record in ArchiveIterator(fh):
            if record.rec_type == "response":
                assert record.http_headers.get_header("Content-Encoding") == "br"
                by_hand = brotli.decompress(record.raw_stream.read())
    rows, result = _parse_file(tmp_path, warc)
    [page] = rows
    assert not result.bad_records and page["html_bytes"] == len(by_hand)
    assert page["title"] == "Simple page" and b"<title>Simple page</title>" in by_hand
    assert page["words"][:3] == ["simple", "page", "extremely"]


# --- wrong Content-Length in an uncompressed WARC written by another tool ----------------------

def test_wrong_lengths_in_uncompressed_heritrix_warc_are_counted_and_nothing_else_lost(tmp_path):
    warc = shared_data("warc-samples", "ukwa-data.gov.uk-2014-a.warc.gz")
    plain = gzip.decompress(warc.read_bytes())
    good = tmp_path / "good.warc"
    good.write_bytes(plain)
    expected, base = _parse_file(tmp_path, good)
    assert len(expected) == 36 and not base.bad_records
    html_offsets = sorted(r["warc_offset"] for r in expected)
    short_at, long_at = html_offsets[3], html_offsets[10]

    def set_length(data: bytes, at: int, delta: int) -> bytes:
        found = re.compile(rb"Content-Length: (\d+)").search(data, at)
        new = f"Content-Length: {int(found.group(1)) + delta}".encode()
        return data[:found.start()] + new + data[found.end():]

    bad = set_length(set_length(plain, long_at, 5000), short_at, -200)  # later edit first: offsets before stay
    shift = len(bad) - len(plain)  # the short record's header may have lost a digit
    path = tmp_path / "bad.warc"
    path.write_bytes(bad)
    rows, result = _parse_file(tmp_path, path)
    assert result.counts["bad_wrong_length"] == 2 and result.counts["records"] == 190
    wrong = sorted(b["offset"] for b in result.bad_records)
    assert wrong == [short_at, long_at + shift]
    assert [r["url"] for r in rows] == [r["url"] for r in expected]
    assert [r["truncated"] for r in rows].count(True) == 1
    same = [(r["url"], r["words"]) for r in rows if r["warc_offset"] not in (short_at,)]
    assert same == [(r["url"], r["words"]) for r in expected if r["warc_offset"] != short_at]


# --- one real run over all of it -----------------------------------------------------------

def test_spamflow_run_over_archives_of_every_kind(tmp_path):
    samples = shared_data("warc-samples")
    for name in ("ukwa-data.gov.uk-2014-a.warc.gz", "ukwa-data.gov.uk-2014-b-revisits.warc.gz",
                 "pywb-example.arc.gz", "ukwa-transfer-compression-brotli.warc.gz"):
        (tmp_path / name).write_bytes((samples / name).read_bytes())
    one = tmp_path / "one-stream.warc.gz"
    plain, _ = warc_bytes(_site(), gzip=False)
    one.write_bytes(gzip.compress(plain))
    write_warc(tmp_path / "fine.warc.gz", [Resp("http://f.example.com/", html("F", "<p>fine</p>"))])
    (tmp_path / "c.yaml").write_text("workdir: out\ninput: {warc: ['*.warc.gz', '*.arc.gz']}\n")
    run = subprocess.run([sys.executable, "-m", "spamflow_workflows", "run", "-c", "c.yaml", "--no-progress"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    manifest = json.loads((tmp_path / "out" / "run.json").read_text())
    ingest, parse = manifest["stages"]["ingest"]["counts"], manifest["stages"]["parse"]["counts"]
    assert ingest["files"] == 6 and ingest["bad_not_warc"] == 0
    # 36 + 7 data.gov.uk pages, 29 revisits of them by digest, 1 ARC, 1 brotli, 5 one-stream, 1 fine
    assert parse["revisit_pages"] == 29 and parse.get("bad_unresolved_revisit", 0) == 0
    assert parse["pages"] == 36 + 7 + 29 + 1 + 1 + 5 + 1
    assert manifest["stages"]["parse"]["bad_records"] == []
