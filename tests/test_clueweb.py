"""ClueWeb09/ClueWeb12 dialects: WARC/0.18 records, day-of-year WARC-Dates, WARC-TREC-ID.

Hand-built files check each rule against hand-worked values; the real ClueWeb09 sample in
../shared/data (skipped when absent) is checked against warcio's own reading of it."""

from __future__ import annotations

import html as htmllib
import re
from datetime import UTC, datetime

import pyarrow.parquet as pq
import pytest
from warcio.archiveiterator import ArchiveIterator

from spamflow.detector import RunSettings, StageContext
from spamflow.errors import BadInputError
from spamflow.parse.revisits import resolve_revisits
from spamflow.parse.warc_dates import DAY_OF_YEAR, parse_warc_date
from spamflow.parse.warc_file import parse_warc_file
from spamflow.parse.warc_records import warc_date
from spamflow.stages.ingest import IngestParams, IngestStage, WarcFile, read_warc_list

from conftest import shared_data
from warc_factory import Resp, html, write_warc


def clueweb_record(trec_id: str, date: str, title: str, url: str, version: str = "WARC/0.18") -> bytes:
    """One response record as ClueWeb09's Nutch wrote it: WARC/0.18, CRLF WARC headers,
    LF-only HTTP headers, a WARC-TREC-ID."""
    http = b"HTTP/1.1 200 OK\nContent-Type: text/html; charset=utf-8\n\n" + html(title, "<p>x</p>")
    head = (f"{version}\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\nWARC-Date: {date}\r\n"
            f"WARC-Record-ID: <urn:uuid:{trec_id}>\r\nWARC-TREC-ID: {trec_id}\r\n"
            f"Content-Type: application/http;msgtype=response\r\nContent-Length: {len(http)}\r\n\r\n").encode()
    return head + http + b"\r\n\r\n"


@pytest.mark.parametrize(("text", "expected", "repair"), [
    # 2008 is a leap year: Jan..Sep have 274 days, so day 294 is 20 October; 05:21:46 at -07:00 is 12:21:46 UTC
    ("2008-10-294T05:21:46-0700", datetime(2008, 10, 20, 12, 21, 46, tzinfo=UTC), DAY_OF_YEAR),
    ("2009-02-041T17:05:56-0800", datetime(2009, 2, 11, 1, 5, 56, tzinfo=UTC), DAY_OF_YEAR),  # 31 + 10: 10 Feb
    ("2009-02-41T00:00:00Z", datetime(2009, 2, 10, tzinfo=UTC), DAY_OF_YEAR),  # two-digit DD past the month's end
    ("2008-10-29T05:21:46-0700", datetime(2008, 10, 29, 12, 21, 46, tzinfo=UTC), None),  # valid ISO: as written
    ("2020-08-08T17:27:41Z", datetime(2020, 8, 8, 17, 27, 41, tzinfo=UTC), None),
    ("2012-02-10T21:51:20.123456Z", datetime(2012, 2, 10, 21, 51, 20, 123456, tzinfo=UTC), None),
    ("2008-11-294T05:21:46-0700", None, None),  # day 294 is in October, not November: ambiguous, not repaired
    ("2008-10-400T05:21:46-0700", None, None),  # past the year's end
    ("2008-10-000T05:21:46-0700", None, None),
    ("yesterday", None, None),
    ("", None, None),
])
def test_warc_dates_iso_or_clueweb09_day_of_year(text, expected, repair):
    assert warc_date(text) == expected
    assert parse_warc_date(text).repair == repair


def _parse(tmp_path, path, snapshot="s", strict=False):
    out = tmp_path / "pages.parquet"
    result = parse_warc_file(path, snapshot, out, max_bytes=5_000_000, strict=strict)
    return pq.read_table(out).to_pylist(), result


def test_warc_018_records_give_trec_ids_repaired_dates_and_count_the_rest(tmp_path):
    warc = tmp_path / "clueweb09.warc"
    records = [clueweb_record("clueweb09-en0000-00-00000", "2009-01-013T17:05:56-0800", "a", "http://a.example/"),
               clueweb_record("clueweb09-en0000-00-00001", "2009-02-041T17:05:56-0800", "b", "http://b.example/"),
               clueweb_record("clueweb09-en0000-00-00002", "2009-03-041T17:05:56-0800", "c", "http://c.example/")]
    warc.write_bytes(b"".join(records))
    rows, result = _parse(tmp_path, warc)
    assert [r["trec_id"] for r in rows] == [f"clueweb09-en0000-00-0000{i}" for i in range(3)]
    assert [r["title"] for r in rows] == ["a", "b", "c"]
    assert [r["fetch_time"] for r in rows] == [datetime(2009, 1, 14, 1, 5, 56, tzinfo=UTC),
                                              datetime(2009, 2, 11, 1, 5, 56, tzinfo=UTC), None]
    assert result.counts["dates_repaired_day_of_year"] == 2
    third = len(records[0]) + len(records[1])
    assert result.bad_records == [{"file": str(warc), "offset": third, "kind": "bad_date",
                                   "reason": "WARC-Date '2009-03-041T17:05:56-0800' is not a date; fetch_time left empty"}]
    with pytest.raises(BadInputError, match=f"clueweb09.warc at offset {third}: bad_date"):
        _parse(tmp_path, warc, strict=True)


def test_reading_resumes_at_the_next_warc_018_record_after_a_broken_one(tmp_path):
    warc = tmp_path / "clueweb09.warc"
    first = clueweb_record("clueweb09-en0000-00-00000", "2009-01-13T17:05:56-0800", "a", "http://a.example/")
    junk = b"GARBAGE NOT A WARC HEADER\r\n\r\n"
    warc.write_bytes(first + junk + clueweb_record("clueweb09-en0000-00-00001", "2009-01-13T17:05:56-0800", "b",
                                                   "http://b.example/"))
    rows, result = _parse(tmp_path, warc)
    assert [r["trec_id"] for r in rows] == ["clueweb09-en0000-00-00000", "clueweb09-en0000-00-00001"]
    assert [(b["offset"], b["kind"]) for b in result.bad_records] == [(len(first), "unreadable")]


def test_clueweb12_style_warc_10_and_plain_warc_pages(tmp_path):
    warc = tmp_path / "clueweb12.warc"
    warc.write_bytes(clueweb_record("clueweb12-0000tw-00-00013", "2012-02-10T21:51:20Z", "t", "http://d.example/",
                                    version="WARC/1.0"))
    rows, result = _parse(tmp_path, warc)
    assert [(r["trec_id"], r["fetch_time"]) for r in rows] == [
        ("clueweb12-0000tw-00-00013", datetime(2012, 2, 10, 21, 51, 20, tzinfo=UTC))]
    assert not result.bad_records and "dates_repaired_day_of_year" not in result.counts
    plain = tmp_path / "plain.warc.gz"
    write_warc(plain, [Resp("http://e.example/", html("t", "x")),
                       Resp("http://e.example/2", html("t", "y"), warc_headers={"WARC-TREC-ID": "  "})])
    rows, _ = _parse(tmp_path, plain)
    assert [r["trec_id"] for r in rows] == [None, None]  # absent or blank: null


def test_a_revisit_row_carries_its_own_trec_id_not_its_originals(tmp_path):
    warc = tmp_path / "r.warc.gz"
    original = "<urn:uuid:00000000-0000-0000-0000-000000000001>"
    write_warc(warc, [
        Resp("http://e.example/", html("t", "x"), record_id=original, warc_headers={"WARC-TREC-ID": "clueweb12-a"}),
        Resp("http://e.example/", b"", kind="revisit", date="2026-02-15T10:00:00Z",
             warc_headers={"WARC-TREC-ID": "clueweb12-b", "WARC-Refers-To": original,
                           "WARC-Profile": "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"}),
    ])
    _, result = _parse(tmp_path, warc)
    out = tmp_path / "revisits.parquet"
    assert resolve_revisits(result.revisits, [tmp_path / "pages.parquet"], out).pages == 1
    assert pq.read_table(out).column("trec_id").to_pylist() == ["clueweb12-b"]


def _ingest(tmp_path, paths, strict=False):
    out = tmp_path / "ingest"
    out.mkdir(exist_ok=True)
    params = IngestParams(files=tuple(WarcFile(path=str(p), bytes=p.stat().st_size, mtime_ns=0) for p in paths))
    result = IngestStage().run(StageContext(params=params, inputs={}, outdir=out,
                                            settings=RunSettings(strict=strict)))
    return read_warc_list(out / result.outputs["warcs"]), result


def test_ingest_dates_clueweb09_files_and_keeps_undated_ones_reported(tmp_path):
    clueweb = tmp_path / "clueweb09.warc"
    clueweb.write_bytes(clueweb_record("clueweb09-en0000-00-00000", "2008-10-294T05:21:46-0700", "a", "http://a.example/"))
    undated = tmp_path / "undated.warc"
    undated.write_bytes(clueweb_record("x-1", "someday", "a", "http://a.example/")
                        + clueweb_record("x-2", "2008-13-01T00:00:00Z", "b", "http://b.example/"))
    rows, result = _ingest(tmp_path, [clueweb, undated])
    assert [(r["path"], r["snapshot"]) for r in rows] == [(str(clueweb), "2008-10"), (str(undated), "undated")]
    assert result.counts["bad_not_warc"] == 0 and result.counts["bad_undated"] == 1
    assert [(b["file"], b["kind"]) for b in result.bad_records] == [(str(undated), "undated")]
    with pytest.raises(BadInputError, match="undated.warc at offset 0: none of the first 10 WARC records"):
        _ingest(tmp_path, [undated], strict=True)


def _independent_title(payload: bytes, charset: str) -> str:
    found = re.search(rb"<title[^>]*>(.*?)</title>", payload, re.S | re.I)
    assert found is not None
    return " ".join(htmllib.unescape(found[1].decode(charset)).split())


def test_real_clueweb09_sample_against_warcio(tmp_path):
    warc = shared_data("warc-samples") / "clueweb09-ja-quirk.warc.gz"
    with open(warc, "rb") as fh:
        theirs = [(r.rec_type, r.rec_headers.get_header("WARC-Date"), r.rec_headers.get_header("WARC-TREC-ID"),
                   r.content_stream().read() if r.rec_type == "response" else None,
                   r.http_headers.get_header("Content-Type") if r.http_headers else None)
                  for r in ArchiveIterator(fh)]
    assert len(theirs) == 30 and {t[1] for t in theirs} == {"2008-10-294T05:21:46-0700"}
    rows, result = _parse(tmp_path, warc, "2008-10")
    responses = [t for t in theirs if t[0] == "response"]
    assert [r["trec_id"] for r in rows] == [t[2] for t in responses]
    assert rows[0]["trec_id"] == "clueweb09-ja0016-50-00000" and len(rows) == 29
    assert {r["fetch_time"] for r in rows} == {datetime(2008, 10, 20, 12, 21, 46, tzinfo=UTC)}
    assert result.counts["dates_repaired_day_of_year"] == 30 and not result.bad_records
    for row, (_, _, _, payload, content_type) in zip(rows, responses):
        assert content_type == "text/html; charset=EUC-JP"
        assert row["title"] == _independent_title(payload, "euc_jp")
    assert rows[0]["title"] == "ブラウニー ブリーフケース【ヘッドポーター HEADPORTER 吉田かばん】"
    listed, ingest = _ingest(tmp_path, [warc])
    assert [r["snapshot"] for r in listed] == ["2008-10"] and not ingest.bad_records
