"""Real HTML pages from ../shared/data for the HSS tests: (site, url, noise) of the
trafilatura evaluation pages and the article-extraction benchmark (1,213 pages, 1,142
sites); and the HTML responses of the real one-site crawls in warc-samples (data.gov.uk
2014, a Japanese shop in ClueWeb09), with the software that generated each page where the
page says it (``template``).  A page's site is its host; for web.archive.org captures, the host of the archived
URL; for trafilatura's ``hard::`` entries without a URL, the domain their file is named
after (``jamaicaobserver.com-attacks.html`` -> ``jamaicaobserver.com``), else the file.
Mozilla Readability's pages are left out: their folder names (``rtl-1``..``rtl-4``) do not
say which site a page comes from."""

from __future__ import annotations

import functools
import gzip
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from spamflow.parse.charset import decode_html
from spamflow.words import html_noise

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TRAFILATURA = SHARED_DATA / "html-trafilatura-eval"
ARTICLES = SHARED_DATA / "html-article-extraction-benchmark"
WARC_SAMPLES = SHARED_DATA / "warc-samples"
TEMPLATE_SITES = {  # WARC file -> the site it crawled (the file also holds a few pages of other hosts)
    "ukwa-data.gov.uk-2014-a.warc.gz": "data.gov.uk",
    "ukwa-data.gov.uk-2014-b-revisits.warc.gz": "data.gov.uk",
    "clueweb09-ja-quirk.warc.gz": "www.uraharajuku.st",
}
_GENERATOR = re.compile(rb"""<meta\s+name=["']generator["']\s+content=["']([^"']*)""", re.IGNORECASE)


@dataclass(frozen=True)
class RealPage:
    site: str
    url: str
    html_bytes: int
    noise: str
    template: str = ""
    """What generated the page, where it says so: its meta generator (``Drupal 7``), or
    ``Genshi`` for a page whose root declares Genshi's namespace (data.gov.uk's CKAN pages)."""


def available() -> bool:
    return (TRAFILATURA / "trafilatura-tests-html.tar.xz").exists() and (ARTICLES / "html.tar").exists()


def _site_of(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    if host == "web.archive.org":
        archived = re.search(r"/web/[^/]+/(https?://[^ ]+)", url)
        if archived:
            return (urlsplit(archived.group(1)).hostname or host).lower()
    return host


def _page(site: str, url: str, body: bytes, content_type: str = "text/html") -> RealPage:
    return RealPage(site, url, len(body), html_noise(decode_html(body, content_type).text), _template(body))


def _template(body: bytes) -> str:
    generator = _GENERATOR.search(body[:65536])
    if generator:
        return generator.group(1).decode("ascii", "replace").split(" (")[0]
    return "Genshi" if b"http://genshi.edgewall.org/" in body[:4096] else ""


def template_sites_available() -> bool:
    return all((WARC_SAMPLES / name).exists() for name in TEMPLATE_SITES)


@functools.cache
def warc_pages(name: str) -> tuple[RealPage, ...]:
    """The HTML responses of one WARC file of warc-samples (noise computed as parse does),
    read with warcio: ClueWeb09's WARC/0.18 dialect is read as it is."""
    from warcio.archiveiterator import ArchiveIterator

    pages = []
    with open(WARC_SAMPLES / name, "rb") as fh:
        for record in ArchiveIterator(fh, arc2warc=True):
            content_type = record.http_headers.get_header("Content-Type") if record.http_headers else None
            if record.rec_type != "response" or "html" not in (content_type or ""):
                continue
            url = record.rec_headers.get_header("WARC-Target-URI")
            pages.append(_page(_site_of(url), url, record.content_stream().read(), content_type))
    return tuple(pages)


@functools.cache
def real_pages() -> tuple[RealPage, ...]:
    """Every page of the two corpora, noise computed as parse does."""
    pages: list[RealPage] = []
    index = {}
    for line in (TRAFILATURA / "index.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        url, _host, folder, name, _size = line.split("\t")
        index[f"{folder}/{name}"] = url
    with tarfile.open(TRAFILATURA / "trafilatura-tests-html.tar.xz") as tar:
        for member in tar:
            if member.isfile() and member.name.endswith(".html"):
                key = "/".join(member.name.split("/")[-2:])
                url = index.get(key, "")
                site = _site_of(url) or _site_of("http://" + key.split("/")[-1].split("-")[0]) or key
                body = tar.extractfile(member).read()  # type: ignore[union-attr]
                pages.append(_page(site, url or f"file:{key}", body))
    urls = {}
    for line in (ARTICLES / "index.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        ident, url = line.split("\t")[:2]
        urls[ident] = url
    with tarfile.open(ARTICLES / "html.tar") as tar:
        for member in tar:
            if member.isfile() and member.name.endswith(".html.gz"):
                ident = Path(member.name).name.removesuffix(".html.gz")
                body = gzip.decompress(tar.extractfile(member).read())  # type: ignore[union-attr]
                pages.append(_page(_site_of(urls[ident]), urls[ident], body))
    return tuple(pages)
