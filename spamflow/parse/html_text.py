"""HTML to title, visible words and links, with selectolax (the Lexbor HTML5 parser).

Lexbor follows the HTML5 tree-building rules, so broken markup is read as browsers read it.
It was the fastest of the parsers compared in ``benchmarks/bench_parse.py``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urljoin, urlsplit, urlunsplit

from selectolax.lexbor import LexborHTMLParser

from spamflow.words import word_text

INVISIBLE_TAGS = ["script", "style", "noscript", "template", "svg", "math", "iframe", "object", "head"]
"""Elements whose text a reader does not see; their text is not part of ``words``."""


class Link(NamedTuple):
    """An outgoing link (a named tuple: a page has ~100, and a tuple is made 1.5x faster
    than a frozen dataclass)."""

    url: str
    anchor: str
    nofollow: bool


@dataclass(frozen=True)
class HtmlText:
    title: str
    words: list[str]
    links: list[Link]


class SpacedText(NamedTuple):
    """What :func:`extract` gives, with the words left as one UTF-8 string separated by runs
    of spaces (``spamflow.words.word_text``): the parse stage has Arrow split them
    (``spamflow.parse.pages.PageBatch``) rather than making a Python string per word."""

    title: str
    word_text: bytes
    links: list[Link]


def absolute_url(href: str, base: str) -> str | None:
    """``href`` resolved against ``base`` with the fragment dropped; None unless http(s).

    >>> absolute_url("../about.html#team", "http://a.example/blog/post.html")
    'http://a.example/about.html'
    >>> absolute_url("HTTP://Www.Example.org", "http://a.example/")
    'http://www.example.org/'
    >>> absolute_url("/x/./y?q=1", "https://a.example/blog/")
    'https://a.example/x/y?q=1'
    >>> absolute_url("mailto:x@y.z", "http://a.example/") is None
    True
    """
    href = href.strip()
    if not href:
        return None
    # Fast paths for absolute and root-relative links, which most pages are full of;
    # _normalize caches by URL because sites repeat their links on every page.
    head = href[:8].lower()
    if head.startswith(("http://", "https://")):
        return _normalize(href)
    if href.startswith("//"):
        return _normalize(base.partition(":")[0] + ":" + href)
    if href.startswith("/"):
        return _normalize(_origin(base) + href)
    if href.startswith("#"):  # the page itself: every fragment gives the same URL
        return _page_itself(base)
    if _PLAIN_RELATIVE.fullmatch(href):
        folder = _folder_of(base)
        if folder is not None:  # what urljoin gives for these hrefs, without its cost
            return _normalize(folder[1] + href if href.startswith("?") else folder[0] + href)
    scheme = href.partition(":")[0]
    if scheme != href and "/" not in scheme and "?" not in scheme and "#" not in scheme:
        return None  # mailto:, javascript:, tel:, ... (http and https were handled above)
    try:
        return _normalize(urljoin(base, href))
    except ValueError:
        return None


_SEGMENT = r"[A-Za-z0-9\-_~%!$&'()*+,=@][A-Za-z0-9\-._~%!$&'()*+,=@]*"
_PLAIN_RELATIVE = re.compile(rf"(?:{_SEGMENT}(?:/{_SEGMENT})*/?)?(?:\?[!\"$-~]+)?")
"""A relative href that ``urljoin`` only appends to the base's folder (or, if it is only a
query, to the base without its query): no scheme, no segment that starts with a dot, no
empty segment, no fragment, no ``;`` in the path, printable ASCII.  Anything else goes through ``urljoin``."""


@functools.lru_cache(maxsize=1 << 12)
def _folder_of(base: str) -> tuple[str, str] | None:
    """(``base`` up to the last ``/`` of its path, ``base`` without its query) for a base
    already in normal form with no empty path segment; None for any other base."""
    if not _ALREADY_NORMAL.fullmatch(base) or "/." in base or ";" in base:
        return None
    origin_end = base.find("/", base.index("//") + 2)
    if origin_end < 0:
        return base + "/", base
    path = base[origin_end:].partition("?")[0]
    if "//" in path:
        return None
    return base[:origin_end] + path[:path.rfind("/") + 1], base.partition("?")[0]


@functools.lru_cache(maxsize=1 << 12)
def _page_itself(base: str) -> str | None:
    """What a fragment-only href resolves to (any fragment: it is dropped)."""
    try:
        return _normalize(urljoin(base, "#"))
    except ValueError:
        return None


@functools.lru_cache(maxsize=1 << 12)
def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


_ALREADY_NORMAL = re.compile(r"https?://[a-z0-9.\-]+(?::[0-9]+)?(/[^\s#]*)?")


@functools.lru_cache(maxsize=1 << 16)
def _normalize(url: str) -> str | None:
    """Scheme and host lower-cased, dot segments resolved, fragment dropped."""
    if _ALREADY_NORMAL.fullmatch(url) and "/." not in url:
        return url if url.count("/") > 2 else url + "/"
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    path = parts.path or "/"
    if "/." in path:
        path = urlsplit(urljoin(f"{parts.scheme}://x/", path)).path
    return urlunsplit((parts.scheme, parts.netloc.lower(), path, parts.query, ""))


def extract(html: str | bytes, url: str) -> HtmlText:
    """Title, words of the visible text (anchor text included) and outgoing links.

    ``html`` is text, or UTF-8 bytes (Lexbor parses bytes as UTF-8; handing it a UTF-8
    page's own bytes saves encoding the decoded text again)."""
    title, spaced, links = extract_spaced(html, url)
    return HtmlText(title, spaced.decode("utf-8").split(), links)


def extract_spaced(html: str | bytes, url: str) -> SpacedText:
    """:func:`extract` with the words as one spaced string (:class:`SpacedText`)."""
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = " ".join(title_node.text(deep=True).split()) if title_node else ""
    # One walk finds the links and <base>: a second query for <base> alone cost ~6 % of
    # extract.  Lexbor returns the matches in document order; the first <base href> is the
    # base of every link, also of those before it (as browsers resolve them).
    found = tree.css("a[href], base[href]")
    bases = [i for i, node in enumerate(found) if node.tag == "base"]
    base = url
    if bases:
        base = absolute_url(found[bases[0]].attributes.get("href") or "", url) or url
        dropped = set(bases)
        found = [node for i, node in enumerate(found) if i not in dropped]
    links = []
    resolved: dict[str, str | None] = {}  # navigation links repeat within a page
    for a in found:
        attrs = a.attributes
        href = attrs.get("href") or ""
        target = resolved[href] if href in resolved else resolved.setdefault(href, absolute_url(href, base))
        if target is None:
            continue
        rel = (attrs.get("rel") or "").lower().split()
        links.append(Link(target, " ".join(a.text(deep=True, separator=" ").split()), "nofollow" in rel))
    tree.strip_tags(INVISIBLE_TAGS)
    root = tree.body or tree.root
    text = root.text(deep=True, separator=" ") if root is not None else ""
    return SpacedText(title, word_text(text), links)
