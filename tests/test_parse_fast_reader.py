"""The FastWARC fast path (``spamflow.parse.fast_records``) gives exactly what warcio alone
gives, record by record, on well-formed and damaged gzip WARC files and on every real WARC
in ../shared/data; it reads the well-formed records and hands over to warcio at the first
record it cannot prove."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

import spamflow.parse.fast_records as fast_records
import spamflow.parse.warc_records as warc_records
from spamflow.parse.pages import is_html_response
from spamflow.parse.warc_records import BadRecord, iter_records

from warc_factory import Resp, html, warc_bytes, warc_with_content_length

pytest.importorskip("fastwarc")

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "data" / "warc-samples"


def _records(n: int = 4) -> list[Resp]:
    return [Resp(f"http://h{i}.example/p{i}", html(f"page {i}", f"<p>words of page {i}</p>" * (i + 1)))
            for i in range(n)]


def _dump(path: Path) -> list[object]:
    """Everything parse takes from each record, and each bad record."""
    out: list[object] = []
    for item in iter_records(path, wants_payload=is_html_response, max_bytes=300):
        if isinstance(item, BadRecord):
            out.append(item.as_dict())
            continue
        rec = item.record
        http = rec.http_headers
        out.append((item.offset, rec.rec_type, rec.format, rec.rec_headers.statusline, rec.rec_headers.headers,
                    http.statusline if http else None, http.headers if http else None, item.payload,
                    item.capped, item.cut_short, item.length_problem))
    return out


def _fast_count(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the records the fast path yields from now on (one entry per file read)."""
    counts: list[int] = []
    real = fast_records.fast_records

    def counting(fh, make_item):  # type: ignore[no-untyped-def]
        counts.append(0)
        records = real(fh, make_item)
        while True:
            try:
                item = next(records)
            except StopIteration as stop:
                return stop.value
            counts[-1] += 1
            yield item

    monkeypatch.setattr(warc_records, "fast_records", counting)
    return counts


def _same_as_warcio(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    fast = _dump(path)
    with monkeypatch.context() as m:
        m.setattr(fast_records, "FastIterator", None)
        slow = _dump(path)
    assert fast == slow, path.name
    return fast


def _members(records: list[Resp]) -> list[bytes]:
    """Each record's uncompressed bytes."""
    plain, offsets = warc_bytes(records, gzip=False)
    return [plain[a:b] for a, b in zip(offsets, offsets[1:] + [len(plain)])]


def _damaged_files(tmp: Path) -> dict[str, bytes]:
    records = _records()
    members = _members(records)
    good, offsets = warc_bytes(records)
    mid = offsets[2] + 20
    no_space = re.sub(rb"WARC-Date: ", b"WARC-Date:", members[2], count=1)
    split = members[1][:200], members[1][200:]
    return {
        "good": good,
        "corrupt_member": good[:mid] + bytes(b ^ 0xFF for b in good[mid:mid + 30]) + good[mid + 30:],
        "cut_short": good[:offsets[3] + 40],
        "trailing_garbage": good + b"this is not a record\n" * 3,
        "trailing_blank": good + b"\r\n\r\n",
        "junk_before": b"junk\n" + good,
        "too_short": warc_with_content_length(records, {1: 100}, gzip=True)[0],
        "too_long": warc_with_content_length(records, {1: 100_000}, gzip=True)[0],
        "no_length": warc_with_content_length(records, {2: None}, gzip=True)[0],
        "length_not_a_number": warc_with_content_length(records, {2: "12x"}, gzip=True)[0],
        "header_without_space": b"".join(gzip.compress(m, mtime=0) for m in members[:2] + [no_space] + members[3:]),
        "record_in_two_members": b"".join(gzip.compress(m, mtime=0) for m in [members[0], *split, *members[2:]]),
        "empty_member_between": b"".join(gzip.compress(m, mtime=0) for m in [members[0], b"", *members[1:]]),
        "one_stream": gzip.compress(b"".join(members), mtime=0),
    }


def test_fast_path_gives_what_warcio_gives_on_damaged_files(tmp_path, monkeypatch):
    counts = _fast_count(monkeypatch)
    fast_read = {}
    for name, data in _damaged_files(tmp_path).items():
        path = tmp_path / f"{name}.warc.gz"
        path.write_bytes(data)
        counts.clear()
        _same_as_warcio(path, monkeypatch)
        fast_read[name] = counts[0] if counts else 0
    # well formed: all four records through the fast path; damaged: the records before the damage
    assert fast_read["good"] == 4
    assert fast_read["trailing_blank"] == 3  # the last member is not followed by the end of the file
    assert fast_read["too_short"] == 1 and fast_read["too_long"] == 1
    assert fast_read["no_length"] == 2 and fast_read["length_not_a_number"] == 2
    assert fast_read["header_without_space"] == 2
    assert fast_read["record_in_two_members"] == 1
    assert fast_read["corrupt_member"] <= 2 and fast_read["cut_short"] <= 3
    assert fast_read["junk_before"] == 0
    assert fast_read["one_stream"] == 0  # decompressed to a temporary file first: not gzip any more


def test_fast_path_gives_what_warcio_gives_on_every_real_warc(tmp_path, monkeypatch):
    files = sorted(SAMPLES.glob("*.gz")) if SAMPLES.is_dir() else []
    if not files:
        pytest.skip(f"needs the real WARC samples in {SAMPLES}; absent here")
    counts = _fast_count(monkeypatch)
    for path in files:
        counts.clear()
        records = _same_as_warcio(path, monkeypatch)
        if not path.name.endswith(".arc.gz"):  # the samples are well formed: all read fast
            assert counts[0] == len(records), path.name


def test_without_fastwarc_every_record_is_read_by_warcio(tmp_path, monkeypatch):
    path = tmp_path / "good.warc.gz"
    path.write_bytes(warc_bytes(_records())[0])
    counts = _fast_count(monkeypatch)
    monkeypatch.setattr(fast_records, "FastIterator", None)
    assert len(_dump(path)) == 4
    assert counts == [0]


def test_a_record_whose_body_fails_to_read_is_reported_as_warcio_reports_it(tmp_path, monkeypatch):
    path = tmp_path / "good.warc.gz"
    path.write_bytes(warc_bytes(_records())[0])
    real = warc_records.WarcRecord._read_payload

    def failing(self, max_bytes):  # type: ignore[no-untyped-def]
        if (self.header("WARC-Target-URI") or "").endswith("/p2"):
            raise OSError("body does not decode")
        real(self, max_bytes)

    monkeypatch.setattr(warc_records.WarcRecord, "_read_payload", failing)
    counts = _fast_count(monkeypatch)
    records = _same_as_warcio(path, monkeypatch)
    assert counts[0] == 2  # the fast path handed over at the third record
    assert [r["reason"] for r in records if isinstance(r, dict)] == ["unreadable record: OSError: body does not decode"]


def test_a_record_larger_than_the_fast_limit_and_all_after_it_go_to_warcio(tmp_path, monkeypatch):
    records = _records()
    records[1].body = html("big", "<p>big page</p>" * 200)
    path = tmp_path / "big.warc.gz"
    path.write_bytes(warc_bytes(records)[0])
    monkeypatch.setattr(fast_records, "MAX_FAST_BLOCK", 1000)  # the second record's block is ~3 KB
    counts = _fast_count(monkeypatch)
    records_read = _same_as_warcio(path, monkeypatch)
    assert counts[0] == 1 and len(records_read) == 4
