"""Revisits that name their original only by payload digest (Heritrix's WARC/1.0
``identical-payload-digest`` deduplication: no WARC-Refers-To, no WARC-Refers-To-Date) are
resolved by (target URI, WARC-Payload-Digest) across all files of the run."""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
from datetime import UTC, datetime

from warcio.archiveiterator import ArchiveIterator

from spamflow.parse.payload_digest import normalize_digest

from conftest import ingest_and_parse, shared_data
from warc_factory import Resp, html, write_warc

IDENTICAL_1_0 = "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"


def _sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def _revisit(url: str, digest: str, date: str) -> Resp:
    return Resp(url, b"", kind="revisit", date=date,
                warc_headers={"WARC-Payload-Digest": digest, "WARC-Profile": IDENTICAL_1_0})


def test_revisits_by_uri_and_payload_digest(tmp_path):
    a = Resp("http://d.example.com/a", html("A", "<p>alpha page</p>"), date="2014-03-25T12:00:00Z")
    b = Resp("http://d.example.com/b", html("B", "<p>beta page</p>"), date="2014-03-25T12:00:01Z")
    hex_b = "SHA-1:" + binascii.hexlify(hashlib.sha1(b.body).digest()).decode()  # another tool's spelling
    revisits = [
        _revisit(a.url, _sha1_b32(a.body), "2014-03-26T12:00:00Z"),  # found
        _revisit(b.url, hex_b, "2014-03-26T12:00:01Z"),  # found: same digest, spelled in hex
        _revisit(a.url, _sha1_b32(b"other content"), "2014-03-26T12:00:02Z"),  # same URL, other payload
        _revisit("http://d.example.com/c", _sha1_b32(a.body), "2014-03-26T12:00:03Z"),  # same payload, other URL
    ]
    first, second = tmp_path / "a.warc.gz", tmp_path / "b.warc.gz"
    write_warc(first, [a, b])
    offsets = write_warc(second, revisits)
    rows, _, parsed = ingest_and_parse(tmp_path, [first, second])
    by_id = {r["record_id"]: r for r in rows}
    assert set(by_id) == {a.record_id, b.record_id, revisits[0].record_id, revisits[1].record_id}
    for rev, old in ((revisits[0], a), (revisits[1], b)):
        page = by_id[rev.record_id]
        assert page["words"] == by_id[old.record_id]["words"] and page["title"] == by_id[old.record_id]["title"]
        assert page["fetch_time"] == datetime.strptime(rev.date, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert (page["warc_file"], page["warc_offset"]) == (str(second), offsets[revisits.index(rev)])
    assert by_id[a.record_id]["payload_digest"] == _sha1_b32(a.body)
    assert parsed.counts["revisit_pages"] == 2 and parsed.counts["bad_unresolved_revisit"] == 2
    unresolved = sorted((b["offset"], b["reason"]) for b in parsed.bad_records)
    assert [o for o, _ in unresolved] == offsets[2:]
    assert f"payload {_sha1_b32(b'other content')}" in unresolved[0][1]


def test_data_gov_uk_recrawl_revisits_resolve_to_the_first_crawl(tmp_path):
    first = shared_data("warc-samples", "ukwa-data.gov.uk-2014-a.warc.gz")
    second = shared_data("warc-samples", "ukwa-data.gov.uk-2014-b-revisits.warc.gz")
    # independently: each HTML revisit of the second file, and the first file's response
    # with the same URI whose payload hashes (sha1, base32) to the revisit's digest
    bodies: dict[tuple[str, str], bytes] = {}
    with gzip.open(first, "rb") as fh:
        for rec in ArchiveIterator(fh):
            if rec.rec_type == "response":
                body = rec.raw_stream.read()
                bodies[(rec.rec_headers.get_header("WARC-Target-URI"), _sha1_b32(body))] = body
    expected = {}
    with gzip.open(second, "rb") as fh:
        for rec in ArchiveIterator(fh):
            if rec.rec_type == "revisit" and "text/html" in (rec.http_headers.get_header("Content-Type") or ""):
                key = (rec.rec_headers.get_header("WARC-Target-URI"),
                       normalize_digest(rec.rec_headers.get_header("WARC-Payload-Digest")))
                assert rec.rec_headers.get_header("WARC-Refers-To") is None
                expected[rec.rec_headers.get_header("WARC-Record-ID")] = key
    assert len(expected) == 29 and all(key in bodies for key in expected.values())
    rows, _, parsed = ingest_and_parse(tmp_path, [first, second])
    assert parsed.counts["revisit_pages"] == 29 and "bad_unresolved_revisit" not in parsed.counts
    by_id = {r["record_id"]: r for r in rows}
    originals = {(r["url"], r["payload_digest"]): r for r in rows if r["warc_file"] == str(first)}
    for record_id, key in expected.items():
        page, original = by_id[record_id], originals[key]
        assert page["url"] == key[0] and page["words"] == original["words"] and page["links"] == original["links"]
        assert page["html_bytes"] == len(bodies[key]) and page["warc_file"] == str(second)


def test_second_crawl_alone_leaves_its_revisits_counted(tmp_path):
    second = shared_data("warc-samples", "ukwa-data.gov.uk-2014-b-revisits.warc.gz")
    rows, _, parsed = ingest_and_parse(tmp_path, [second])
    assert parsed.counts["bad_unresolved_revisit"] == 29 and parsed.counts["revisit_pages"] == 0
    assert all(b["kind"] == "unresolved_revisit" and "payload sha1:" in b["reason"] for b in parsed.bad_records)
