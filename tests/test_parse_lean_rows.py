"""The parse stage's lean row path gives what the plain definitions give: the words kept as
one spaced UTF-8 string per page and split by Arrow (``word_text``, ``split_spaced``), HTML
noise in UTF-8 (``html_noise_utf8``), a page buffered as a ``ParsedPage``, headers looked up
in one dictionary per record, plain hosts read without ``urlsplit``.  How much faster it is
is measured by ``benchmarks/bench_parse.py`` (never in a test)."""

from __future__ import annotations

import random
import sys
import unicodedata
from urllib.parse import urlsplit

import pyarrow.parquet as pq
from selectolax.lexbor import LexborHTMLParser
from test_parse_fast_paths import EDGE_CASES, _real_texts, regex_words
from warcio.recordloader import ArcWarcRecord
from warcio.statusandheaders import StatusAndHeaders

import spamflow.parse.html_text as html_text
import spamflow.words
from spamflow.domains import host_of
from spamflow.parse.html_text import INVISIBLE_TAGS
from spamflow.parse.pages import PageBatch, ParsedPage, is_html_response, parse_record, split_spaced
from spamflow.parse.warc_file import parse_warc_file
from spamflow.parse.warc_records import WarcRecord, iter_records
from spamflow.words import html_noise, html_noise_utf8, word_text

from warc_factory import Resp, html, write_warc


def _is_word_character(char: str) -> bool:
    """The definition, written out again: a letter or digit of any script, or a combining mark."""
    return char.isalnum() or unicodedata.category(char) in ("Mn", "Mc", "Me")


def test_no_word_character_is_whitespace():
    """So a text whose every non-word character became a space splits into the same words
    on spaces (Arrow's ASCII split) as on all whitespace (``str.split``)."""
    both = [c for c in range(sys.maxunicode + 1) if chr(c).isspace() and _is_word_character(chr(c))]
    assert both == []


def test_word_text_splits_into_the_words_of_the_definition():
    for text in EDGE_CASES + _real_texts(120):
        spaced = word_text(text)
        assert not set(spaced) & set(b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"), text  # only spaces separate
        assert spaced.decode("utf-8").split() == regex_words(text), text


def test_split_spaced_splits_as_bytes_split_does():
    rng = random.Random(5)
    pieces = [b"", b" ", b"  ", b"a", b"bc", "é".encode(), "日本".encode(), "𑀅".encode()]
    cases = [[], [b""], [b"   "], [b" a  b "], [b"a", b"", b" ", b"b c"]]
    cases += [[b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(1, 7))]
              for _ in range(3000)]
    for texts in cases:
        assert split_spaced(texts).to_pylist() == [t.decode("utf-8").split() for t in texts], texts


def _noise_by_definition(text: str) -> str:
    return "".join(c for c in text if not _is_word_character(c))


def test_html_noise_in_utf8_drops_exactly_the_word_characters():
    pages = EDGE_CASES + ['<p class="x">Hi 2 you, Zoë</p>\n', "<p>«Caf\u0065\u0301\u00a0\u2014 日本_x»</p>",
                          "<b>\U0001d400 \U0001f600 \U000e0100</b>", "plain ascii <a href=x>1</a>"]
    for text in pages + _real_texts(120):
        expected = _noise_by_definition(text)
        assert html_noise_utf8(text) == expected.encode("utf-8", "surrogatepass"), text
        assert html_noise(text) == expected, text
        if "\ud800" not in text:
            assert html_noise_utf8(text, text.encode("utf-8")) == expected.encode("utf-8"), text


def test_html_noise_keeps_every_ascii_character_but_letters_and_digits():
    # every ASCII character alone and between letters, through both the text and the UTF-8
    # entry (the byte table that keeps or drops each byte); the definition is str.isalnum
    for code in range(128):
        text = f"a{chr(code)}Z9{chr(code)}"
        expected = "" if chr(code).isalnum() else 2 * chr(code)
        assert html_noise_utf8(text) == expected.encode("ascii"), code
        assert html_noise_utf8(text, text.encode("ascii")) == expected.encode("ascii"), code


def _pages_warc(tmp_path):
    bodies = [html("Zoë's café", '<p>Straße — 日本 <a href="/x">Ünïcode</a> <a href="http://B.example/y#f" '
                   'rel="NoFollow">b</a></p>'),
              html("empty", ""),  # no words, no links
              html("ascii", "<p>one two</p>" + "".join(f'<a href="/p{i}">p {i}</a>' for i in range(30))),
              "<html><head><title>latin</title></head><body>caf\xe9 na\xefve</body></html>".encode("cp1252")]
    types = ["text/html; charset=utf-8", "text/html", "text/html", "text/html; charset=windows-1252"]
    warc = tmp_path / "a.warc.gz"
    write_warc(warc, [Resp(f"http://h{i}.example/p", body, content_type=t) for i, (body, t) in
                      enumerate(zip(bodies, types))])
    return warc


def test_parsed_pages_make_the_table_their_pages_make(tmp_path):
    """A batch of ``ParsedPage`` rows (words split by Arrow) gives the table the same pages
    give as ``Page`` rows (words as Python lists), alone or mixed."""
    warc = _pages_warc(tmp_path)
    parsed = [parse_record(item, "2026-01") for item in iter_records(warc, wants_payload=is_html_response)
              if isinstance(item, WarcRecord) and item.rec_type == "response"]
    assert len(parsed) == 4 and isinstance(parsed[0], ParsedPage)
    tables = []
    for rows in (parsed, [p.page() for p in parsed], [p if i % 2 else p.page() for i, p in enumerate(parsed)]):
        batch = PageBatch()
        for row in rows:
            batch.append(row)
        tables.append(batch.to_table())
    assert tables[0].equals(tables[1]) and tables[0].equals(tables[2])
    pages = [p.page() for p in parsed]
    assert pages[1].words == [] and pages[1].links == []
    assert pages[0].links[1] == {"url": "http://b.example/y", "anchor": "b", "nofollow": True}
    assert tables[0].column("words").to_pylist() == [p.words for p in pages]
    assert tables[0].column("noise").to_pylist() == [p.noise for p in pages]


def test_the_stage_makes_no_python_string_per_word(tmp_path, monkeypatch):
    """The stage never calls ``words()`` (a Python string per word cost as much as finding
    the words); its words column is still the words of each page's visible text."""
    def no_words(text: str) -> list[str]:
        raise AssertionError("the parse stage made a Python list of words")

    monkeypatch.setattr(spamflow.words, "words", no_words)
    monkeypatch.setattr(html_text, "words", no_words, raising=False)
    warc = _pages_warc(tmp_path)
    out = tmp_path / "part.parquet"
    result = parse_warc_file(warc, "2026-01", out, max_bytes=1 << 20)
    assert result.bad_records == [] and result.counts["pages"] == 4
    monkeypatch.undo()
    expected = []
    for item in iter_records(warc, wants_payload=is_html_response):
        if isinstance(item, WarcRecord) and item.rec_type == "response":
            text = item.payload.decode("cp1252" if b"latin" in item.payload else "utf-8")
            tree = LexborHTMLParser(text)
            tree.strip_tags(INVISIBLE_TAGS)
            expected.append(regex_words(tree.body.text(deep=True, separator=" ")))
    assert pq.read_table(out).column("words").to_pylist() == expected


def test_host_of_reads_plain_hosts_as_urlsplit_does():
    urls = ["http://a.example/x", "https://A.Example.COM?q", "http://a.example.#f", "http://a.example",
            "http://a.example:8080/", "http://user@a.example/", "http://[::1]/", "http://a.example\t/x",
            "http://a.example\n", "HTTP://a.example/", " http://a.example/", "http://./", "http://..",
            "http://a_b.example/", "http://a.example\\x", "https://xn--bcher-kva.example/", "http://1.2.3.4/",
            "http://b\u00fccher.example/", "ftp://a.example/", "", "a.example/x", "http:///x"]
    for url in urls:
        try:
            expected = (urlsplit(url).hostname or "").rstrip(".")
        except ValueError:
            expected = ""
        assert host_of(url) == expected, url


def test_headers_are_looked_up_as_warcio_looks_them_up():
    warc = StatusAndHeaders("WARC/1.1", [("WARC-Type", "response"), ("warc-date", "2026-01-01T00:00:00Z"),
                                         ("WARC-Date", "2027-01-01T00:00:00Z"), ("X-Empty", "")], protocol="WARC/1.1")
    http = StatusAndHeaders("200 OK", [("content-TYPE", "text/html"), ("Content-Type", "text/plain")],
                            protocol="HTTP/1.1")
    record = ArcWarcRecord("warc", "response", warc, None, http, "application/http", 0)
    item = WarcRecord("f.warc", 0, record)
    for name in ("WARC-Date", "warc-type", "X-Empty", "Missing"):
        assert item.header(name) == warc.get_header(name), name
    for name in ("Content-Type", "content-type", "Missing"):
        assert item.http_header(name) == http.get_header(name), name
    no_http = WarcRecord("f.warc", 0, ArcWarcRecord("warc", "request", warc, None, None, None, 0))
    assert no_http.http_header("Content-Type") is None
