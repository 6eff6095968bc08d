"""A record whose Content-Length is wrong: counted with file and offset, its page cut at its
real end (``truncated`` where the body was cut short), no page holding another record's
bytes, and the records after it read, in uncompressed and gzip-per-record files."""

from __future__ import annotations

import gzip as gz
import json

import pyarrow.parquet as pq
import pytest

from spamflow.detector import RunSettings, StageContext
from spamflow.errors import BadInputError
from spamflow.parse.warc_file import parse_warc_file
from spamflow.stages.parse import ParseParams, ParseStage

from warc_factory import Resp, block_length, html, warc_with_content_length

N_WORDS = 100


def _records(n: int = 4) -> list[Resp]:
    return [Resp(f"http://a.example.com/p{i}", _body(i)) for i in range(n)]


def _body(i: int) -> bytes:
    return html(f"t{i}", "<p>" + " ".join(f"w{i}x{j}" for j in range(N_WORDS)) + "</p>")


def _words_of(html_bytes: bytes) -> list[str]:
    """The words of a (possibly cut) page of ``_body``, worked out from its bytes alone."""
    return html_bytes.split(b"<p>", 1)[1].split(b"</p>")[0].decode().split()


def _parse(tmp_path, data: bytes, gzip: bool, **kw):
    warc = tmp_path / ("in.warc.gz" if gzip else "in.warc")
    warc.write_bytes(data)
    out = tmp_path / "out.parquet"
    result = parse_warc_file(warc, "2026-01", out, max_bytes=kw.pop("max_bytes", 100_000), **kw)
    return pq.read_table(out).to_pylist(), result, str(warc)


def _http_header_len(records: list[Resp], i: int) -> int:
    return block_length(records, i) - len(records[i].body)


@pytest.mark.parametrize("gzip", [False, True], ids=["warc", "warc.gz"])
def test_content_length_a_third_of_the_block_keeps_the_third_marked_truncated(tmp_path, gzip):
    records = _records()
    declared = block_length(records, 1) // 3
    data, offsets = warc_with_content_length(records, {1: declared}, gzip=gzip)
    rows, result, name = _parse(tmp_path, data, gzip)
    assert [r["url"] for r in rows] == [f"http://a.example.com/p{i}" for i in range(4)]
    kept = _body(1)[:declared - _http_header_len(records, 1)]
    assert rows[1]["words"] == _words_of(kept)
    assert 0 < len(rows[1]["words"]) < N_WORDS // 2
    assert rows[1]["html_bytes"] == len(kept)
    assert [r["truncated"] for r in rows] == [False, True, False, False]
    for i in (0, 2, 3):
        assert rows[i]["words"] == [f"w{i}x{j}" for j in range(N_WORDS)]
    assert [(b["file"], b["offset"], b["kind"]) for b in result.bad_records] == [(name, offsets[1], "wrong_length")]
    assert "too short" in result.bad_records[0]["reason"]
    assert result.counts["bad_wrong_length"] == 1 and result.counts["pages"] == 4
    assert result.counts["records"] == 4 and "bad_unreadable" not in result.counts


@pytest.mark.parametrize("gzip", [False, True], ids=["warc", "warc.gz"])
def test_content_length_too_long_takes_nothing_of_the_next_record(tmp_path, gzip):
    records = _records()
    real = block_length(records, 1)
    data, offsets = warc_with_content_length(records, {1: real * 3 // 2}, gzip=gzip)
    rows, result, name = _parse(tmp_path, data, gzip)
    assert [r["url"] for r in rows] == [f"http://a.example.com/p{i}" for i in range(4)]
    for i in range(4):
        assert rows[i]["words"] == [f"w{i}x{j}" for j in range(N_WORDS)]
        assert "WARC" not in rows[i]["noise"] and "warc" not in rows[i]["words"]
    assert rows[1]["html_bytes"] == len(_body(1))  # the whole body, not a byte of the next record
    assert [r["truncated"] for r in rows] == [False] * 4
    assert [(b["file"], b["offset"], b["kind"]) for b in result.bad_records] == [(name, offsets[1], "wrong_length")]
    assert "too long" in result.bad_records[0]["reason"]
    assert result.counts["bad_wrong_length"] == 1 and result.counts["pages"] == 4


def test_content_length_past_the_end_of_the_file_still_recovers_the_last_record(tmp_path):
    records = _records(3)
    data, offsets = warc_with_content_length(records, {1: 100_000}, gzip=False)
    rows, result, name = _parse(tmp_path, data, gzip=False)
    assert [r["words"] for r in rows] == [[f"w{i}x{j}" for j in range(N_WORDS)] for i in range(3)]
    assert [(b["offset"], b["kind"]) for b in result.bad_records] == [(offsets[1], "wrong_length")]


def test_last_record_too_short_is_reported_once(tmp_path):
    records = _records(3)
    declared = block_length(records, 2) // 2
    data, offsets = warc_with_content_length(records, {2: declared}, gzip=False)
    rows, result, name = _parse(tmp_path, data, gzip=False)
    assert rows[2]["words"] == _words_of(_body(2)[:declared - _http_header_len(records, 2)])
    assert [r["truncated"] for r in rows] == [False, False, True]
    assert [(b["offset"], b["kind"]) for b in result.bad_records] == [(offsets[2], "wrong_length")]


@pytest.mark.parametrize("gzip", [False, True], ids=["warc", "warc.gz"])
def test_wrong_length_of_a_non_html_record_is_counted_and_the_next_page_kept(tmp_path, gzip):
    records = [Resp("http://a.example.com/robots.txt", b"User-agent: *\nDisallow: /private\n" * 20,
                    content_type="text/plain")] + _records(2)
    for case, declared in (("short", 50), ("long", block_length(records, 0) + 200)):
        data, offsets = warc_with_content_length(records, {0: declared}, gzip=gzip)
        (tmp_path / case).mkdir()
        rows, result, _ = _parse(tmp_path / case, data, gzip)
        assert [r["words"] for r in rows] == [[f"w{i}x{j}" for j in range(N_WORDS)] for i in range(2)], case
        assert [(b["offset"], b["kind"]) for b in result.bad_records] == [(0, "wrong_length")], case
        assert result.counts["skipped_non_html"] == 1 and result.counts["records"] == 3, case


def test_an_archived_warc_inside_a_correct_record_is_not_a_wrong_length(tmp_path):
    inner, _ = warc_with_content_length(_records(2), {}, gzip=False)
    records = [Resp("http://a.example.com/crawl.warc", inner, content_type="application/warc")] + _records(2)
    data, _ = warc_with_content_length(records, {}, gzip=False)
    rows, result, _ = _parse(tmp_path, data, gzip=False)
    assert [r["url"] for r in rows] == ["http://a.example.com/p0", "http://a.example.com/p1"]
    assert not result.bad_records and result.counts["records"] == 3


@pytest.mark.parametrize("gzip", [False, True], ids=["warc", "warc.gz"])
def test_strict_fails_on_a_wrong_length(tmp_path, gzip):
    records = _records(3)
    data, offsets = warc_with_content_length(records, {1: block_length(records, 1) // 3}, gzip=gzip)
    with pytest.raises(BadInputError, match=f"at offset {offsets[1]}: wrong_length: Content-Length"):
        _parse(tmp_path, data, gzip, strict=True)


def test_parse_stage_lists_wrong_lengths_in_bad_records_jsonl_and_counts(tmp_path):
    records = _records(3)
    short, offs_short = warc_with_content_length(records, {1: 200}, gzip=True)
    long, offs_long = warc_with_content_length(records, {0: block_length(records, 0) + 300}, gzip=False)
    (tmp_path / "a.warc.gz").write_bytes(short)
    (tmp_path / "b.warc").write_bytes(long)
    warcs = tmp_path / "warcs.jsonl"
    warcs.write_text("".join(json.dumps({"path": str(tmp_path / f), "snapshot": "2026-01", "bytes": 1}) + "\n"
                             for f in ("a.warc.gz", "b.warc")))
    out = tmp_path / "parse"
    out.mkdir()
    result = ParseStage().run(StageContext(params=ParseParams(), inputs={"ingest": {"warcs": warcs}}, outdir=out,
                                           settings=RunSettings(progress=False)))
    lines = [json.loads(line) for line in (out / "bad_records.jsonl").read_text().splitlines()]
    assert [(b["file"], b["offset"], b["kind"]) for b in lines] == [
        (str(tmp_path / "a.warc.gz"), offs_short[1], "wrong_length"),
        (str(tmp_path / "b.warc"), offs_long[0], "wrong_length")]
    assert result.counts["bad_wrong_length"] == 2 and result.counts["pages"] == 6


@pytest.mark.parametrize("gzip", [False, True], ids=["warc", "warc.gz"])
@pytest.mark.parametrize("value", ["abc", "-5", None], ids=["not-a-number", "negative", "missing"])
def test_an_unusable_content_length_is_reported_and_the_page_read_from_its_real_block(tmp_path, gzip, value):
    records = _records(3)
    data, offsets = warc_with_content_length(records, {1: value}, gzip=gzip)
    rows, result, name = _parse(tmp_path, data, gzip)
    assert [r["words"] for r in rows] == [[f"w{i}x{j}" for j in range(N_WORDS)] for i in range(3)]
    assert [r["truncated"] for r in rows] == [False] * 3
    assert [(b["file"], b["offset"], b["kind"]) for b in result.bad_records] == [(name, offsets[1], "wrong_length")]
    expected = "no Content-Length" if value is None else f"Content-Length '{value}' is not a length"
    assert result.bad_records[0]["reason"].startswith(expected)


def test_a_whole_file_gzip_is_not_taken_for_a_wrong_length(tmp_path):
    plain, _ = warc_with_content_length(_records(3), {}, gzip=False)
    rows, result, name = _parse(tmp_path, gz.compress(plain), gzip=True)
    # read as one stream (spamflow.parse.gzip_stream), every record whole and none taken for a wrong length
    assert [r["url"] for r in rows] == [f"http://a.example.com/p{i}" for i in range(3)]
    assert [r["words"] for r in rows] == [[f"w{i}x{j}" for j in range(N_WORDS)] for i in range(3)]
    assert result.bad_records == []
