"""The operator identifiers of one page: pure functions of a link URL or of HTML source text.

Imports nothing of spamflow (the MapReduce job runs it on workers that get only this
package). An identifier is a string ``<kind>:<value>``:

* ``aff:<param>=<value>``: an affiliate tracking parameter of a link's query
  (``/visit/?bta=40211`` -> ``aff:bta=40211``); a parameter listed with a host pattern counts
  only on links to hosts matching it (``tag`` on Amazon hosts).
* ``path:<host><path>``: an affiliate-program path on a link to another registered domain
  (``https://partners.example-casino.com/aff/7731/`` -> ``path:partners.example-casino.com/aff/7731``).
* ``short:<host>/<code>``: a link through a redirect or shortener host (``bit.ly/3xYz``).
* ``adsense:pub-<digits>``: an AdSense publisher id, written ``ca-pub-…`` or ``pub-…``.
* ``ua:UA-<account>``: a Universal Analytics account (``UA-1234567-3`` -> ``UA-1234567``:
  an operator's sites are properties ``-1``, ``-2``, … of one account).
* ``ga4:G-<id>``, ``gtm:GTM-<id>``: a Google Analytics 4 measurement id, a Tag Manager container.

docs/ids.md documents the defaults and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal
from urllib.parse import parse_qsl, urlsplit

HtmlKind = Literal["adsense", "ua", "ga4", "gtm"]
HTML_KINDS: tuple[HtmlKind, ...] = ("adsense", "ua", "ga4", "gtm")
"""The identifier kinds read from a page's HTML source (scripts, attributes), not from its links."""

# Each pattern starts with a literal, so that re finds candidates by a fast literal search; what
# may come before the match is checked in code (a lookbehind first would make re try every offset).
_HTML_PATTERNS: dict[str, re.Pattern[str]] = {
    # ca-pub-1234567890123456 in data-ad-client / adsbygoogle.js?client=; pub-… in old google_ad_client and ads.txt
    "adsense": re.compile(r"pub-(\d{10,20})(?![\w-])"),
    # UA-1234567-1: the account is the operator's, the suffix a property (one per site)
    "ua": re.compile(r"UA-(\d{4,10})-\d{1,4}(?![\w-])"),
    # G-XXXXXXXXXX only where a measurement id is written: a quoted string or an id= parameter
    "ga4": re.compile(r"G-([A-Z0-9]{8,12})(?![\w-])"),
    "gtm": re.compile(r"GTM-([A-Z0-9]{4,9})(?![\w-])"),
}


def _starts_well(kind: str, text: str, start: int) -> bool:
    """What precedes a match at ``start`` allows it: not a word character or ``-`` (``ca-`` may
    precede ``pub-``); for GA4, a quote or ``id=``."""
    if kind == "ga4":
        return text[start - 1:start] in ("'", '"') or text[max(0, start - 4):start] in ("?id=", "&id=")
    if kind == "adsense" and text[max(0, start - 3):start] == "ca-":
        start -= 3
    before = text[start - 1:start]
    return not before or not (before.isalnum() or before in "_-")


_HTML_PREFIX = {"adsense": "adsense:pub-", "ua": "ua:UA-", "ga4": "ga4:G-", "gtm": "gtm:GTM-"}


@dataclass(frozen=True)
class IdRules:
    """What counts as an identifier (the detector's parameters, as plain values)."""

    affiliate_params: Mapping[str, str]
    """query parameter (lower case) -> host pattern the link must point to (``*``: any)"""
    affiliate_paths: Sequence[str]
    """regular expressions over a link's path; group 1 is the identifier's last part"""
    shorteners: Sequence[str]
    """redirect and shortener hosts (``bit.ly``); ``www.`` prefixes are ignored"""
    html_kinds: Sequence[str] = HTML_KINDS
    min_value_length: int = 3
    value_needs_digit: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "_paths", tuple(re.compile(p) for p in self.affiliate_paths))
        object.__setattr__(self, "_short", frozenset(h.lower().removeprefix("www.") for h in self.shorteners))
        object.__setattr__(self, "_params", {k.lower(): v.lower() for k, v in self.affiliate_params.items()})

    def to_dict(self) -> dict[str, object]:
        return {"affiliate_params": dict(sorted(self.affiliate_params.items())),
                "affiliate_paths": list(self.affiliate_paths), "shorteners": list(self.shorteners),
                "html_kinds": list(self.html_kinds), "min_value_length": self.min_value_length,
                "value_needs_digit": self.value_needs_digit}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> IdRules:
        return cls(**data)  # type: ignore[arg-type]

    def value_ok(self, value: str) -> bool:
        """A value long enough and (by default) with a digit: ``ref=footer`` is a label, ``ref=4711`` an id."""
        if len(value) < self.min_value_length or len(value) > 128:
            return False
        return not self.value_needs_digit or any(c.isdigit() for c in value)


def _host_matches(host: str, pattern: str) -> bool:
    """``host`` (or the host with any leading labels removed) matches the glob ``pattern``:
    ``amazon.*`` matches ``www.amazon.co.uk``."""
    if pattern == "*":
        return True
    labels = host.split(".")
    return any(fnmatchcase(".".join(labels[i:]), pattern) for i in range(len(labels)))


def _same_site(target: str, host: str, domain: str) -> bool:
    """The link stays on the page's own registered domain."""
    return target == host or target == domain or target.endswith("." + domain)


def link_ids(url: str, host: str, domain: str, rules: IdRules) -> list[str]:
    """The identifiers one link URL carries, on a page of ``host`` (registered domain ``domain``)."""
    try:
        parts = urlsplit(url)
        target = (parts.hostname or "").rstrip(".")
    except ValueError:
        return []
    found: list[str] = []
    bare = target.removeprefix("www.")
    if bare in rules._short:  # type: ignore[attr-defined]
        code = parts.path.strip("/")
        if code and "/" not in code and len(code) <= 64:
            found.append(f"short:{bare}/{code}")
    if parts.query:
        params = rules._params  # type: ignore[attr-defined]
        for name, value in parse_qsl(parts.query, keep_blank_values=False):
            pattern = params.get(name.lower())
            value = value.strip()
            if pattern is not None and rules.value_ok(value) and _host_matches(target, pattern):
                found.append(f"aff:{name.lower()}={value}")
    if target and not _same_site(target, host, domain):
        for pattern in rules._paths:  # type: ignore[attr-defined]
            m = pattern.search(parts.path)
            if m and rules.value_ok(m.group(1)):
                found.append(f"path:{bare}{parts.path[:m.end(1)]}")
                break
    return found


def html_ids(text: str, kinds: Iterable[str] = HTML_KINDS) -> list[str]:
    """The ad-network and analytics identifiers in HTML source ``text``, sorted, each once."""
    found: set[str] = set()
    for kind in kinds:
        pattern, prefix = _HTML_PATTERNS[kind], _HTML_PREFIX[kind]
        found.update(prefix + m.group(1) for m in pattern.finditer(text) if _starts_well(kind, text, m.start()))
    return sorted(found)


def page_ids(urls: Iterable[str], host: str, domain: str, rules: IdRules, html: Iterable[str] = ()) -> list[str]:
    """Every identifier of one page, sorted, each once: those of its link ``urls`` and ``html`` ones."""
    found = set(html)
    for url in urls:
        found.update(link_ids(url, host, domain, rules))
    return sorted(found)
