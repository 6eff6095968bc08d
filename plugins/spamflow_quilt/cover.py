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

import numpy as np

from spamflow_quilt.buckets import distinct


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


def greedy_cover_arrays(sources: np.ndarray, grams: np.ndarray) -> list[tuple[int, int]]:
    """:func:`greedy_cover` of the pairs ``zip(sources, grams)``, with arrays: each round
    counts the uncovered grams of every candidate at once (the reducer's hot loop; the
    set version stays as the readable definition, and a test checks that they agree).

    >>> greedy_cover_arrays(np.array([7, 7, 8, 8, 9]), np.array([1, 2, 2, 3, 3]))
    [(7, 2), (8, 1)]
    """
    if len(sources) == 0:
        return []
    docs, source_index = np.unique(sources, return_inverse=True)  # sorted: argmax picks the smallest doc_id
    _, gram_index = np.unique(grams, return_inverse=True)
    pairs = distinct(source_index.astype(np.int64) * (gram_index.max() + 1) + gram_index)  # C is a set
    source_index, gram_index = np.divmod(pairs, gram_index.max() + 1)
    covered = np.zeros(gram_index.max() + 1, bool)
    chosen = []
    while len(source_index):
        counts = np.bincount(source_index, minlength=len(docs))
        best = int(counts.argmax())
        newly = distinct(gram_index[source_index == best])
        chosen.append((int(docs[best]), len(newly)))
        covered[newly] = True
        left = ~covered[gram_index]
        source_index, gram_index = source_index[left], gram_index[left]
    return chosen


def keep_sources(sources: list[tuple[int, int]], n_patch_grams: int, phi: float | None) -> list[tuple[int, int]]:
    """With φ set, only sources that newly covered at least φ·|pgrams(d)| grams count.
    Greedy gains never increase, so this equals stopping the greedy loop there."""
    if phi is None:
        return sources
    return [(doc, n) for doc, n in sources if n >= phi * n_patch_grams]
