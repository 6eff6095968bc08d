"""Real HTML pages from ../shared/data for the HSS tests: (site, url, noise) of the
trafilatura evaluation pages and the article-extraction benchmark (1,213 pages, 1,142
sites).  A page's site is its host; for web.archive.org captures, the host of the archived
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

from spamflow.charset import decode_html
from spamflow.words import html_noise

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TRAFILATURA = SHARED_DATA / "html-trafilatura-eval"
ARTICLES = SHARED_DATA / "html-article-extraction-benchmark"


@dataclass(frozen=True)
class RealPage:
    site: str
    url: str
    html_bytes: int
    noise: str


def available() -> bool:
    return (TRAFILATURA / "trafilatura-tests-html.tar.xz").exists() and (ARTICLES / "html.tar").exists()


def _site_of(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    if host == "web.archive.org":
        archived = re.search(r"/web/[^/]+/(https?://[^ ]+)", url)
        if archived:
            return (urlsplit(archived.group(1)).hostname or host).lower()
    return host


def _page(site: str, url: str, body: bytes) -> RealPage:
    return RealPage(site, url, len(body), html_noise(decode_html(body, "text/html").text))


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
