"""The greedy set cover of Section 2 (:func:`spamflow_quilt.cover.greedy_cover`) for many
units at once: every unit takes its round's best source in the same numpy pass.

Covering one unit at a time cost ~10 numpy calls a round a unit, and a 5 x 10^4-page snapshot
has ~17,000 units of a few thousand pairs: the calls, not the arithmetic, were the time.  Here
a round counts the uncovered grams of every (unit, source) in one ``bincount``, picks each
unit's best (most grams; ties: the smallest source, sources being numbered in doc_id order)
and drops every pair of the grams it covered, for all units together; a unit with nothing
left drops out.

>>> [s.tolist() for s in lockstep_covers(np.array([0, 0, 0, 0, 0, 1]), np.array([1, 2, 2, 3, 3, 9]),
...                                      np.array([7, 7, 8, 8, 9, 4]))]
[[0, 0, 1], [7, 8, 4], [2, 1, 1]]
"""

from __future__ import annotations

import numpy as np

from spamflow_quilt.buckets import run_starts


def bits_for(n: int) -> int:
    """Bits that hold the values 0 .. n - 1 (at least 1).

    >>> bits_for(1), bits_for(2), bits_for(5)
    (1, 1, 3)
    """
    return max(int(n - 1).bit_length(), 1)


def dense_ranks(keys: np.ndarray, key_bits: int) -> tuple[np.ndarray, int]:
    """Each key's rank among the distinct keys (``key_bits`` wide, unsigned), and how many
    there are: ``np.unique(keys, return_inverse=True)``, by sorting the keys with their
    positions packed into one 64-bit value when they fit (a plain sort of 64-bit values is
    ~6x faster than an argsort).

    >>> ranks, n = dense_ranks(np.array([30, 10, 30, 20], np.uint64), 5)
    >>> ranks.tolist(), n
    ([2, 0, 2, 1], 3)
    """
    if len(keys) == 0:
        return np.empty(0, np.int64), 0
    position_bits = bits_for(len(keys))
    if key_bits + position_bits > 64:
        distinct, inverse = np.unique(keys, return_inverse=True)
        return inverse.astype(np.int64), len(distinct)
    packed = (keys.astype(np.uint64) << np.uint64(position_bits)) | np.arange(len(keys), dtype=np.uint64)
    packed.sort()
    sorted_keys = packed >> np.uint64(position_bits)
    new = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    ranks = np.empty(len(keys), np.int64)
    ranks[(packed & np.uint64((1 << position_bits) - 1)).astype(np.intp)] = np.cumsum(new) - 1
    return ranks, int(new.sum())


def lockstep_covers(units: np.ndarray, grams: np.ndarray,
                    sources: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The greedy cover of every unit's pairs (source, gram), distinct triples (unit, gram,
    source) of non-negative integers: (unit, source, newly covered grams) for each source
    taken, by unit and, within a unit, in greedy order."""
    if len(units) == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64)
    units, grams, sources = (np.asarray(a, np.int64) for a in (units, grams, sources))
    unit_bits, source_bits = bits_for(int(units.max()) + 1), bits_for(int(sources.max()) + 1)
    gram_bits = bits_for(int(grams.max()) + 1)
    pair, n_pairs = dense_ranks((units << source_bits) | sources, unit_bits + source_bits)  # (unit, source)
    cover_keys = (units << gram_bits) | grams  # (unit, gram): covered once
    if np.all(cover_keys[1:] >= cover_keys[:-1]):  # sorted already: number the runs
        covers = np.cumsum(np.r_[True, cover_keys[1:] != cover_keys[:-1]]) - 1
    else:
        covers, _ = dense_ranks(cover_keys, unit_bits + gram_bits)
    del cover_keys
    # each pair's unit and source, pairs in (unit, source) order: a unit's first best is its smallest source
    pair_unit, pair_source = np.empty(n_pairs, np.int64), np.empty(n_pairs, np.int64)
    pair_unit[pair], pair_source[pair] = units, sources
    unit_start = run_starts(pair_unit)
    covered = np.zeros(int(covers.max()) + 1, bool)
    taken = np.zeros(n_pairs, bool)
    rounds: list[tuple[np.ndarray, np.ndarray]] = []
    while len(pair):
        counts = np.bincount(pair, minlength=n_pairs)
        best = np.maximum.reduceat(counts, unit_start)
        is_best = (counts == np.repeat(best, np.diff(np.r_[unit_start, n_pairs]))) & (counts > 0)
        candidates = np.flatnonzero(is_best)
        chosen = candidates[run_starts(pair_unit[candidates])]
        rounds.append((chosen, counts[chosen]))
        taken[chosen] = True
        covered[covers[taken[pair]]] = True
        taken[chosen] = False
        left = ~covered[covers]
        pair, covers = pair[left], covers[left]
    chosen = np.concatenate([c for c, _ in rounds])
    newly = np.concatenate([n for _, n in rounds])
    order = np.argsort(pair_unit[chosen], kind="stable")  # by unit, rounds in order within it
    chosen, newly = chosen[order], newly[order]
    return pair_unit[chosen], pair_source[chosen], newly.astype(np.int64)
