"""The ids detector's parameters; docs/ids.md explains each default."""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import Field, field_validator

from spamflow.detector import DetectorParams
from spamflow.mr import Engine
from spamflow_ids.extract import HTML_KINDS, HtmlKind, IdRules

AFFILIATE_PARAMS: dict[str, str] = {
    "bta": "*",           # Income Access / MyAffiliates casino programs: /visit/?bta=40211
    "btag": "*",          # the same programs' btag (Income Access, NetRefer)
    "aff": "*",
    "affid": "*",
    "aff_id": "*",
    "affiliate": "*",
    "affiliate_id": "*",
    "a_aid": "*",         # Post Affiliate Pro
    "pid": "aff*.*",      # partner id, only on an affiliate system's host (aff.x.com, affiliates.y.com)
    "ref": "*",
    "tag": "amazon.*",    # Amazon Associates' tracking id (shop-20), on Amazon hosts only
}
AFFILIATE_PATHS: list[str] = [
    # partner-program paths on a third-party host: /aff/7731, /partners/123/, /track/abc9, /go/77
    r"/(?:aff|affiliate|affiliates|partner|partners|ref|referral|track|tracking|go|visit|out|click)/([A-Za-z0-9_.-]+)",
]
SHORTENERS: list[str] = [
    "bit.ly", "bitly.com", "tinyurl.com", "t.co", "goo.gl", "ow.ly", "is.gd", "buff.ly", "cutt.ly", "rebrand.ly",
    "shorturl.at", "rb.gy", "s.id", "t.ly", "tiny.cc", "v.gd", "linktr.ee", "lnk.to", "clck.ru", "u.to",
]


class IdsParams(DetectorParams):
    affiliate_params: dict[str, str] = Field(default_factory=lambda: dict(AFFILIATE_PARAMS), description=(
        "query parameters of links that carry an affiliate id, each with the host pattern (glob over the link's "
        "host or any suffix of it) the link must point to; '*': any host"))
    affiliate_paths: list[str] = Field(default_factory=lambda: list(AFFILIATE_PATHS), description=(
        "regular expressions over the path of a link to another registered domain; group 1 is the id, and the "
        "identifier is the target host with the path up to its end"))
    shorteners: list[str] = Field(default_factory=lambda: list(SHORTENERS), description=(
        "redirect and shortener hosts: a link to <host>/<code> is the identifier short:<host>/<code>"))
    html_kinds: list[HtmlKind] = Field(default_factory=lambda: list(HTML_KINDS),
                                                                     description=(
        "identifiers read from the page's HTML source: adsense (ca-pub-/pub-), ua (UA- account), ga4 (G-), "
        "gtm (GTM-); empty: none, and the WARC files are not read again"))
    min_value_length: int = Field(3, ge=1, description="shorter affiliate values (ref=1) are not identifiers")
    value_needs_digit: bool = Field(True, description=(
        "an affiliate value or path id must contain a digit: ref=footer is a label, ref=4711 an account"))
    max_domains: int = Field(20, ge=2, description=(
        "an identifier seen on more registered domains than this in a snapshot is a platform's (a theme's, a "
        "widget's, a public shortlink's), not an operator's: it is dropped and counted"))
    max_bytes: int | None = Field(None, ge=1024, description=(
        "bytes of each HTML body scanned for html_kinds; None: parse's max_bytes (the page table's bodies)"))
    max_evidence_pages: int = Field(5, ge=1, description="pages listed per identifier and host as evidence")
    engine: Engine = Field("auto", description=(
        "memory: in this process; mapreduce: one two-step mrjob job (pages and HTML ids joined by doc_id, then "
        "grouped by identifier); auto: mapreduce on a cluster runner or above mapreduce_above_pages pages"))
    mapreduce_above_pages: int = Field(10_000_000, ge=0, description="auto: more pages than this use MapReduce")
    execution_keys: ClassVar[frozenset[str]] = frozenset({"engine", "mapreduce_above_pages"})

    @field_validator("affiliate_paths")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {pattern!r}: {exc}") from None
            if compiled.groups < 1:
                raise ValueError(f"{pattern!r} has no group: group 1 is the identifier")
        return value

    def rules(self) -> IdRules:
        return IdRules(dict(self.affiliate_params), list(self.affiliate_paths), list(self.shorteners),
                       list(self.html_kinds), self.min_value_length, self.value_needs_digit)
