"""Build the shipped honest-site texts (``texts/honest.json.gz``, ``texts/spin-article.txt``).

Not run at demo time: the output is committed as package data.  It is kept so that
anyone can check what was selected from which public-domain source and how.

Inputs (see ``texts/PROVENANCE.md`` for versions and licences):

* ``--devil``  ``devil.dict.dz`` from Debian ``dict-devil`` (Bierce, *The Devil's Dictionary*)
* ``--jargon`` ``jargon.dict.dz`` from Debian ``dict-jargon`` (the Jargon File 4.4.7)
* ``--kjv``    a directory of chapter dumps made with Debian ``bible-kjv`` (text from
  ``bible-kjv-text``), one file per book, e.g.
  ``for c in $(seq 1 16); do bible -f "Gen$c:1-200"; done > Gen.txt``

Usage: ``python -m spamflow.demo.build_texts --devil D --jargon J --kjv DIR --out spamflow/demo/texts``
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from pathlib import Path

PAGES_PER_COLLECTION = 15

# collection name -> (KJV book file stem, display name, chapters to use)
KJV_COLLECTIONS: dict[str, tuple[str, str, list[int]]] = {
    "kjv-genesis": ("Gen", "Genesis", list(range(1, 16))),
    "kjv-job": ("Job", "Job", list(range(1, 16))),
    "kjv-psalms-a": ("Ps", "Psalm", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16]),
    "kjv-psalms-b": ("Ps", "Psalm", list(range(19, 40, 1))[:15]),
    "kjv-proverbs": ("Prov", "Proverbs", list(range(1, 16))),
    "kjv-ecclesiastes": ("Eccl", "Ecclesiastes", list(range(1, 13))),
    "kjv-john-a": ("John", "John", list(range(1, 9))),
    "kjv-john-b": ("John", "John", list(range(9, 22))),
    "kjv-acts": ("Acts", "Acts", list(range(1, 16))),
    "kjv-ruth-esther": ("Ruth", "Ruth", [1, 2, 3, 4]),
}
EXTRA_BOOKS = {"kjv-ruth-esther": ("Esth", "Esther", list(range(1, 11)))}

# collection name -> first letters of headwords (case-insensitive)
JARGON_COLLECTIONS = {
    "jargon-ab": "ab",
    "jargon-cd": "cd",
    "jargon-eh": "efgh",
    "jargon-im": "ijklm",
    "jargon-nr": "nopqr",
    "jargon-sz": "stuvwxyz",
}
DEVIL_COLLECTIONS = {"devil-ac": "abc", "devil-dh": "defgh", "devil-io": "ijklmno", "devil-pz": "pqrstuvwxyz"}


def words(text: str) -> int:
    return len(text.split())


def read_dictd(path: Path) -> str:
    """``.dict.dz`` is dictzip, which is gzip-compatible."""
    return gzip.decompress(path.read_bytes()).decode("utf-8")


# ---------------------------------------------------------------- KJV
def kjv_chapters(path: Path) -> dict[int, list[str]]:
    chapters: dict[int, list[str]] = {}
    for line in path.read_text("utf-8").splitlines():
        m = re.match(r"^[A-Za-z]+(\d+):(\d+) (.*)$", line)
        if m:
            chapters.setdefault(int(m.group(1)), []).append(m.group(3).strip())
    return chapters


def kjv_pages(title: str, verses: list[str], max_words: int = 520) -> list[dict]:
    """Group verses into paragraphs of >= 45 words (so a 30-80 word passage fits in one);
    a long chapter becomes several pages of about ``max_words``."""
    paragraphs, cur = [], []
    for v in verses:
        cur.append(v)
        if words(" ".join(cur)) >= 45:
            paragraphs.append(" ".join(cur))
            cur = []
    if cur:
        paragraphs.append(" ".join(cur))
    pages, page = [], []
    for p in paragraphs:
        page.append(p)
        if sum(words(x) for x in page) >= max_words:
            pages.append(page)
            page = []
    if page and (not pages or sum(words(x) for x in page) >= 120):
        pages.append(page)
    return [
        {"title": title if i == 0 else f"{title} (part {i + 1})", "sections": [{"heading": None, "paragraphs": pg}]}
        for i, pg in enumerate(pages)
    ]


def build_kjv(kjv_dir: Path) -> dict[str, dict]:
    out = {}
    for name, (stem, display, chapters) in KJV_COLLECTIONS.items():
        pages = []
        specs = [(stem, display, chapters)] + ([EXTRA_BOOKS[name]] if name in EXTRA_BOOKS else [])
        for st, disp, chs in specs:
            text = kjv_chapters(kjv_dir / f"{st}.txt")
            for c in chs:
                pages.extend(kjv_pages(f"{disp} {c}", text[c]))
        out[name] = {"source": "kjv", "pages": pages[:PAGES_PER_COLLECTION]}
    return out


# ---------------------------------------------------------------- Jargon File
def jargon_entries(text: str) -> list[tuple[str, list[str]]]:
    """Headword at column 0, grammar line at column 1, prose paragraphs indented by 4."""
    entries: list[tuple[str, list[str]]] = []
    head: str | None = None
    paras: list[str] = []
    block: list[str] = []

    def flush_block() -> None:
        if head and block and all(ln.startswith("    ") and not ln.startswith("     ") for ln in block):
            p = " ".join(ln.strip() for ln in block)
            p = re.sub(r"\{\s*([^}]*?)\s*\}", r"\1", p)
            if not p.startswith("[") and words(p) >= 20 and "@" not in p:
                paras.append(p)
        block.clear()

    for line in text.splitlines():
        if line and not line[0].isspace():
            flush_block()
            if head and paras:
                entries.append((head, paras))
            head, paras = line.strip(), []
        elif not line.strip():
            flush_block()
        elif line.startswith("    ") or block:
            block.append(line)
    flush_block()
    if head and paras:
        entries.append((head, paras))
    return [(h, p) for h, p in entries if not h.startswith("00-")]


def group_pages(entries: list[tuple[str, list[str]]], min_words: int, kind: str) -> list[dict]:
    pages, sections, total = [], [], 0
    for head, paras in entries:
        sections.append({"heading": head, "paragraphs": paras})
        total += sum(words(p) for p in paras)
        if total >= min_words:
            first, last = sections[0]["heading"], sections[-1]["heading"]
            pages.append({"title": f"{kind}: {first} to {last}", "sections": sections})
            sections, total = [], 0
        if len(pages) == PAGES_PER_COLLECTION:
            break
    return pages


def build_jargon(path: Path) -> dict[str, dict]:
    entries = [e for e in jargon_entries(read_dictd(path)) if sum(words(p) for p in e[1]) >= 60]
    out = {}
    for name, letters in JARGON_COLLECTIONS.items():
        sel = [e for e in entries if e[0][:1].lower() in letters]
        out[name] = {"source": "jargon", "pages": group_pages(sel, 380, "Terms")}
    return out


# ---------------------------------------------------------------- Devil's Dictionary
ENTRY_RE = re.compile(r"^([A-Z][A-Z'\- ]*[A-Z]), [a-z]")


def devil_entries(text: str) -> tuple[list[tuple[str, list[str]]], str]:
    """Blocks separated by blank lines; verse (indented) blocks are skipped."""
    blocks = re.split(r"\n\s*\n", text)
    preface: list[str] = []
    entries: list[tuple[str, list[str]]] = []
    in_preface = False
    for b in blocks:
        lines = b.strip("\n").splitlines()
        if not lines:
            continue
        if "PREFACE" in b:
            in_preface = True
            continue
        m = ENTRY_RE.match(lines[0])
        if m:
            in_preface = False
            entries.append((m.group(1).title(), []))
        if in_preface:
            preface.append(b)
            continue
        if entries and not lines[0].startswith(" "):
            prose = [ln for ln in lines if not ln.startswith(" ")]
            p = re.sub(r"\s+", " ", " ".join(prose)).replace("_", "").strip()
            entries[-1][1].append(p)
    # preface: paragraphs start with a 4-space indent; drop the "A.B." signature
    ptext = "\n".join(preface)
    ptext = re.sub(r"\n\s{20,}A\.B\.\s*$", "", ptext.strip())
    paras = [re.sub(r"\s+", " ", p).replace("_", "").strip() for p in re.split(r"\n(?=    )", "\n" + ptext)]
    return entries, "\n\n".join(p for p in paras if p)


def build_devil(path: Path) -> tuple[dict[str, dict], str]:
    entries, preface = devil_entries(read_dictd(path))
    entries = [e for e in entries if e[1] and sum(words(p) for p in e[1]) >= 15]
    out = {}
    for name, letters in DEVIL_COLLECTIONS.items():
        sel = [e for e in entries if e[0][:1].lower() in letters]
        out[name] = {"source": "devil", "pages": group_pages(sel, 240, "Definitions")}
    return out, preface


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--devil", type=Path, required=True)
    ap.add_argument("--jargon", type=Path, required=True)
    ap.add_argument("--kjv", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    devil, preface = build_devil(a.devil)
    collections = {**build_kjv(a.kjv), **build_jargon(a.jargon), **devil}
    for name, c in collections.items():
        assert len(c["pages"]) >= 12, (name, len(c["pages"]))
    blob = json.dumps({"collections": collections}, ensure_ascii=False, indent=0, sort_keys=True)
    a.out.mkdir(parents=True, exist_ok=True)
    with open(a.out / "honest.json.gz", "wb") as f:  # mtime=0: byte-stable output
        f.write(gzip.compress(blob.encode("utf-8"), compresslevel=9, mtime=0))
    (a.out / "spin-article.txt").write_text(preface + "\n", "utf-8")
    for name, c in collections.items():
        n = sum(words(p) for pg in c["pages"] for s in pg["sections"] for p in s["paragraphs"])
        print(f"{name:20s} pages={len(c['pages']):3d} words={n}")
    print("spin article words:", words(preface))


if __name__ == "__main__":
    main()
