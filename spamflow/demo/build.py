"""Compose the synthetic web (two monthly snapshots) and its exact ground truth.

Pure and deterministic: every random choice comes from ``random.Random`` seeded with a
string derived from ``seed``, so ``build_web(seed)`` always returns the same web.
"""

from __future__ import annotations

import functools
import posixpath
import random
import re
import struct
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..words import words as _words
from . import sites as S
from .spinner import parse_dictionary, spin
from .templates import (
    HONEST_TEMPLATES,
    Link,
    PageContext,
    Style,
    blog_platform,
    esc,
    farm,
    not_found,
    quilt,
    shop,
)
from .texts import Section, TextPage, collections, spin_article, spin_dictionary_text

SNAPSHOTS = ("2026-01", "2026-02")
SNAPSHOT_START = {"2026-01": datetime(2026, 1, 5, 2, 0, tzinfo=UTC), "2026-02": datetime(2026, 2, 5, 2, 0, tzinfo=UTC)}
HTML_UTF8 = "text/html; charset=utf-8"


@dataclass
class DemoHost:
    host: str
    ip: str
    label: str  # "spam" | "nonspam"
    kind: str  # honest | quilt | linkfarm | spin | promoted


@dataclass
class DemoPage:
    url: str
    host: str
    ip: str
    snapshot: str
    fetch_time: datetime
    status: int
    content_type: str
    body: bytes
    label: str
    kind: str
    record: str = "response"  # "response" | "revisit"


@dataclass
class SyntheticWeb:
    hosts: list[DemoHost]
    snapshots: dict[str, list[DemoPage]]
    truth: dict


# --------------------------------------------------------------------------- helpers
def _rng(seed: int, *parts: object) -> random.Random:
    return random.Random(":".join(map(str, (seed,) + parts)))


def slugify(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:60]


def _png(rgb: tuple[int, int, int], size: int = 16) -> bytes:
    """A tiny valid PNG (solid colour), built by hand so no imaging library is needed."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    raw = b"".join(b"\x00" + bytes(rgb) * size for _ in range(size))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


@dataclass
class _Page:
    """A page before fetch times are assigned; ``links`` are absolute target URLs."""

    url: str
    status: int
    content_type: str
    body: bytes
    label: str
    kind: str
    links: list[str] = field(default_factory=list)
    html: bool = True
    text: TextPage | None = None  # honest content pages: the text shown (quilt sources)
    special: bool = False  # charset/BOM/404 pages: not used as quilt sources


def _links_of(url: str, ctx: PageContext, extra: Sequence[str] = ()) -> list[str]:
    hrefs = [ln.href for ln in (*ctx.nav, *ctx.outlinks, *ctx.listing)] + list(extra)
    return [urljoin(url, h) for h in hrefs if not h.startswith("#")]


# --------------------------------------------------------------------------- honest sites
@dataclass
class _HostPlan:
    host: str
    site: S.HonestSite
    template: str
    style: Style
    texts: tuple[TextPage, ...]
    scheme: str  # link style: relative | root | absolute
    paths: dict[str, list[str]]  # snapshot -> content page paths
    outlinks: dict[str, dict[str, list[Link]]]  # snapshot -> path -> outbound links


CONTENT_DIR = {
    "classic-table": "/pages/{}.html",
    "semantic-html5": "/topics/{}.html",
    "bootstrap-grid": "/articles/{n}-{}.html",
    "xhtml-strict": "/read/{}.xhtml",
    "wiki-like": "/wiki/{}",
    "minimal-blog": "/2025/{}/",
}
ABOUT = {
    "classic-table": "/about.html",
    "semantic-html5": "/about.html",
    "bootstrap-grid": "/about.html",
    "xhtml-strict": "/about.xhtml",
    "wiki-like": "/wiki/About",
    "minimal-blog": "/about/",
}
LINK_SCHEME = {
    "classic-table": "relative",
    "semantic-html5": "root",
    "bootstrap-grid": "absolute",
    "xhtml-strict": "relative",
    "wiki-like": "root",
    "minimal-blog": "relative",
}


def _content_path(template: str, n: int, title: str) -> str:
    slug = slugify(title)
    if template == "wiki-like":
        slug = slug.replace("-", "_").capitalize()
    return CONTENT_DIR[template].format(slug, n=n + 1)


def _href(scheme: str, host: str, from_path: str, to_path: str) -> str:
    """Write an in-site link the way this site's software does (relative, root-relative, absolute)."""
    if scheme == "absolute":
        return f"http://{host}{to_path}"
    if scheme == "root":
        return to_path
    base = from_path if from_path.endswith("/") else posixpath.dirname(from_path) + "/"
    rel = posixpath.relpath(to_path, base.rstrip("/") or "/")
    if to_path.endswith("/") and rel != ".":
        rel += "/"
    return "./" if rel in (".", "./") else rel


def _plan_honest(seed: int) -> list[_HostPlan]:
    colls = collections()
    plans: list[_HostPlan] = []
    for site in S.HONEST_SITES:
        for label, coll, template in site.hosts:
            host = f"{label}.{site.domain}"
            r = _rng(seed, "honest", host)
            style = Style(
                indent=r.choice(["  ", "    ", "\t", " "]),
                quote=r.choice(['"', '"', "'"]),
                prefix=slugify(site.name).split("-")[-1][:6] or "site",
                accent="#" + "".join(f"{r.randrange(30, 160):02x}" for _ in range(3)),
            )
            texts = colls[coll]
            n1 = r.randint(7, min(11, len(texts) - 2))
            extra = r.choice([0, 0, 1, 1, 2])
            paths = [_content_path(template, n, t.title) for n, t in enumerate(texts)]
            plans.append(
                _HostPlan(
                    host,
                    site,
                    template,
                    style,
                    texts,
                    LINK_SCHEME[template],
                    {SNAPSHOTS[0]: paths[:n1], SNAPSHOTS[1]: paths[: n1 + extra]},
                    {},
                )
            )
    # outbound links to other honest hosts (targets: home or a snapshot-1 content page)
    targets = [(p.host, p.site.name, ["/"] + p.paths[SNAPSHOTS[0]]) for p in plans]
    for p in plans:
        r = _rng(seed, "outlinks", p.host)
        others = [t for t in targets if t[0] != p.host]

        def pick(r: random.Random = r, others: list = others) -> Link:
            host, name, paths = r.choice(others)
            return Link(f"http://{host}{r.choice(paths)}", name, nofollow=r.random() < 0.3)

        s1 = {path: [pick() for _ in range(r.randint(1, 3))] for path in p.paths[SNAPSHOTS[1]]}
        s2 = {}
        for path, links in s1.items():  # small link changes: ~1 page in 8 rewires one link
            links = list(links)
            if r.random() < 0.125:
                links[r.randrange(len(links))] = pick()
            s2[path] = links
        p.outlinks = {SNAPSHOTS[0]: s1, SNAPSHOTS[1]: s2}
    return plans


def _render_honest(plan: _HostPlan, snap: str) -> list[_Page]:
    t, host, site = plan.template, plan.host, plan.site
    render = HONEST_TEMPLATES[t]
    ctype = "application/xhtml+xml; charset=utf-8" if site.xhtml_mime else HTML_UTF8
    footer = S.FOOTERS.get(site.domain, f"\u00a9 2026 {site.name}. All rights reserved.")
    paths = plan.paths[snap]
    about = ABOUT[t]
    pages: list[_Page] = []

    def nav(from_path: str, extra: Sequence[tuple[str, str]] = ()) -> list[Link]:
        items = [("/", "Home"), (about, "About")] + list(extra)
        return [Link(_href(plan.scheme, host, from_path, to), text) for to, text in items]

    def emit(
        path: str,
        ctx: PageContext,
        text: TextPage | None = None,
        ctype_: str = ctype,
        charset: str = "utf-8",
        special: bool = False,
        bom: bool = False,
    ) -> None:
        url = f"http://{host}{path}"
        body = render(ctx).encode(charset)
        if bom:
            body = b"\xef\xbb\xbf" + body
        pages.append(
            _Page(url, 200, ctype_, body, "nonspam", "honest", _links_of(url, ctx), text=text, special=special)
        )

    base: dict[str, Any] = dict(site_name=site.name, footer=footer, tagline=site.tagline, style=plan.style)
    titles = {p: tx.title for p, tx in zip(paths, plan.texts)}
    intro = Section(None, (f"{site.name}: {site.tagline.lower()}.",))
    emit(
        "/",
        PageContext(
            title=site.tagline,
            sections=[intro],
            nav=nav("/"),
            listing=[Link(_href(plan.scheme, host, "/", p), titles[p]) for p in paths],
            **base,
        ),
    )
    # About pages: text written for this host alone (honest sites on different domains share no runs of words)
    about_text = Section(None, S.ABOUT_TEXTS[host])
    emit(about, PageContext(title=f"About {site.name}", sections=[about_text], nav=nav(about), **base))
    for n, (path, text) in enumerate(zip(paths, plan.texts)):
        neighbours = []
        if n > 0:
            neighbours.append((paths[n - 1], "Previous"))
        if n + 1 < len(paths):
            neighbours.append((paths[n + 1], "Next"))
        if (host, "/topics/old-reading-plan.html") == S.NOT_FOUND and n == 1:
            neighbours.append((S.NOT_FOUND[1], "Our old reading plan"))
        ctx = PageContext(
            title=text.title,
            sections=text.sections,
            nav=nav(path, neighbours),
            outlinks=plan.outlinks[snap][path],
            **base,
        )
        if (host, n) == S.WINDOWS_1252_PAGE:
            ctx.meta_charset = None
            emit(path, ctx, text, "text/html; charset=windows-1252", "cp1252", special=True)
        elif (host, n) == S.LATIN1_PAGE:
            ctx.meta_charset = "iso-8859-1"
            emit(path, ctx, text, "text/html", "iso-8859-1", special=True)
        elif (host, n) == S.BOM_PAGE:
            emit(path, ctx, text, special=True, bom=True)
        else:
            emit(path, ctx, text)
    if host == S.NOT_FOUND[0]:
        url = f"http://{host}{S.NOT_FOUND[1]}"
        ctx = PageContext(
            site_name=site.name,
            title=S.NOT_FOUND[1],
            sections=[],
            nav=[],
            footer="Apache/2.4.57 (Debian) Server at " + host + " Port 80",
        )
        pages.append(
            _Page(
                url,
                404,
                "text/html; charset=iso-8859-1",
                not_found(ctx).encode("ascii"),
                "nonspam",
                "honest",
                [],
                special=True,
            )
        )
    return pages


def _assets(plan: _HostPlan) -> list[_Page]:
    """Non-HTML responses a real crawl has: a stylesheet, a logo."""
    out = []
    if plan.template == "bootstrap-grid":
        css = (
            f"body {{ font-family: Helvetica, Arial, sans-serif; }}\n.navbar-brand {{ color: {plan.style.accent}; }}\n"
            ".lead-text { font-size: 1.1em; line-height: 1.6; }\n.sidebar a { display: block; }\n"
        ).encode()
        out.append(_Page(f"http://{plan.host}/css/site.css", 200, "text/css", css, "nonspam", "honest", html=False))
    if plan.template == "classic-table":
        a = plan.style.accent
        rgb = (int(a[1:3], 16), int(a[3:5], 16), int(a[5:7], 16))
        out.append(
            _Page(f"http://{plan.host}/images/logo.png", 200, "image/png", _png(rgb), "nonspam", "honest", html=False)
        )
    return out


# --------------------------------------------------------------------------- spam
def _promoted_pages() -> list[_Page]:
    host = S.PROMOTED_HOST
    nav = [
        Link("/", "Home"),
        Link("/loans.html", "Loans"),
        Link("/casino.html", "Casino"),
        Link("/watches.html", "Watches"),
        Link("/contact.html", "Contact"),
    ]
    copy = {
        "/": (
            "Best Deals Direct",
            "Loans, bonuses and luxury for less",
            "Compare hundreds of offers in one place. Instant decisions, no paperwork, no waiting.",
        ),
        "/loans.html": (
            "Fast loans",
            "Cash in your account today",
            "Bad credit? No problem. Our partners approve nine out of ten applications within minutes.",
        ),
        "/casino.html": (
            "Casino bonuses",
            "Exclusive codes for our visitors",
            "Claim free spins and a matched deposit at the top-rated casinos we work with.",
        ),
        "/watches.html": (
            "Luxury watches",
            "Designer looks, outlet prices",
            "Hand-picked timepieces shipped worldwide with discreet packaging.",
        ),
        "/contact.html": (
            "Apply now",
            "One short form, many offers",
            "Leave your name, email and phone number and an adviser will call you back.",
        ),
    }
    out = []
    for path, (title, tagline, para) in copy.items():
        ctx = PageContext(
            site_name="Best Deals Direct",
            title=title,
            tagline=tagline,
            sections=[Section(None, (para,))],
            nav=nav,
            footer="\u00a9 2026 Best Deals Direct Ltd. Terms apply.",
        )
        url = f"http://{host}{path}"
        out.append(
            _Page(url, 200, HTML_UTF8, shop(ctx).encode(), "spam", "promoted", _links_of(url, ctx, ["/contact.html"]))
        )
    return out


def _promo_link(r: random.Random) -> tuple[str, str]:
    path, text = r.choice(
        [
            ("/", "best deals online"),
            ("/loans.html", "cheap loans"),
            ("/casino.html", "casino bonus"),
            ("/watches.html", "replica watches"),
        ]
    )
    return f"http://{S.PROMOTED_HOST}{path}", text


def _farm_pages(seed: int, snap: str) -> list[_Page]:
    hosts = S.FARM_SNAPSHOT_HOSTS[snap]
    layout = {}
    for host, pool in hosts:
        r = _rng(seed, "farm-layout", host)
        kws = S.KEYWORD_POOLS[pool].split("|")
        names = r.sample(kws, r.randint(2, 4))
        layout[host] = (pool, ["/"] + [f"/{slugify(k)}.html" for k in names], [kws[0]] + names)
    out = []
    for host, pool in hosts:
        _, paths, heads = layout[host]
        text_r = _rng(seed, "farm-text", host)  # text: stable per host
        link_r = _rng(seed, "farm-links", host, snap)  # cross-links: rewired every snapshot
        kws = S.KEYWORD_POOLS[pool].split("|")
        filler = S.FARM_FILLER.split("|")
        for path, head in zip(paths, heads):
            paras = []
            for _ in range(3):
                words: list[str] = []
                while len(words) < 45:
                    words += (text_r.choice(filler) + " " + text_r.choice(kws)).split()
                paras.append(" ".join(words).capitalize() + ".")
            others = link_r.sample([h for h, _ in hosts if h != host], link_r.randint(6, 9))
            outl = []
            for o in others:
                opool, opaths, oheads = layout[o]
                i = link_r.randrange(len(opaths))
                outl.append(Link(f"http://{o}{opaths[i]}", oheads[i]))
            promo = [_promo_link(link_r) for _ in range(link_r.randint(1, 2))]
            extra = "".join(f'<p class="kw"><a href="{u}">{t}</a></p>' for u, t in promo)
            ctx = PageContext(
                site_name=host,
                title=f"{head.title()} - {' '.join(text_r.sample(kws, 3))}",
                sections=[Section(head.title(), tuple(paras))],
                nav=[Link(p, h) for p, h in zip(paths, heads)],
                outlinks=outl,
                tagline=", ".join(kws),
                footer=f"{host} - {kws[0]} - {snap}",
                extra_html=extra,
            )
            url = f"http://{host}{path}"
            out.append(
                _Page(
                    url,
                    200,
                    HTML_UTF8,
                    farm(ctx).encode(),
                    "spam",
                    "linkfarm",
                    _links_of(url, ctx, [u for u, _ in promo]),
                )
            )
    return out


QUILT_SHARE = 0.25  # per snapshot, quilts copy at most this fraction of a source page's distinct 5-grams
QUILT_USES = 3  # per snapshot, at most this many quilt pages copy from one source page
QUILT_PATCHY = 0.4  # ... and lent plus already shared 5-grams at most this fraction (theta is 0.5)
QUILT_K = 5  # gram length the budget and the uniqueness check count in (the demo's quilt k)


def _grams(ws: Sequence[str], k: int = QUILT_K) -> set[tuple[str, ...]]:
    return {tuple(ws[i : i + k]) for i in range(len(ws) - k + 1)}


@functools.lru_cache(maxsize=1 << 13)
def _para_grams(para: str) -> frozenset[tuple[str, ...]]:
    """The 5-grams of one honest paragraph (the same paragraphs recur in every snapshot)."""
    return frozenset(_grams(_words(para)))


def _gaps(used: list[tuple[int, int]], n: int, least: int) -> list[tuple[int, int]]:
    """Free [lo, hi) token ranges of a paragraph of n tokens, at least ``least`` long."""
    out, lo = [], 0
    for a, b in sorted(used) + [(n, n)]:
        if a - lo >= least:
            out.append((lo, a))
        lo = max(lo, b)
    return out


class _PassagePicker:
    """Chooses quilt passages for one snapshot so that each honest source page lends at most
    QUILT_SHARE of its distinct 5-grams to at most QUILT_USES quilt pages (and, with the 5-grams it
    already shares with other honest pages, at most QUILT_PATCHY), passages never overlap, and
    every copied 5-gram occurs on no other honest page (so a passage's source is the one page a
    greedy source cover can find for it)."""

    def __init__(self, honest: list[_Page], domain_of: dict[str, str], exclude: set[str]):
        self.grams: dict[str, int] = {}  # url -> distinct 5-grams inside its paragraphs (a lower bound)
        page_grams_of: dict[str, set[tuple[str, ...]]] = {}
        owners: Counter[tuple[str, ...]] = Counter()  # 5-gram -> honest pages having it
        self.paras: dict[str, list[tuple[str, int, str]]] = {}  # domain -> [(url, paragraph no, paragraph)]
        for pg in honest:
            if pg.text is None:
                continue
            paras = [para for sec in pg.text.sections for para in sec.paragraphs]
            page_grams: set[tuple[str, ...]] = set()
            for para in paras:
                page_grams |= _para_grams(para)
            owners.update(page_grams)
            self.grams[pg.url] = len(page_grams)
            page_grams_of[pg.url] = page_grams
            if pg.special or pg.status != 200 or pg.url in exclude:
                continue
            for i, para in enumerate(paras):
                if len(para.split()) >= 35:
                    self.paras.setdefault(domain_of[urlsplit(pg.url).hostname or ""], []).append((pg.url, i, para))
        self.shared = {g for g, n in owners.items() if n > 1}
        self.known = set(owners)  # every 5-gram of honest prose (and, via ``forbid``, of other pages)
        self.limit = {  # url -> most 5-grams it may lend
            url: min(int(QUILT_SHARE * n), int(QUILT_PATCHY * n) - len(page_grams_of[url] & self.shared))
            for url, n in self.grams.items()
        }
        self.lent: dict[str, set[tuple[str, ...]]] = {}  # url -> 5-grams copied into quilts
        self.users: dict[str, set[str]] = {}  # url -> quilt pages copying from it
        self.used: dict[tuple[str, int], list[tuple[int, int]]] = {}  # (url, paragraph) -> copied token ranges

    def domains(self) -> list[str]:
        return sorted(self.paras)

    def forbid(self, text: str) -> None:
        self.known |= _grams(_words(text))

    def clean(self, before: str, middle: str, after: str) -> bool:
        """Does ``before middle after`` have no 5-gram outside ``before`` and ``after`` that
        another page has?  (Glue next to a passage must not echo a third page.)"""
        head, tail = _words(before)[-(QUILT_K - 1) :], _words(after)[: QUILT_K - 1]
        return not _grams(head + _words(middle) + tail) & self.known

    def pick(self, r: random.Random, domain: str, quilt_url: str, taken: set[str]) -> tuple[str, str] | None:
        """A (source url, passage) from ``domain`` for ``quilt_url``, or None if the domain is spent."""
        cands = self.paras[domain]
        for url, i, para in r.sample(cands, len(cands)):
            users = self.users.setdefault(url, set())
            if url in taken or len(users) >= QUILT_USES:
                continue
            lent = self.lent.setdefault(url, set())
            room = self.limit[url] - len(lent) + QUILT_K - 1  # words the budget allows
            toks = para.split()
            used = self.used.setdefault((url, i), [])
            gaps = _gaps(used, len(toks), 30)
            if room < 30 or not gaps:
                continue
            lo, hi = r.choice(gaps)
            n = r.randint(30, min(80, hi - lo, room))
            start = r.randint(lo, hi - n)
            passage = " ".join(toks[start : start + n])
            grams = _grams(_words(passage))
            if grams & self.shared or len(lent | grams) > self.limit[url]:
                continue
            lent |= grams
            users.add(quilt_url)
            used.append((start, start + n))
            return url, passage
        return None


def _quilt_pages(
    seed: int, snap: str, honest: list[_Page], plans: list[_HostPlan], exclude: set[str], others_text: list[str]
) -> tuple[list[_Page], dict]:
    """Najork's quilted pages: each stitched from 4-8 verbatim passages of >= 4 foreign domains.
    Pages in ``exclude`` (revisits: not pages of this snapshot) lend nothing; glue never forms a
    5-gram found in honest prose or in ``others_text``."""
    picker = _PassagePicker(honest, {p.host: p.site.domain for p in plans}, exclude)
    for text in others_text:
        picker.forbid(text)
    domains = picker.domains()
    r = _rng(seed, "quilt", snap)
    out, truth = [], {}
    for host, _ip, name in S.QUILT_HOSTS:
        titles = S.QUILT_TITLES[host]
        tagline = S.QUILT_TAGLINES[host]
        paths = [f"/{slugify(t)}.html" for t in titles]

        def ads(host: str = host) -> tuple[list[tuple[str, str]], str]:
            promo = [(_promo_link(r)[0], r.choice(S.QUILT_ADS[host])) for _ in range(2)]
            return promo, " ".join(f'<a href="{u}" class="ad">{esc(t)}</a>' for u, t in promo)

        for path, title in zip(paths, titles):
            url = f"http://{host}{path}"
            k = r.randint(4, 8)
            wanted = r.sample(domains, 4) + [r.choice(domains) for _ in range(k - 4)]
            passages, doms = [], []
            taken: set[str] = set()
            spare = [d for d in r.sample(domains, len(domains)) if d not in wanted[:4]]
            for d in wanted:
                got = picker.pick(r, d, url, taken)
                while got is None:  # this domain has nothing left to lend: take one not used yet
                    d = next(x for x in spare if x not in doms)
                    spare.remove(d)
                    got = picker.pick(r, d, url, taken)
                src, passage = got
                taken.add(src)
                doms.append(d)
                passages.append({"source": src, "text": passage})
            paras, before = [], title
            for p in passages:
                glues = S.QUILT_GLUE[host]
                glue = next((g for g in r.sample(glues, len(glues)) if picker.clean(before, g, p["text"])), None)
                if glue is None:
                    raise RuntimeError(f"no clean glue before {p['text']!r}")
                paras.append(f"{glue} {p['text']}")
                before = p["text"]
            promo, extra = ads()
            others = [Link(p, t) for p, t in zip(paths, titles) if p != path]
            for _ in range(100):  # the first link after the last passage must not echo a third page either
                nav = r.sample(others, 4)
                if picker.clean(before, "", nav[0].text):
                    break
            else:
                raise RuntimeError(f"no clean link after {before!r}")
            ctx = PageContext(
                site_name=name,
                title=title,
                tagline=tagline,
                sections=[Section(None, tuple(paras))],
                nav=nav,
                footer=f"\u00a9 2026 {name}",
                extra_html=extra,
            )
            out.append(
                _Page(
                    url,
                    200,
                    HTML_UTF8,
                    quilt(ctx).encode(),
                    "spam",
                    "quilt",
                    _links_of(url, ctx, [u for u, _ in promo]),
                )
            )
            truth[url] = {
                "host": host,
                "sources": sorted({p["source"] for p in passages}),
                "source_domains": sorted(set(doms)),
                "passages": passages,
            }
        promo, extra = ads()
        ctx = PageContext(
            site_name=name,
            title=name,
            tagline=tagline,
            sections=[],
            nav=[Link(p, t) for p, t in zip(paths, titles)],
            footer=f"\u00a9 2026 {name}",
            extra_html=extra,
        )
        url = f"http://{host}/"
        out.insert(
            len(out) - len(paths),
            _Page(
                url, 200, HTML_UTF8, quilt(ctx).encode(), "spam", "quilt", _links_of(url, ctx, [u for u, _ in promo])
            ),
        )
    return out, truth


def spun_copies(seed: int) -> dict[str, tuple[str, str]]:
    """host -> (spun title, spun article) for every spin host of the campaign."""
    d = parse_dictionary(spin_dictionary_text())
    out = {}
    for host, _ in S.SPIN_HOSTS:
        r = _rng(seed, "spin", host)
        out[host] = (spin(S.SPIN_TITLE, d, r), spin(spin_article(), d, r))
    texts = [t for _, t in out.values()]
    assert len(set(texts)) == len(texts), "spun copies must differ"
    return out


def _spin_pages(seed: int, snap: str, copies: dict[str, tuple[str, str]]) -> tuple[list[_Page], list[str]]:
    out, urls = [], []
    for host, _ip in S.SPIN_SNAPSHOT_HOSTS[snap]:
        r = _rng(seed, "spin-page", host)
        platform = next((p for p in S.SPIN_PLATFORMS if host.endswith("." + p)), None)
        user = host.split(".")[0] if platform else host.split(".")[1]
        name = user.replace("-", " ").title()
        title, article = copies[host]
        post = f"/post/{slugify(title)}.html" if platform else f"/{2025 + r.randint(0, 1)}/{slugify(title)}/"
        u, anchor = _promo_link(r)
        extra = f'<p>Further reading: <a href="{u}">{anchor}</a></p>'
        style = Style(prefix=(platform or host).split(".")[0][:8], indent="  " if platform else r.choice(["  ", "\t"]))
        paras = tuple(article.split("\n\n"))
        nav = [Link("/", "Home"), Link(post, title)]
        ctx = PageContext(
            site_name=name,
            title=title,
            tagline=f"{name}'s blog",
            sections=[Section(None, paras)],
            nav=nav,
            footer=f"Powered by {platform or 'WordPress'}",
            style=style,
            extra_html=extra,
        )
        url = f"http://{host}{post}"
        out.append(_Page(url, 200, HTML_UTF8, blog_platform(ctx).encode(), "spam", "spin", _links_of(url, ctx, [u])))
        urls.append(url)
        excerpt = " ".join(paras[0].split()[:30]) + " [...]"
        hctx = PageContext(
            site_name=name,
            title=name,
            tagline=f"{name}'s blog",
            sections=[Section(title, (excerpt,))],
            nav=nav,
            listing=[Link(post, "Continue reading")],
            footer=ctx.footer,
            style=style,
        )
        hurl = f"http://{host}/"
        out.insert(
            len(out) - 1,
            _Page(hurl, 200, HTML_UTF8, blog_platform(hctx).encode(), "spam", "spin", _links_of(hurl, hctx)),
        )
    return out, urls


def _robots(host: str, r: random.Random) -> bytes:
    lines = ["User-agent: *", r.choice(["Disallow: /cgi-bin/", "Disallow: /admin/", "Disallow:"])]
    if r.random() < 0.5:
        lines.append(f"Sitemap: http://{host}/sitemap.xml")
    return ("\n".join(lines) + "\n").encode()


# --------------------------------------------------------------------------- assembly
def build_web(seed: int = 0) -> SyntheticWeb:
    """Build both snapshots and the ground truth in memory (no I/O besides package data)."""
    plans = _plan_honest(seed)
    copies = spun_copies(seed)
    host_info: dict[str, dict] = {}
    for p in plans:
        host_info[p.host] = {
            "ip": p.site.ip,
            "label": "nonspam",
            "kind": "honest",
            "domain": p.site.domain,
            "template": p.template,
        }
    for host, ip, _ in S.QUILT_HOSTS:
        host_info[host] = {"ip": ip, "label": "spam", "kind": "quilt", "template": "quilt"}
    for i, (host, _) in enumerate(S.FARM_HOSTS):
        host_info[host] = {"ip": S.FARM_IPS[i % 3], "label": "spam", "kind": "linkfarm", "template": "farm"}
    for host, ip in S.SPIN_HOSTS:
        host_info[host] = {"ip": ip, "label": "spam", "kind": "spin", "template": "blog-platform"}
    host_info[S.PROMOTED_HOST] = {"ip": S.PROMOTED_IP, "label": "spam", "kind": "promoted", "template": "shop"}

    snapshots: dict[str, list[DemoPage]] = {}
    truth: dict = {
        "seed": seed,
        "snapshots": list(SNAPSHOTS),
        "promoted_host": S.PROMOTED_HOST,
        "quilts": {},
        "host_edges": {},
        "revisits": {},
        "linkfarm": {"ips": list(S.FARM_IPS), "template": "farm", "hosts": {}},
        "spin": {
            "title": S.SPIN_TITLE,
            "article": spin_article(),
            "dictionary": "spamflow/demo/texts/spin-dictionary.txt",
            "promoted_host": S.PROMOTED_HOST,
            "copies": {},
        },
        "special_pages": {},
    }
    previous: dict[str, _Page] = {}
    for snap in SNAPSHOTS:
        by_host: dict[str, list[_Page]] = {}
        for p in plans:
            by_host[p.host] = _render_honest(p, snap) + _assets(p)
        honest = [pg for pages in by_host.values() for pg in pages if pg.html]

        # revisits: a few honest pages unchanged since snapshot 1
        revisit: dict[str, str] = {}
        if snap != SNAPSHOTS[0]:
            r = _rng(seed, "revisits")
            same = [
                pg.url
                for pages in by_host.values()
                for pg in pages
                if pg.kind == "honest"
                and pg.html
                and not pg.special
                and urlsplit(pg.url).path != "/"
                and pg.url in previous
                and previous[pg.url].body == pg.body
            ]
            for n, url in enumerate(sorted(r.sample(same, 8))):
                revisit[url] = "server-not-modified" if n % 2 == 0 else "identical-payload-digest"
            truth["revisits"][snap] = revisit

        # quilts copy only from pages of this snapshot: a revisit is not a page of its snapshot
        spun = [text for pair in copies.values() for text in pair]
        qpages, qtruth = _quilt_pages(seed, snap, honest, plans, set(revisit), spun)
        truth["quilts"][snap] = qtruth
        fpages = _farm_pages(seed, snap)
        spages, surls = _spin_pages(seed, snap, copies)
        truth["linkfarm"]["hosts"][snap] = [h for h, _ in S.FARM_SNAPSHOT_HOSTS[snap]]
        truth["spin"]["copies"][snap] = surls
        for pg in qpages + fpages + spages + _promoted_pages():
            by_host.setdefault(urlsplit(pg.url).hostname or "", []).append(pg)

        pages: list[DemoPage] = []
        t = SNAPSHOT_START[snap]
        edges: set[tuple[str, str]] = set()
        r_time = _rng(seed, "fetch-times", snap)
        for host in sorted(by_host, key=lambda h: (host_info[h]["kind"] != "honest", list(host_info).index(h))):
            info = host_info[host]
            fetches = [
                (f"http://{host}/robots.txt", 200, "text/plain", _robots(host, _rng(seed, "robots", host)), "response")
            ]
            for pg in by_host[host]:
                if pg.url in revisit:
                    nm = revisit[pg.url] == "server-not-modified"
                    fetches.append((pg.url, 304 if nm else 200, pg.content_type, b"" if nm else pg.body, "revisit"))
                else:
                    fetches.append((pg.url, pg.status, pg.content_type, pg.body, "response"))
                if pg.html and pg.status == 200:
                    edges.update(
                        (host, urlsplit(ln).hostname or "")
                        for ln in pg.links
                        if urlsplit(ln).hostname and urlsplit(ln).hostname != host
                    )
                previous[pg.url] = pg
            for url, status, ctype, body, record in fetches:
                t += timedelta(seconds=r_time.randint(20, 60))
                pages.append(
                    DemoPage(url, host, info["ip"], snap, t, status, ctype, body, info["label"], info["kind"], record)
                )
        snapshots[snap] = pages
        truth["host_edges"][snap] = sorted(list(e) for e in edges)

    def page_url(hn: tuple[str, int]) -> str:
        plan = next(p for p in plans if p.host == hn[0])
        return f"http://{plan.host}{plan.paths[SNAPSHOTS[0]][hn[1]]}"

    truth["special_pages"] = {
        "windows-1252": page_url(S.WINDOWS_1252_PAGE),
        "iso-8859-1": page_url(S.LATIN1_PAGE),
        "utf-8-bom": page_url(S.BOM_PAGE),
        "not-found": f"http://{S.NOT_FOUND[0]}{S.NOT_FOUND[1]}",
    }
    present = {snap: sorted({pg.host for pg in pages}) for snap, pages in snapshots.items()}
    for host, info in host_info.items():
        info["snapshots"] = [s for s in SNAPSHOTS if host in present[s]]
    truth["hosts"] = host_info
    hosts = [DemoHost(h, i["ip"], i["label"], i["kind"]) for h, i in host_info.items()]
    return SyntheticWeb(hosts, snapshots, truth)
