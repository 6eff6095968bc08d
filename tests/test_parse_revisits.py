"""WARC revisit records become page rows copied from the capture they refer to, with their
own identity; nothing is skipped silently.  The expected rows are built here from the
originals' rows and the revisits as the test wrote them (WARC/1.1 section 6.7.2)."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow.dataset as ds
import pytest
import xxhash

from spamflow.detector import RunSettings, StageContext, StageOutputs
from spamflow.errors import BadInputError
from spamflow.stages.ingest import IngestParams, IngestStage, WarcFile
from spamflow.stages.parse import ParseParams, ParseStage

from conftest import shared_data
from warc_factory import Resp, html, write_warc

NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
IDENTICAL = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


def _doc_id(record_id: str) -> int:
    return xxhash.xxh3_64_intdigest(record_id.encode()) & (2**63 - 1)


def _when(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def _run(tmp_path, files: list[tuple[str, list[Resp]]], strict: bool = False):
    """ingest + parse, in process, over one WARC file per (snapshot, records)."""
    warcs, offsets = [], {}
    for n, (snapshot, records) in enumerate(files):
        path = tmp_path / f"{snapshot}-{n}.warc.gz"
        for record, offset in zip(records, write_warc(path, records)):
            offsets[record.record_id] = (str(path), offset)
        warcs.append(WarcFile(path=str(path), bytes=path.stat().st_size, mtime_ns=0, snapshot=snapshot))
    rows, result = _ingest_and_parse(tmp_path, warcs, strict)
    return rows, result, offsets


def _ingest_and_parse(tmp_path, warcs: list[WarcFile], strict: bool = False):
    settings = RunSettings(strict=strict, progress=False)
    ingest_dir, parse_dir = tmp_path / "ingest", tmp_path / "parse"
    ingest_dir.mkdir()
    parse_dir.mkdir()
    ingested = IngestStage().run(StageContext(IngestParams(files=tuple(warcs)), {}, ingest_dir, settings))
    upstream = StageOutputs("ingest", ingest_dir, {k: ingest_dir / v for k, v in ingested.outputs.items()}, {})
    result = ParseStage().run(StageContext(ParseParams(), {"ingest": upstream}, parse_dir, settings))
    rows = ds.dataset(parse_dir / result.outputs["pages"]).to_table().to_pylist()
    return rows, result


A = Resp("http://a.example.com/", html("A home", '<p>alpha words</p><a href="http://b.example.org/">b</a>'),
         ip="127.0.0.1", date="2026-01-10T10:00:00Z")
B = Resp("http://a.example.com/b.html", html("B", "<p>beta words here</p>"), ip="127.0.0.1",
         date="2026-01-10T10:00:05Z")
ROBOTS = Resp("http://a.example.com/robots.txt", b"User-agent: *\nDisallow:\n", content_type="text/plain",
              date="2026-01-10T09:59:59Z")
GONE = "<urn:uuid:00000000-0000-0000-0000-00000000dead>"  # in no input file


def _second_snapshot() -> dict[str, Resp]:
    return {
        # 304, no Content-Type, found by WARC-Refers-To; another address this month
        "a": Resp(A.url, b"", status="304 Not Modified", content_type="", kind="revisit", ip="127.0.0.9",
                  date="2026-02-10T10:00:00Z",
                  warc_headers={"WARC-Refers-To": A.record_id, "WARC-Profile": NOT_MODIFIED}),
        # identical payload, no WARC-Refers-To: found by target URI + date
        "b": Resp(B.url, b"", kind="revisit", date="2026-02-10T10:00:05Z",
                  warc_headers={"WARC-Refers-To-Target-URI": B.url, "WARC-Refers-To-Date": B.date,
                                "WARC-Profile": IDENTICAL}),
        # the same payload at another URL, on another registered domain
        "mirror": Resp("http://www.mirror.example.net/copy-of-b", b"", kind="revisit", ip="127.0.0.7",
                       date="2026-02-10T11:00:00Z",
                       warc_headers={"WARC-Refers-To": B.record_id, "WARC-Refers-To-Target-URI": B.url,
                                     "WARC-Refers-To-Date": B.date, "WARC-Profile": IDENTICAL}),
        # a 304 of robots.txt (no Content-Type of its own): its original is not HTML
        "robots": Resp(ROBOTS.url, b"", status="304 Not Modified", content_type="", kind="revisit",
                       date="2026-02-10T09:59:59Z",
                       warc_headers={"WARC-Refers-To": ROBOTS.record_id, "WARC-Profile": NOT_MODIFIED}),
        # robots.txt again, saying text/plain itself
        "robots2": Resp(ROBOTS.url, b"", content_type="text/plain", kind="revisit", date="2026-02-11T09:59:59Z",
                        warc_headers={"WARC-Refers-To": ROBOTS.record_id, "WARC-Profile": IDENTICAL}),
        # the original is not in the input
        "gone": Resp("http://a.example.com/gone.html", b"", status="304 Not Modified", content_type="",
                     kind="revisit", date="2026-02-10T10:00:09Z",
                     warc_headers={"WARC-Refers-To": GONE, "WARC-Profile": NOT_MODIFIED}),
    }


def test_revisits_are_pages_of_their_originals_with_their_own_identity(tmp_path):
    second = _second_snapshot()
    # a month later still, a revisit of the 2026-02 revisit of A (a chain), in its own file
    third = Resp(A.url, b"", kind="revisit", date="2026-03-10T10:00:00Z", ip="127.0.0.10",
                 warc_headers={"WARC-Refers-To": second["a"].record_id, "WARC-Profile": IDENTICAL})
    # the revisits come first in their file: resolution does not depend on record order
    rows, result, offsets = _run(tmp_path, [("2026-02", list(second.values())), ("2026-01", [ROBOTS, A, B]),
                                            ("2026-03", [third])])
    by_id = {r["record_id"]: r for r in rows}
    original = {"a": by_id[A.record_id], "b": by_id[B.record_id], "mirror": by_id[B.record_id]}
    assert original["a"]["status"] == 200 and original["a"]["links"][0]["url"] == "http://b.example.org/"

    def expected(rev: Resp, old: dict, snapshot: str, host: str, domain: str, status: int) -> dict:
        file, offset = offsets[rev.record_id]
        return {**old, "doc_id": _doc_id(rev.record_id), "record_id": rev.record_id, "url": rev.url,
                "host": host, "domain": domain, "ip": rev.ip, "snapshot": snapshot, "fetch_time": _when(rev.date),
                "status": status, "warc_file": file, "warc_offset": offset}

    want = [
        # a 304 keeps the original's status: the server says the earlier answer stands
        expected(second["a"], original["a"], "2026-02", "a.example.com", "example.com", 200),
        expected(second["b"], original["b"], "2026-02", "a.example.com", "example.com", 200),
        expected(second["mirror"], original["mirror"], "2026-02", "www.mirror.example.net", "example.net", 200),
        expected(third, original["a"], "2026-03", "a.example.com", "example.com", 200),
    ]
    got = [r for r in rows if r["snapshot"] != "2026-01"]
    key = lambda r: r["record_id"]  # noqa: E731
    assert sorted(got, key=key) == sorted(want, key=key)
    assert {r["record_id"] for r in rows if r["snapshot"] == "2026-01"} == {A.record_id, B.record_id}

    c = result.counts
    assert (c["records_revisit"], c["pages"], c["revisit_pages"], c["skipped_revisit_non_html"],
            c["bad_unresolved_revisit"]) == (7, 6, 4, 2, 1)
    gone_file, gone_offset = offsets[second["gone"].record_id]
    [bad] = [b for b in result.bad_records if b["kind"] == "unresolved_revisit"]
    assert (bad["file"], bad["offset"]) == (gone_file, gone_offset)
    assert GONE in bad["reason"] and "gone.html" in bad["reason"]
    assert (tmp_path / "parse" / "bad_records.jsonl").read_text().count("unresolved_revisit") == 1


def test_identical_payload_revisit_found_by_uri_and_date_when_its_id_is_unknown(tmp_path):
    """WARC-Refers-To names a record not in the input (rewritten ids), but the target URI
    and date still find the capture."""
    rev = Resp(B.url, b"", kind="revisit", date="2026-02-01T00:00:00Z",
               warc_headers={"WARC-Refers-To": GONE, "WARC-Refers-To-Target-URI": f"<{B.url}>",
                             "WARC-Refers-To-Date": B.date, "WARC-Profile": IDENTICAL})
    rows, result, _ = _run(tmp_path, [("2026-01", [B]), ("2026-02", [rev])])
    [page] = [r for r in rows if r["snapshot"] == "2026-02"]
    assert page["words"] == ["beta", "words", "here"] and page["doc_id"] == _doc_id(rev.record_id)
    assert result.counts["revisit_pages"] == 1 and not result.bad_records


def test_unresolved_revisit_with_strict_is_an_error_naming_file_and_offset(tmp_path):
    gone = _second_snapshot()["gone"]
    with pytest.raises(BadInputError, match=r"2026-02-1\.warc\.gz at offset \d+: unresolved_revisit"):
        _run(tmp_path, [("2026-01", [A]), ("2026-02", [gone])], strict=True)


def test_warcio_example_revisit_is_the_example_com_page_again(tmp_path):
    """warcio's example.com WARC: a response, then an identical-payload revisit of it
    found by WARC-Refers-To-Target-URI + WARC-Refers-To-Date (it has no WARC-Refers-To)."""
    warc = shared_data("warc-samples") / "warcio-example.com.warc.gz"
    rows, result = _ingest_and_parse(tmp_path, [WarcFile(path=str(warc), bytes=warc.stat().st_size, mtime_ns=0,
                                                         snapshot="2017-03")])
    first, again = sorted(rows, key=lambda r: r["fetch_time"])
    assert (first["record_id"], again["record_id"]) == ("<urn:uuid:a9c51e3e-0221-11e7-bf66-0242ac120005>",
                                                        "<urn:uuid:e6e395ca-0221-11e7-a18d-0242ac120005>")
    assert again["fetch_time"] == datetime(2017, 3, 6, 4, 3, 48, tzinfo=UTC)
    assert again["words"] == first["words"] and again["links"] == first["links"] and again["title"] == first["title"]
    assert again["warc_offset"] > first["warc_offset"] and not result.bad_records
    assert result.counts["revisit_pages"] == 1 and result.counts["pages"] == 2
