"""Doorway families from real parts, for HSS's threshold benchmark and tests.

A doorway kit is one generator: one skeleton (a real page's markup), many pages, each with a
body stitched from snippets of scraped text, as search-spam generators do.  Here:

* **the real kit** (``../shared/data/doorway-spam-gambling``, PROVENANCE.md): 800 real doorway
  pages of two skeletons (families ``A``, ``B``, 400 each), all on their one host, as published;
* **stitched families** built from real parts: a skeleton is a real page (one page of each real
  kit, and real pages of other sites from ``html-mozilla-readability``), its visible text
  blocks emptied and its largest one replaced by the body; the body is ``snippets`` snippets
  of 20-60 consecutive words, each from a randomly chosen real document (the PAN-13 source and
  suspicious documents and the Clough-Stevenson corpus: ~2,200 documents), half of them
  introduced by a link to a real URL (the URLs of the trafilatura and article-extraction
  indexes), as scraped search results are; the page's keyword (a real kit keyword) goes into
  its ``<title>``.  Each family lives on ``domains`` registered domains of its own.
* **dilute families** (:func:`dilute_families`), as dilute as the real kit issue 35 describes
  (within-family Sim_b 7-17 of 128 with the paper's whole-page noise, where the stitched ones
  above match on 19-40): a lean skeleton and a body of punctuation-heavy scraped search results
  (titles, displayed URLs, dates, ratings, short fragments of real text between ellipses and
  separators, few tags) 3-8 times the skeleton's own noise.

Everything is drawn from ``random.Random(seed)``: the same seed gives the same pages.
``doorway_pages()`` returns :class:`DoorwayPage` rows (family, host, url, html); nothing here
depends on HSS.  The data is read from ``../shared/data`` (``available()`` says whether it is
there).
"""

from __future__ import annotations

import functools
import html as html_lib
import random
import re
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
KIT = SHARED_DATA / "doorway-spam-gambling"
READABILITY = SHARED_DATA / "html-mozilla-readability" / "readability-test-pages.tar.xz"
PAN13 = SHARED_DATA / "pan13-text-alignment-no-obfuscation-subset" / "pan13-02-subset.tar.gz"
CLOUGH = SHARED_DATA / "clough-stevenson-plagiarism-corpus" / "corpus-20090418.tar.gz"
URL_INDEXES = (SHARED_DATA / "html-trafilatura-eval" / "index.tsv",
               SHARED_DATA / "html-article-extraction-benchmark" / "index.tsv")
KIT_HOST = "umsid16.github.io"
# real pages of other sites used as skeletons (their own markup, scripts and styles kept)
READABILITY_SKELETONS = ("mozilla-2", "mercurial", "ehow-1", "gitlab-blog")
_SCRIPT_STYLE = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TEXT = re.compile(r">([^<]{40,})<")
_TITLE = re.compile(r"(<title[^>]*>)(.*?)(</title>)", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class DoorwayPage:
    family: str
    host: str
    url: str
    html: str


def available() -> bool:
    return all(p.exists() for p in (KIT / "umsid16-pages.tar.xz", READABILITY, PAN13, CLOUGH, *URL_INDEXES))


def archive_members(archive: Path, keep: Callable[[str], bool], count: int | None = None) -> dict[str, bytes]:
    """The files of a tar archive whose names ``keep`` accepts (stopping at ``count`` of them),
    read in the archive's own order in one pass: extracting members in another order makes a
    compressed (``.xz``, ``.gz``) archive decompress again from its start at each backward seek
    (23 s instead of 0.3 s for the real kit)."""
    out: dict[str, bytes] = {}
    with tarfile.open(archive, "r|*") as tar:
        for member in tar:
            if member.isfile() and keep(member.name):
                out[member.name] = tar.extractfile(member).read()  # type: ignore[union-attr]
                if len(out) == count:
                    break
    return out


@functools.cache
def kit_pages() -> tuple[DoorwayPage, ...]:
    """The 800 real doorway pages: family ``A`` / ``B``, their generator template."""
    template = {}
    for line in (KIT / "index.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        name, path, _commit, which = line.split("\t")
        template[name] = (path, which)
    def key(name: str) -> str:
        return "/".join(name.split("/")[-2:])

    members = archive_members(KIT / "umsid16-pages.tar.xz", lambda name: key(name) in template)
    return tuple(DoorwayPage(template[key(name)][1], KIT_HOST, f"https://{KIT_HOST}/{template[key(name)][0]}",
                             members[name].decode("utf-8", "replace")) for name in sorted(members))


@functools.cache
def _documents() -> tuple[tuple[str, ...], ...]:
    """Real texts as word lists (PAN-13 and Clough-Stevenson), each long enough for a snippet."""
    docs = []
    for archive in (PAN13, CLOUGH):
        members = archive_members(archive, lambda name, archive=archive: name.endswith(".txt") and (
            archive == CLOUGH or "/src/" in name or "/susp/" in name))
        for name in sorted(members):
            words = members[name].decode("utf-8", "replace").split()
            if len(words) >= 80:
                docs.append(tuple(words))
    return tuple(docs)


@functools.cache
def _urls() -> tuple[str, ...]:
    urls = []
    for index in URL_INDEXES:
        for line in index.read_text(encoding="utf-8").splitlines()[1:]:
            urls += [f for f in line.split("\t") if f.startswith("http")][:1]
    return tuple(sorted(set(urls)))


@functools.cache
def skeletons() -> dict[str, str]:
    """Skeleton name -> real HTML: the first page of each real kit, and the readability pages."""
    out = {}
    for page in kit_pages():
        out.setdefault(f"skel-{page.family}", page.html)  # skel-A, skel-B
    wanted = {f"test-pages/{name}/source.html": name for name in READABILITY_SKELETONS}
    members = archive_members(READABILITY, wanted.__contains__)
    for member, name in wanted.items():
        out[f"skel-{name}"] = members[member].decode("utf-8", "replace")
    return out


def _body(rng: random.Random, snippets: int) -> str:
    docs, urls = _documents(), _urls()
    paragraphs = []
    for _ in range(snippets):
        words = rng.choice(docs)
        size = rng.randint(20, 60)
        start = rng.randrange(0, len(words) - size)
        text = html_lib.escape(" ".join(words[start:start + size]), quote=False)
        if rng.random() < 0.5:
            title = html_lib.escape(" ".join(words[start:start + rng.randint(3, 8)]), quote=False)
            text = f'<a href="{html_lib.escape(rng.choice(urls))}">{title}</a> {text}'
        paragraphs.append(f"<p>{text}</p>")
    return "\n".join(paragraphs)


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
SEPARATORS = (" ... ", " ... ", " - ", " | ", " — ", " · ", " › ", "; ", " / ")


FRAGMENT = (1, 7)  # words between two separators of a search snippet
LINKED = 0.05  # results whose title is a link (their URL is markup noise too)


def _result(rng: random.Random, docs: tuple[tuple[str, ...], ...], urls: tuple[str, ...]) -> str:
    """One scraped search result as a dilute kit pastes it, as text: its title and displayed
    URL (``host › path › page``), often a date (``Mar 3, 2013 —``) or a rating
    (``Rating: 4.5 - 123 votes``), and three to eight fragments of 1-7 consecutive words of a
    real text, joined by ellipses and other separators: punctuation-heavy, as search snippets
    are; ``LINKED`` of the titles are links."""
    url = rng.choice(urls)
    host, _, path = url.split("://", 1)[-1].partition("/")
    crumbs = " › ".join([host, *[c for c in path.split("/") if c][:rng.randint(1, 3)]])
    words = rng.choice(docs)
    start = rng.randrange(0, len(words) - 10)
    title = html_lib.escape(" ".join(words[start:start + rng.randint(3, 9)]), quote=False)
    if rng.random() < LINKED:
        title = f'<a href="{html_lib.escape(url)}">{title}</a>'
    parts = [crumbs]
    if rng.random() < 0.6:
        parts.append(f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(2005, 2014)} —")
    elif rng.random() < 0.5:
        parts.append(f"Rating: {rng.randint(1, 4)}.{rng.randint(0, 9)} - {rng.randint(2, 999)} votes -")
    text = "..."
    words = rng.choice(docs)
    start = rng.randrange(0, len(words) - 60)
    for _ in range(rng.randint(3, 8)):
        size = rng.randint(FRAGMENT[0], FRAGMENT[1])
        text += " ".join(words[start:start + size]) + rng.choice(SEPARATORS)
        start += size
    parts.append(text.rstrip() + "...")
    return title + " " + html_lib.escape(" ".join(parts), quote=False)


_NOT_NOISE = re.compile(r"[^\W_]+")  # letters and digits: what HTML noise drops (close enough to measure size)


def _noise_grams(html: str, n: int = 32) -> int:
    """Distinct n-grams of ``html``'s non-alphanumeric characters: how much a page part weighs in
    HSS's whole-page noise (the paper's n = 32)."""
    noise = _NOT_NOISE.sub("", html)
    return len({noise[i:i + n] for i in range(len(noise) - n + 1)})


def dilute_body(rng: random.Random, weight: int) -> str:
    """A dilute kit's body: scraped search results (:func:`_result`) as plain text in a few
    paragraphs (few tags: the text, not the markup, fills the page), added until its noise
    holds ``weight`` distinct 32-grams."""
    docs, urls = _documents(), _urls()
    items: list[str] = []
    have = 0
    while have < weight:
        chunk = [_result(rng, docs, urls) for _ in range(20)]
        items += chunk
        have += len(_NOT_NOISE.sub("", " ".join(chunk)))  # its 32-grams are nearly all distinct
    cuts = sorted(rng.sample(range(1, len(items)), rng.randint(2, 6)))
    return "\n".join(f"<p>{' '.join(items[a:b])}</p>" for a, b in zip([0, *cuts], [*cuts, len(items)]))


def lean(skeleton: str) -> str:
    """The skeleton without the bodies of its inline scripts and styles (their tags kept), as
    a generator's lean template has them in external files: the text then dominates the page."""
    return _SCRIPT_STYLE.sub(lambda m: m.group(0)[:m.group(0).index(">") + 1] + f"</{m.group(1)}>", skeleton)


def stitch(skeleton: str, body: str, keyword: str) -> str:
    """The skeleton with its visible text blocks (40+ characters outside script and style)
    emptied, the largest one replaced by ``body``, and ``keyword`` as its title."""
    hidden = [(m.start(), m.end()) for m in _SCRIPT_STYLE.finditer(skeleton)]
    blocks = [m for m in _TEXT.finditer(skeleton)
              if not any(a <= m.start() < b for a, b in hidden) and m.group(1).strip()]
    largest = max(blocks, key=lambda m: len(m.group(1).strip()), default=None)
    out, last = [], 0
    for m in blocks:
        out += [skeleton[last:m.start(1)], body if m is largest else ""]
        last = m.end(1)
    out.append(skeleton[last:])
    page = "".join(out) if largest is not None else skeleton.replace("</body>", body + "</body>", 1)
    return _TITLE.sub(lambda m: m.group(1) + html_lib.escape(keyword) + m.group(3), page, count=1)


def stitched_families(pages_per_family: int = 60, snippets: tuple[int, int] = (40, 160), domains: int = 1,
                      seed: int = 0) -> list[DoorwayPage]:
    """Two families per skeleton, its whole markup (``<skeleton>``) and its lean form
    (``<skeleton>-lean``, :func:`lean`): ``pages_per_family`` pages each, with a body of
    ``snippets[0]..snippets[1]`` snippets, spread over ``domains`` registered domains.  A family
    on a real kit's skeleton is named after it (``A``, ``B``: the kit's template, on other
    hosts), the others ``s-<page>``; both forms of a skeleton are one family (one template).
    Each form has its own hosts."""
    rng = random.Random(seed)
    keywords = sorted({p.url.rstrip("/").split("/")[-2] for p in kit_pages()})
    out = []
    variants = [(name.removeprefix("skel-") + suffix, make(skeleton)) for name, skeleton in sorted(skeletons().items())
                for suffix, make in (("", str), ("-lean", lean))]
    for number, (name, skeleton) in enumerate(variants):
        base = name.removesuffix("-lean")
        family = base if base in ("A", "B") else f"s-{base}"  # a skeleton's lean form is its family too
        hosts = [f"www.doorway-{name.lower()}-{d}-{number}.example" for d in range(domains)]
        for i in range(pages_per_family):
            keyword = rng.choice(keywords)
            host = hosts[i % domains]
            html = stitch(skeleton, _body(rng, rng.randint(*snippets)), keyword)
            out.append(DoorwayPage(family, host, f"http://{host}/{keyword}-{i}.html", html))
    return out


def dilute_families(pages_per_family: int = 60, ratio: tuple[float, float] = (3.0, 8.0), domains: int = 1,
                    seed: int = 0) -> list[DoorwayPage]:
    """Dilute families, as dilute as the real kit the issue describes (within-family Sim_b 7-17
    of 128 with the paper's noise): one per skeleton, its lean form (:func:`lean`), each page's
    body (:func:`dilute_body`: punctuation-heavy search results, few tags) ``ratio[0]..ratio[1]``
    times the skeleton's own noise (distinct 32-grams), so that two pages of a family share
    1/(1 + r1 + r2) of their n-grams: 1/17..1/7, i.e. ~7.5..18 of 128 dimensions.  Families are
    named as in :func:`stitched_families` (``A``, ``B``, ``s-<page>``), on hosts of their own."""
    rng = random.Random(seed + 1_000_003)
    keywords = sorted({p.url.rstrip("/").split("/")[-2] for p in kit_pages()})
    out = []
    for number, (name, skeleton) in enumerate(sorted(skeletons().items())):
        base = name.removeprefix("skel-")
        family = base if base in ("A", "B") else f"s-{base}"
        skeleton = lean(skeleton)
        weight = _noise_grams(stitch(skeleton, "", "x"))
        hosts = [f"www.dilute-{base.lower()}-{d}-{number}.example" for d in range(domains)]
        for i in range(pages_per_family):
            keyword = rng.choice(keywords)
            host = hosts[i % domains]
            html = stitch(skeleton, dilute_body(rng, round(weight * rng.uniform(*ratio))), keyword)
            out.append(DoorwayPage(family, host, f"http://{host}/{keyword}-{i}.html", html))
    return out


def doorway_pages(pages_per_family: int = 60, snippets: tuple[int, int] = (40, 160), domains: int = 1,
                  seed: int = 0, dilute: bool = False) -> list[DoorwayPage]:
    """The real kit and the stitched families (``dilute``: the dilute families instead,
    :func:`dilute_families`, ``pages_per_family`` each)."""
    if dilute:
        return [*kit_pages(), *dilute_families(pages_per_family, domains=domains, seed=seed)]
    return [*kit_pages(), *stitched_families(pages_per_family, snippets, domains, seed)]
