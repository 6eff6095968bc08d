"""URL normalisation: the sieve's notion of "the same URL".

RFC 3986 section 6.2.2 (syntax-based normalisation) plus the scheme-based rules of 6.2.3:
lower-case scheme and host, percent-encodings upper-cased and unreserved ones decoded, dot
segments removed, the default port dropped, an empty path made ``/``, the fragment dropped.
The query is kept as it is (its order can matter to the server).

>>> normalize("HTTP://Example.COM:80/a/./b/../c%7e?q=1#top")
'http://example.com/a/c~?q=1'
>>> normalize("https://example.com")
'https://example.com/'
>>> normalize("mailto:x@example.com") is None
True
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import urljoin, urlsplit, urlunsplit

SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}
_PCT = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_UNSAFE = re.compile(r"[\x00-\x20\x7f-\U0010ffff\"<>\\^`{|}]")


def _percent(match: re.Match[str]) -> str:
    char = chr(int(match.group(1), 16))
    return char if char in _UNRESERVED else "%" + match.group(1).upper()


def _quote_unsafe(text: str) -> str:
    """Percent-encode (as UTF-8) characters that may not appear raw in a URL."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode("utf-8")), text)


def remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4, keeping a trailing slash.

    >>> remove_dot_segments("/a/b/c/./../../g")
    '/a/g'
    >>> remove_dot_segments("/a/b/../")
    '/a/'
    """
    if not path:
        return "/"
    trailing = path.endswith(("/", "/.", "/.."))
    out = posixpath.normpath(path)
    if out.startswith("//"):  # normpath keeps a leading double slash
        out = "/" + out.lstrip("/")
    if trailing and out != "/":
        out += "/"
    return out


def normalize(url: str, base: str | None = None) -> str | None:
    """The normal form of ``url`` (resolved against ``base``), or None if it is not a crawlable
    http(s) URL with a host."""
    url = url.strip()
    try:
        if base is not None:
            url = urljoin(base, url)
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        host = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if scheme not in SCHEMES or not host:
        return None
    host = host.rstrip(".")
    try:
        host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        return None
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or port == DEFAULT_PORTS[scheme] else f"{host}:{port}"
    path = remove_dot_segments(_PCT.sub(_percent, _quote_unsafe(parts.path)))
    query = _PCT.sub(_percent, _quote_unsafe(parts.query))
    return urlunsplit((scheme, netloc, path, query, ""))


def scheme_authority(url: str) -> str:
    """``scheme://host[:port]`` of a normalised URL: BUbiNG's unit of politeness ("host").

    >>> scheme_authority("http://example.com:8080/a?b")
    'http://example.com:8080'
    """
    end = url.find("/", url.find("//") + 2)
    return url if end < 0 else url[:end]


def path_query(url: str) -> str:
    """What follows the scheme and authority of a normalised URL (what a visit state stores)."""
    end = url.find("/", url.find("//") + 2)
    return "/" if end < 0 else url[end:]
