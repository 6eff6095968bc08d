"""Hosts and registered (pay-level) domains, from the Public Suffix List shipped offline
with the ``publicsuffixlist`` package.

>>> registered_domain("news.bbc.co.uk")
'bbc.co.uk'
>>> registered_domain("localhost")
'localhost'
"""

from __future__ import annotations

import functools
import re
from urllib.parse import urlsplit

from publicsuffixlist import PublicSuffixList


@functools.cache
def _suffixes() -> PublicSuffixList:
    """The bundled list (no network access), read on first use: reading it is ~40 ms, paid
    by every process that imports this module (each ``spamflow`` command, each job task)."""
    return PublicSuffixList()


_PLAIN_HOST = re.compile(r"https?://([A-Za-z0-9.\-]+)(?:[/?#]|\Z)")
"""An http(s) URL whose host has only letters, digits, dots and hyphens (no user, port or
IPv6 brackets): its host is what ``urlsplit`` gives, read without it."""


def host_of(url: str) -> str:
    """Lower-cased host name of an absolute URL, without port or trailing dot; '' if none."""
    plain = _PLAIN_HOST.match(url)
    if plain:
        return plain[1].lower().rstrip(".")
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.rstrip(".")


@functools.lru_cache(maxsize=1 << 16)
def registered_domain(host: str) -> str:
    """The registered domain of ``host`` (one label below its public suffix).

    A host that is itself a public suffix, an IP address or a single label is its own domain,
    so every page has a non-empty domain to group by.
    """
    if not host:
        return ""
    if host.replace(".", "").isdigit() or ":" in host:
        return host  # IPv4 / IPv6 literal
    return _suffixes().privatesuffix(host) or host
