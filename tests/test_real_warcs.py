"""Parse on real crawl data from ../shared/data (skipped when it is absent), checked against
independent computations: Common Crawl's own WET text extraction, warcio's record counts,
hand-read values, and an lxml-based extractor on ~1,000 real pages."""

from __future__ import annotations

import re
import tarfile
from collections import Counter
from urllib.parse import urljoin, urlsplit, urlunsplit

import lxml.html
import pyarrow.parquet as pq
import pytest
from warcio.archiveiterator import ArchiveIterator

from spamflow.parse.charset import decode_html
from spamflow.parse.warc_file import parse_warc_file
from spamflow.words import words

from conftest import shared_data
from warc_factory import Resp, write_warc


def _parse(tmp_path, warc, snapshot="s"):
    out = tmp_path / "pages.parquet"
    result = parse_warc_file(warc, snapshot, out, max_bytes=5_000_000)
    return pq.read_table(out).to_pylist(), result


def test_common_crawl_record_against_its_wet_text(tmp_path):
    folder = shared_data("warc-samples")
    rows, result = _parse(tmp_path, folder / "cc-whirlwind-whirlwind.warc.gz", "2024-05")
    assert len(rows) == 1 and not result.bad_records
    page = rows[0]
    assert (page["url"], page["host"], page["domain"], page["ip"], page["status"]) == (
        "https://an.wikipedia.org/wiki/Escopete", "an.wikipedia.org", "wikipedia.org", "208.80.154.224", 200)
    assert page["title"] == "Escopete - Biquipedia, a enciclopedia libre"
    with open(folder / "cc-whirlwind-whirlwind.warc.wet.gz", "rb") as fh:
        wet = next(r.content_stream().read().decode() for r in ArchiveIterator(fh) if r.rec_type == "conversion")
    theirs = Counter(words(wet))
    ours = Counter(words(page["title"]) + page["words"])
    shared = sum((theirs & ours).values())
    assert shared / sum(theirs.values()) > 0.95 and shared / sum(ours.values()) > 0.95


def test_warcio_example_counts_and_hand_read_words(tmp_path):
    warc = shared_data("warc-samples") / "warcio-example.com.warc.gz"
    with open(warc, "rb") as fh:
        by_type = Counter(r.rec_type for r in ArchiveIterator(fh))
    rows, result = _parse(tmp_path, warc)
    assert result.counts["records"] == sum(by_type.values())
    assert len(result.revisits) + result.counts["skipped_revisit_non_html"] == by_type["revisit"]
    assert [r["url"] for r in rows] == ["http://example.com/"]
    assert rows[0]["words"] == (
        "example domain this domain is established to be used for illustrative examples in documents "
        "you may use this domain in examples without prior coordination or asking for permission more information"
    ).split()
    assert rows[0]["links"] == [{"url": "http://www.iana.org/domains/example", "anchor": "More information...",
                                 "nofollow": False}]


_INVISIBLE = ("script", "style", "noscript", "template", "svg", "math", "iframe", "object", "head")


def _lxml_reference(html: str, url: str) -> tuple[list[str], list[str]]:
    """An independent extractor: libxml2's tree, the same visibility and link rules."""
    root = lxml.html.document_fromstring(re.sub(r"^\s*<\?xml[^>]*\?>", "", html))
    base = root.xpath("string(//base/@href)") or url
    base = urljoin(url, base)
    links = []
    for a in root.iter("a"):
        href = (a.get("href") or "").strip()
        if not href:
            continue
        try:
            parts = urlsplit(urljoin(base, href))
        except ValueError:  # e.g. "[ccpa-preferences]" is no valid bracketed host
            continue
        if parts.scheme in ("http", "https") and parts.netloc:
            links.append(urlunsplit((parts.scheme, parts.netloc.lower(), parts.path or "/", parts.query, "")))
    for el in list(root.iter(*_INVISIBLE)):
        el.drop_tree()
    body = root.find("body")
    text = " ".join((body if body is not None else root).itertext())
    return words(text), links


@pytest.mark.slow
def test_real_pages_parse_like_an_independent_lxml_extractor(tmp_path):
    tarball = shared_data("html-trafilatura-eval", "trafilatura-tests-html.tar.xz")
    records = []
    with tarfile.open(tarball) as tar:
        for member in tar:
            if member.isfile() and member.name.endswith(".html"):
                body = tar.extractfile(member).read()  # type: ignore[union-attr]
                records.append(Resp(f"http://page{len(records)}.example.org/a/b.html", body,
                                    content_type="text/html"))
    assert len(records) > 900
    warc = tmp_path / "real.warc.gz"
    write_warc(warc, records)
    rows, result = _parse(tmp_path, warc)
    assert len(rows) == len(records)  # every real page gives a row
    assert not [b for b in result.bad_records if b["kind"] != "decode_errors"]
    same_words = same_links = 0
    for row, rec in zip(rows, records):
        ref_words, ref_links = _lxml_reference(decode_html(rec.body, rec.content_type).text, rec.url)
        same_words += row["words"] == ref_words
        same_links += [link["url"] for link in row["links"]] == ref_links
    print(f"same words {same_words}/{len(rows)}, same links {same_links}/{len(rows)}")
    assert same_words / len(rows) > 0.95, same_words
    assert same_links / len(rows) > 0.93, same_links
