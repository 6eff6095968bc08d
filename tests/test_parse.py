"""Parse fields on hand-checked pages, against values worked out by hand."""

from __future__ import annotations

import pyarrow.parquet as pq
import xxhash

from spamflow.parse.warc_file import parse_warc_file

from warc_factory import Resp, html, write_warc


def _parse(tmp_path, records, snapshot="2026-01", **kw):
    warc = tmp_path / "in.warc.gz"
    write_warc(warc, records, gzip=kw.pop("gzip", True))
    out = tmp_path / "pages.parquet"
    result = parse_warc_file(warc, snapshot, out, max_bytes=kw.pop("max_bytes", 100_000), **kw)
    return pq.read_table(out).to_pylist(), result


def test_fields_of_a_hand_checked_page(tmp_path):
    body = html("  Garden   notes ", """
        <h1>Roses &amp; tulips</h1><p>Don't prune in May.</p>
        <a href="../about.html#team">About us</a>
        <a href="/topics/soil.html" rel="nofollow sponsored">Soil</a>
        <a href="https://Other.Example.org/x?q=1">Elsewhere</a>
        <a href="mailto:me@example.org">mail</a>
        <script>var hidden = "script words";</script><style>.x{color:red}</style>""")
    rid = "<urn:uuid:11111111-2222-3333-4444-555555555555>"
    rows, result = _parse(tmp_path, [Resp("http://news.bbc.co.uk/blog/post.html", body, ip="127.3.4.5",
                                          record_id=rid, date="2026-01-20T08:30:00Z")])
    assert len(rows) == 1
    page = rows[0]
    assert page["doc_id"] == xxhash.xxh3_64_intdigest(rid.encode()) & (2**63 - 1)
    assert page["record_id"] == rid
    assert page["host"] == "news.bbc.co.uk"
    assert page["domain"] == "bbc.co.uk"  # multi-part public suffix
    assert page["ip"] == "127.3.4.5"
    assert page["snapshot"] == "2026-01"
    assert page["fetch_time"].isoformat() == "2026-01-20T08:30:00+00:00"
    assert page["status"] == 200
    assert page["title"] == "Garden notes"
    assert page["words"] == ["roses", "tulips", "don", "t", "prune", "in", "may",
                             "about", "us", "soil", "elsewhere", "mail"]  # title, script and style excluded
    assert page["links"] == [
        {"url": "http://news.bbc.co.uk/about.html", "anchor": "About us", "nofollow": False},
        {"url": "http://news.bbc.co.uk/topics/soil.html", "anchor": "Soil", "nofollow": True},
        {"url": "https://other.example.org/x?q=1", "anchor": "Elsewhere", "nofollow": False},
    ]
    assert page["noise"] == "".join(c for c in body.decode() if not c.isalnum())
    assert page["html_bytes"] == len(body)
    assert page["truncated"] is False
    assert result.counts["pages"] == 1 and not result.bad_records


def test_non_utf8_pages_decode_with_their_declared_charset(tmp_path):
    text = "Café “quoted” naïve"
    cp1252 = html("x", f"<p>{text}</p>").decode().encode("cp1252")
    latin1_meta = html("y", "<p>Ærø façade</p>", head='<meta charset="iso-8859-1">').decode().encode("latin-1")
    rows, result = _parse(tmp_path, [
        Resp("http://a.example.com/", cp1252, content_type="text/html; charset=windows-1252"),
        Resp("http://b.example.com/", latin1_meta, content_type="text/html"),
    ])
    assert rows[0]["words"] == ["café", "quoted", "naïve"]
    assert rows[0]["charset"] == "cp1252"
    assert rows[1]["words"] == ["ærø", "façade"]
    assert not result.bad_records


def test_undeclared_charset_is_detected_and_never_crashes(tmp_path):
    body = ("<html><body><p>" + "Größere Änderungen für Straßenbahnen über Brücken. " * 20 + "</p></body></html>").encode("cp1252")
    rows, _ = _parse(tmp_path, [Resp("http://de.example.com/", body, content_type="text/html")])
    assert "straßenbahnen" in rows[0]["words"] and "über" in rows[0]["words"]


def test_other_records_are_counted_and_skipped(tmp_path):
    rows, result = _parse(tmp_path, [
        Resp("http://a.example.com/", html("a", "<p>one</p>")),
        Resp("http://a.example.com/robots.txt", b"User-agent: *", content_type="text/plain"),
        Resp("http://a.example.com/", b"", kind="revisit"),
        Resp("http://a.example.com/x", b"GET /x HTTP/1.1\r\n\r\n", content_type="application/http; msgtype=request", kind="request"),
        Resp("http://a.example.com/missing", html("404", "<p>not found</p>"), status="404 Not Found"),
    ], gzip=False)
    assert [r["url"] for r in rows] == ["http://a.example.com/", "http://a.example.com/missing"]
    assert rows[1]["status"] == 404
    c = result.counts
    assert (c["records"], c["pages"], c["skipped_non_html"], c["records_revisit"], c["records_request"]) == (5, 2, 1, 1, 1)
    assert [r.url for r in result.revisits] == ["http://a.example.com/"]  # resolved by the stage, all files parsed


def test_xhtml_and_ip_absent(tmp_path):
    rows, _ = _parse(tmp_path, [Resp("https://x.example.net/p", html("t", "<p>hi</p>"),
                                     content_type="application/xhtml+xml", ip=None)])
    assert rows[0]["ip"] is None and rows[0]["domain"] == "example.net"


def test_base_href_and_relative_links(tmp_path):
    body = html("t", '<a href="c.html">c</a><a href="//cdn.example.com/z">z</a><a href="?p=2">next</a>',
                head='<base href="http://h.example.com/a/b/">')
    rows, _ = _parse(tmp_path, [Resp("http://h.example.com/index.html", body)])
    assert [link["url"] for link in rows[0]["links"]] == [
        "http://h.example.com/a/b/c.html", "http://cdn.example.com/z", "http://h.example.com/a/b/?p=2"]
