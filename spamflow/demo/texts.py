"""Load the texts shipped with the demo (see ``texts/PROVENANCE.md``).

Everything the synthetic web says comes from these files, so the demo runs offline
and the honest sites carry real human prose, which the quilt and spin detectors need.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources


@dataclass(frozen=True)
class Section:
    heading: str | None
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class TextPage:
    title: str
    sections: tuple[Section, ...]


def _read(name: str) -> bytes:
    return resources.files("spamflow.demo").joinpath("texts", name).read_bytes()


@lru_cache(maxsize=1)
def collections() -> dict[str, tuple[TextPage, ...]]:
    """Collection name (e.g. ``kjv-genesis``, ``jargon-ab``) -> its pages, in source order."""
    data = json.loads(gzip.decompress(_read("honest.json.gz")).decode("utf-8"))
    out = {}
    for name, coll in data["collections"].items():
        out[name] = tuple(
            TextPage(p["title"], tuple(Section(s["heading"], tuple(s["paragraphs"])) for s in p["sections"]))
            for p in coll["pages"]
        )
    return out


@lru_cache(maxsize=1)
def spin_article() -> str:
    """The campaign article: the preface of Bierce's *Devil's Dictionary*, paragraphs split by blank lines."""
    return _read("spin-article.txt").decode("utf-8").strip()


@lru_cache(maxsize=1)
def spin_dictionary_text() -> str:
    return _read("spin-dictionary.txt").decode("utf-8")
