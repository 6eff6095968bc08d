"""What a fetched page adds to the crawl: its links, and its near-duplicate signature.

Links are the ``href`` of ``<a>``, ``<area>`` and the ``src`` of ``<frame>``/``<iframe>``
(with ``embeds``, also ``<link href>``, ``<img src>``, ``<script src>``), resolved against
``<base href>`` or the page URL.  The signature (BUbiNG section 3.4) hashes the HTML with
every tag's attributes stripped and whitespace collapsed, so pages that differ only in
attributes (session ids in links, tracking parameters, styling) collapse to one.
"""

from __future__ import annotations

import re
import zlib

import xxhash
from selectolax.lexbor import LexborHTMLParser

HTML_TYPES = ("text/html", "application/xhtml+xml")
_LINKS = "a[href], area[href], frame[src], iframe[src], base[href]"
_EMBEDS = ", link[href], img[src], script[src]"
_TAG_ATTRS = re.compile(rb"<(/?[A-Za-z][A-Za-z0-9:-]*)[^>]*>")
_SPACE = re.compile(rb"\s+")


def is_html(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() in HTML_TYPES


def decode_content(body: bytes, encoding: str, limit: int = 0) -> bytes:
    """Undo a gzip/deflate Content-Encoding, as far as the (possibly truncated) body goes and,
    with ``limit``, to at most ``limit`` bytes (:func:`decode_capped` says whether it cut)."""
    return decode_capped(body, encoding, limit)[0]


def decode_capped(body: bytes, encoding: str, limit: int = 0) -> tuple[bytes, bool]:
    """``decode_content``, and whether the inflated body was longer than ``limit`` (0: no
    limit) and cut there: a small gzip body can inflate a thousandfold."""
    encoding = encoding.strip().lower()
    if encoding in ("gzip", "x-gzip", "deflate"):
        for wbits in ((31,) if encoding != "deflate" else (15, -15)):
            inflate = zlib.decompressobj(wbits)
            try:
                out = inflate.decompress(body, limit + 1) if limit else inflate.decompress(body)
            except zlib.error:
                continue
            if limit and len(out) > limit:
                return out[:limit], True
            return out, False
    return body, False


def extract_links(body: bytes, embeds: bool = False) -> tuple[str | None, list[str]]:
    """(``<base href>`` or None, raw link targets in document order)."""
    tree = LexborHTMLParser(body)
    base = None
    out: list[str] = []
    for node in tree.css(_LINKS + (_EMBEDS if embeds else "")):
        attrs = node.attributes
        value = attrs.get("href") if "href" in attrs else attrs.get("src")
        if not value:
            continue
        if node.tag == "base":
            base = base or value
            continue
        out.append(value)
    return base, out


def content_signature(body: bytes) -> int:
    """64-bit hash of the HTML with attributes stripped and whitespace collapsed."""
    return xxhash.xxh3_64_intdigest(_SPACE.sub(b" ", _TAG_ATTRS.sub(rb"<\1>", body)).strip().lower())
