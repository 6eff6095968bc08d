"""The synonym graph the mutable verifier walks, apart from the dictionary loader so that a
MapReduce worker (which gets only this package) can load it from a side file.

The side file has one line per entry, ``entry<TAB>synonym|synonym|...`` (entries are
space-joined words, which hold neither a tab nor ``|``), sorted, so the same dictionary
always gives the same file.

>>> graph = SynonymGraph({"big": {"large", "huge"}, "large": {"big"}, "huge": {"big"}})
>>> sorted(graph.synonyms("large")), sorted(graph.second_level("large"))
(['big'], ['huge'])
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


class SynonymLookup:
    """First- and second-level synonyms over ``self.neighbours`` (entry -> synonyms)."""

    neighbours: dict[str, set[str]]

    def synonyms(self, entry: str) -> set[str]:
        """First-level synonyms of ``entry`` (empty if it is not in the dictionary)."""
        return self.neighbours.get(entry, set())

    def second_level(self, entry: str) -> set[str]:
        """Synonyms of synonyms, the entry and its first level excluded."""
        first = self.synonyms(entry)
        out: set[str] = set()
        for syn in first:
            out |= self.neighbours[syn]
        return out - first - {entry}

    def sorted_related(self, entry: str, second: bool) -> list[str]:
        """``sorted(synonyms(entry))``, or of ``second_level(entry)`` if ``second``, computed once
        per entry (the verifier asks for the same entries pair after pair)."""
        cache: dict[tuple[str, bool], list[str]] | None = self.__dict__.get("_sorted_related")
        if cache is None:
            cache = self.__dict__["_sorted_related"] = {}
        got = cache.get((entry, second))
        if got is None:
            got = cache[(entry, second)] = sorted(self.second_level(entry) if second else self.synonyms(entry))
        return got


class SynonymGraph(SynonymLookup):
    """Only the graph: what the verifier needs."""

    def __init__(self, neighbours: dict[str, set[str]]) -> None:
        self.neighbours = neighbours


def write_synonyms(neighbours: Mapping[str, set[str]], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for entry in sorted(neighbours):
            fh.write(f"{entry}\t{'|'.join(sorted(neighbours[entry]))}\n")


def read_synonyms(path: Path | str) -> SynonymGraph:
    """The graph :func:`write_synonyms` wrote; a line without a tab is an error naming it."""
    neighbours: dict[str, set[str]] = {}
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            entry, tab, synonyms = line.rstrip("\n").partition("\t")
            if not tab:
                raise ValueError(f"{path}:{number}: not 'entry<TAB>synonym|...': {line[:80]!r}")
            neighbours[entry] = set(synonyms.split("|")) if synonyms else set()
    return SynonymGraph(neighbours)
