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


@functools.cache
def kit_pages() -> tuple[DoorwayPage, ...]:
    """The 800 real doorway pages: family ``A`` / ``B``, their generator template."""
    template = {}
    for line in (KIT / "index.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        name, path, _commit, which = line.split("\t")
        template[name] = (path, which)
    pages = []
    with tarfile.open(KIT / "umsid16-pages.tar.xz") as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            key = "/".join(member.name.split("/")[-2:])
            if member.isfile() and key in template:
                path, which = template[key]
                body = tar.extractfile(member).read().decode("utf-8", "replace")  # type: ignore[union-attr]
                pages.append(DoorwayPage(which, KIT_HOST, f"https://{KIT_HOST}/{path}", body))
    return tuple(pages)


@functools.cache
def _documents() -> tuple[tuple[str, ...], ...]:
    """Real texts as word lists (PAN-13 and Clough-Stevenson), each long enough for a snippet."""
    docs = []
    for archive in (PAN13, CLOUGH):
        with tarfile.open(archive) as tar:
            for member in sorted(tar.getmembers(), key=lambda m: m.name):
                if member.isfile() and member.name.endswith(".txt") and (
                        archive == CLOUGH or "/src/" in member.name or "/susp/" in member.name):
                    words = tar.extractfile(member).read().decode("utf-8", "replace").split()  # type: ignore[union-attr]
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
    with tarfile.open(READABILITY) as tar:
        for name in READABILITY_SKELETONS:
            out[f"skel-{name}"] = tar.extractfile(f"test-pages/{name}/source.html").read().decode(  # type: ignore[union-attr]
                "utf-8", "replace")
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


def doorway_pages(pages_per_family: int = 60, snippets: tuple[int, int] = (40, 160), domains: int = 1,
                  seed: int = 0) -> list[DoorwayPage]:
    """The real kit and the stitched families."""
    return [*kit_pages(), *stitched_families(pages_per_family, snippets, domains, seed)]
