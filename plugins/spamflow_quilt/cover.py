"""The greedy set cover of Section 2, as a pure function (the reducer of the last job).

    C ← {(d', g) : d' ≠ d, g a patch gram of both d and d'}
    while C ≠ ∅: take the d' with the most pairs in C (ties: the smallest doc_id),
                 add it to the sources, remove from C every pair of the grams it covered

>>> greedy_cover([(7, 1), (7, 2), (8, 2), (8, 3), (9, 3)])
[(7, 2), (8, 1)]
>>> greedy_cover([(9, 1), (8, 1)])  # a tie goes to the smaller doc_id
[(8, 1)]
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable


def greedy_cover(pairs: Iterable[tuple[int, Hashable]]) -> list[tuple[int, int]]:
    """Sources in greedy order, each with the number of grams it newly covered."""
    grams_of: dict[int, set[Hashable]] = {}
    docs_of: dict[Hashable, set[int]] = {}
    for doc, gram in pairs:
        grams_of.setdefault(doc, set()).add(gram)
        docs_of.setdefault(gram, set()).add(doc)
    remaining = {doc: len(grams) for doc, grams in grams_of.items()}
    sources = []
    while remaining:
        best = min(remaining, key=lambda doc: (-remaining[doc], doc))
        newly = [g for g in grams_of[best] if g in docs_of]
        sources.append((best, len(newly)))
        for gram in newly:
            for doc in docs_of.pop(gram):
                remaining[doc] -= 1
        remaining = {doc: n for doc, n in remaining.items() if n > 0}
    return sources


def keep_sources(sources: list[tuple[int, int]], n_patch_grams: int, phi: float | None) -> list[tuple[int, int]]:
    """With φ set, only sources that newly covered at least φ·|pgrams(d)| grams count.
    Greedy gains never increase, so this equals stopping the greedy loop there."""
    if phi is None:
        return sources
    return [(doc, n) for doc, n in sources if n >= phi * n_patch_grams]
