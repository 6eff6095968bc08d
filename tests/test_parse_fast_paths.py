"""The parse's fast paths give what the plain definitions give: words() against the
regular expression that defined a word before, absolute_url() on relative links against
urljoin; a UTF-8 page parsed from its own bytes gives what its decoded text gives; page
tables leave out the statistics that cost most to write.  How much
faster they are is measured by ``benchmarks/bench_parse.py`` (never in a test)."""

from __future__ import annotations

import functools
import re
import sys
import tarfile
import unicodedata
from urllib.parse import urljoin, urlsplit, urlunsplit

import pyarrow.parquet as pq
import pytest
from selectolax.lexbor import LexborHTMLParser

from spamflow.parse.html_text import INVISIBLE_TAGS
from spamflow.parse.warc_file import parse_warc_file
from spamflow.words import words

from conftest import SHARED_DATA
from warc_factory import Resp, html, write_warc

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@functools.cache
def _word_regex(astral: bool) -> re.Pattern[str]:
    top = sys.maxunicode + 1 if astral else 0x10000
    marks = "".join(re.escape(chr(c)) for c in range(top) if unicodedata.category(chr(c)) in ("Mn", "Mc", "Me"))
    return re.compile(f"[\\w{marks}]+")


def regex_words(text: str) -> list[str]:
    """The definition of a word as spamflow wrote it first: runs of ``\\w`` (minus ``_``)
    and combining marks after NFC and lower-casing, found by ``re``."""
    text = unicodedata.normalize("NFC", text).lower().replace("_", " ")
    astral_mark = any(unicodedata.category(c)[0] == "M" for c in set(_ASTRAL.findall(text)))
    return _word_regex(astral_mark).findall(text)


EDGE_CASES = [
    "", " ", "_", "a_b", "__init__", "Don't re-use e-mail_addresses!", "Ärger über 3,5 Mio. Straße",
    "हिन्दी भाषा, Cafe\u0301 İstanbul", "𑀅𑀲𑁄𑀓 (Brahmi)", "\u212a\u212b Kelvin Ångström", "x\x1cy\x1dz\x1e\x1fw",
    "a\x85b\xa0c\u2028d\u3000e\u200bf", "日本語。テキスト、です！", "emoji 😀 and 🇩🇪 flags", "lone \ud800 surrogate",
    "«quoted» — “typographic” ‘marks’ … ©2026", "١٢٣ arabic digits ٤٥", "ﬁ ligature ǅ titlecase", "x\u0301\u0302 y",
    "tab\there\nnewline\r\nend", "\U0001d400\U0001d7ce math alnum", "\U000e0100 variation selector alone",
    "superscript² ½ fractions Ⅻ roman", "ÆØÅ æøå ΣΑΣ σας",
]


def test_words_match_the_regular_expression_definition_on_edge_cases():
    for text in EDGE_CASES:
        assert words(text) == regex_words(text), text


def _real_texts(limit: int = 250) -> list[str]:
    tarball = SHARED_DATA / "html-trafilatura-eval" / "trafilatura-tests-html.tar.xz"
    if not tarball.exists():
        pytest.skip(f"needs {tarball} (the shared real-data folder beside the repo); it is absent here")
    texts = []
    with tarfile.open(tarball) as tar:
        for member in tar:
            if member.isfile() and member.name.endswith(".html"):
                tree = LexborHTMLParser(tar.extractfile(member).read())  # type: ignore[union-attr]
                tree.strip_tags(INVISIBLE_TAGS)
                root = tree.body or tree.root
                texts.append(root.text(deep=True, separator=" ") if root is not None else "")
                if len(texts) >= limit:
                    break
    return texts


def test_words_of_real_pages_match_the_definition():
    texts = _real_texts()
    assert sum(not t.isascii() for t in texts) > 100  # the non-ASCII path is what is measured
    for text in texts:
        assert words(text) == regex_words(text)


def reference_url(href: str, base: str) -> str | None:
    """``absolute_url`` by its definition: ``urljoin``, http(s) only, scheme and host
    lower-cased, dot segments resolved, fragment dropped; a href with a colon before any
    ``/?#`` names a scheme, and one other than http(s) is no link (``: x``, ``%20https:``)."""
    href = href.strip()
    scheme = href.partition(":")[0]
    if not href or (scheme != href and not any(c in scheme for c in "/?#")
                    and scheme.lower() not in ("http", "https")):
        return None
    try:
        parts = urlsplit(urljoin(base, href))
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    path = parts.path or "/"
    if "/." in path:
        path = urlsplit(urljoin(f"{parts.scheme}://x/", path)).path
    return urlunsplit((parts.scheme, parts.netloc.lower(), path, parts.query, ""))


def _relative_hrefs() -> list[tuple[str, str]]:
    """(href, page URL) of the relative and fragment-only links of real pages, whose URLs
    are known (the trafilatura index)."""
    folder = SHARED_DATA / "html-trafilatura-eval"
    if not folder.exists():
        pytest.skip(f"needs {folder} (the shared real-data folder beside the repo); it is absent here")
    urls = {}
    for line in (folder / "index.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        parts = line.split("\t")
        urls[f"{parts[2]}/{parts[3]}"] = parts[0]
    pairs = []
    with tarfile.open(folder / "trafilatura-tests-html.tar.xz") as tar:
        for member in tar:
            url = urls.get(member.name.lstrip("./"), "")
            if member.isfile() and url.startswith("http"):
                tree = LexborHTMLParser(tar.extractfile(member).read())  # type: ignore[union-attr]
                for a in tree.css("a[href]"):
                    href = (a.attributes.get("href") or "").strip()
                    if href and not href.lower().startswith(("http:", "https:", "/", "javascript:", "mailto:")):
                        pairs.append((href, url))
    return pairs


BASES = ["http://a.example", "http://a.example/", "http://a.example/b/c.html", "http://a.example/b/?q=1",
         "https://a.example:8080/b//c/d", "http://a.example/b;p/c;q?x", "http://A.example/b/", "http://a.example/b/./c",
         "http://a.example/x?", "http://a.example/x;", "http://[::1/", "http://a.example/%7Ex/y#frag",
         "http://a.example/b/c?u=/./x", "http://a.example/b/c.html?x=1#f"]
HREFS = ["#", "#x", "#x:y", "?", "?a", "?a?b", "?a:b=/./c", "a", "a/", "a/b.html", "a.b/c-d_e~f", ".", "..", "./a",
         "../a", ".hidden", "a//b", "a;b", "a?b#c", "a:b", "%7Ea", "a b", "a\tb", "über", "a/./b", "a/../b", "a?",
         "a?#", "a?b c", "!$&'()*+,=@"]


def test_relative_links_resolve_as_urljoin_resolves_them():
    import spamflow.parse.html_text as html_text

    for base in BASES:
        for href in HREFS:
            assert html_text.absolute_url(href, base) == reference_url(href, base), (href, base)
    pairs = _relative_hrefs()
    assert len(pairs) > 5000
    assert [html_text.absolute_url(h, b) for h, b in pairs] == [reference_url(h, b) for h, b in pairs]


def test_a_utf8_page_is_parsed_from_its_own_bytes_with_the_same_result():
    from spamflow.parse.charset import decode_html
    from spamflow.parse.html_text import extract
    from spamflow.parse.pages import _utf8_bytes
    from spamflow.words import html_noise

    page = "<html><head><title>Zoë’s café</title></head><body><p>Straße — 日本 <a href='x.html'>ß</a></p></body></html>"
    body = page.encode("utf-8")
    decoded = decode_html(body, "text/html; charset=utf-8")
    assert _utf8_bytes(body, decoded) is body
    assert extract(body, "http://a.example/") == extract(decoded.text, "http://a.example/")
    assert html_noise(decoded.text, body) == html_noise(decoded.text)
    # anything else is parsed from the decoded text: another charset, a BOM removed, bytes replaced
    for other, content_type in ((page.encode("cp1252", "replace"), "text/html; charset=windows-1252"),
                                (b"\xef\xbb\xbf" + body, "text/html"), (body + b"\xff", "text/html; charset=utf-8")):
        assert _utf8_bytes(other, decode_html(other, content_type)) is None


def test_page_tables_keep_statistics_only_for_scalar_columns(tmp_path):
    """Min/max statistics of words, links and noise cost ~20 % of the Parquet write and no
    reader filters on them: they are left out; every scalar column keeps its statistics."""
    warc = tmp_path / "a.warc.gz"
    write_warc(warc, [Resp("http://a.example/", html("A", '<p>one two</p><a href="/b">b</a>'))])
    out = tmp_path / "part.parquet"
    parse_warc_file(warc, "2026-01", out, max_bytes=1 << 20)
    row_group = pq.ParquetFile(out).metadata.row_group(0)
    with_stats = {row_group.column(i).path_in_schema: row_group.column(i).is_stats_set
                  for i in range(row_group.num_columns)}
    big = {"words.list.element", "links.list.element.url", "links.list.element.anchor",
           "links.list.element.nofollow", "noise"}
    assert {path for path, stats in with_stats.items() if not stats} == big
    assert pq.read_table(out).column("words").to_pylist() == [["one", "two", "b"]]  # values as before
