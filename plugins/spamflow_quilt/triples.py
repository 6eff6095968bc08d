"""The triples of Section 2, vectorised, with copies collapsed (:mod:`spamflow_quilt.copies`).

For each patch gram g, a literal reading makes (d, g, d') for every two distinct pages that
contain it, restricted with ``foreign`` to pages on different known servers (Section 3).
Here the pages of one gram set on one server form a *unit* (covered once, named by its
smallest page, the *rep*), and the pages of one gram set a *candidate* (named, for a unit on
server s, by its smallest page on another server).  A gram then gives one triple
(set, rep, g, source) per (patchy unit, candidate) pair: units x gram sets, not pages².
With ``skip_copied`` (c >= 2) a unit whose gram set is also on another server makes none:
its copy is its only source.

>>> sets, reps, g, src = unit_triples(np.array([9, 9, 9], np.uint64), np.array([1, 2, 3], np.uint64),
...     servers=np.array([1, 2, 3], np.uint64), sets=np.array([5, 5, 6], np.uint64),
...     patchy=np.ones(3, bool), skip_copied=False)
>>> sorted(zip(reps.tolist(), src.tolist()))
[(1, 2), (1, 3), (2, 1), (2, 3), (3, 1)]
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from spamflow_quilt.buckets import run_starts

CHUNK_TRIPLES = 1 << 22
"""Triples made at once (bounds a reducer's memory at ~130 MB)."""


def unit_triples(grams: np.ndarray, docs: np.ndarray, *, servers: np.ndarray, sets: np.ndarray,
                 patchy: np.ndarray, skip_copied: bool) -> tuple[np.ndarray, ...]:
    """All (set, rep, gram, source) of the given rows (one per page containing a patch gram;
    rows of pages on an unknown server left out by the caller), as four arrays."""
    parts = list(iter_unit_triples(grams, docs, servers=servers, sets=sets, patchy=patchy, skip_copied=skip_copied))
    if not parts:
        return tuple(np.empty(0, np.uint64) for _ in range(4))
    return tuple(np.concatenate(column) for column in zip(*parts))


def iter_unit_triples(grams: np.ndarray, docs: np.ndarray, *, servers: np.ndarray, sets: np.ndarray,
                      patchy: np.ndarray, skip_copied: bool) -> Iterator[tuple[np.ndarray, ...]]:
    """:func:`unit_triples` in chunks of at most about :data:`CHUNK_TRIPLES`."""
    if len(grams) == 0:
        return
    # units: the rows of one (gram, set, server), named by their smallest doc
    order = np.lexsort((docs, servers, sets, grams))
    grams, docs, servers, sets, patchy = grams[order], docs[order], servers[order], sets[order], patchy[order]
    units = run_starts(grams, sets, servers)
    u_gram, u_set, u_server, u_rep, u_patchy = grams[units], sets[units], servers[units], docs[units], patchy[units]
    # candidates: the units of one (gram, set) by rep; the first two name it for any server
    order = np.lexsort((u_rep, u_set, u_gram))
    u_gram, u_set, u_server, u_rep, u_patchy = (u_gram[order], u_set[order], u_server[order], u_rep[order],
                                                u_patchy[order])
    first = run_starts(u_gram, u_set)
    size = np.diff(np.r_[first, len(u_gram)])
    second = np.where(size >= 2, first + 1, first)
    c_gram = u_gram[first]
    # left units: patchy, and (skip_copied) alone in their gram set
    left = u_patchy.astype(bool)
    if skip_copied:
        left &= np.repeat(size, size) == 1
    left = np.flatnonzero(left)
    lo = np.searchsorted(c_gram, u_gram[left], side="left")
    count = np.searchsorted(c_gram, u_gram[left], side="right") - lo
    cumulative = np.cumsum(count)
    done, begin = 0, 0
    while begin < len(left):
        end = max(int(np.searchsorted(cumulative, done + CHUNK_TRIPLES, side="right")), begin + 1)
        yield _pairs(left[begin:end], lo[begin:end], count[begin:end], u_set, u_rep, u_gram, u_server,
                     first, second, size)
        done, begin = int(cumulative[end - 1]), end


def _pairs(left, lo, count, u_set, u_rep, u_gram, u_server, first, second, size):
    """(set, rep, gram, source) for each left unit and each candidate of its gram: the
    candidate's smallest rep if on another server, else its second (if any)."""
    unit = np.repeat(left, count)
    candidate = np.repeat(lo, count) + (np.arange(len(unit)) - np.repeat(np.cumsum(count) - count, count))
    same = u_server[first[candidate]] == u_server[unit]
    source = np.where(same, second[candidate], first[candidate])
    keep = ~same | (size[candidate] >= 2)
    unit, source = unit[keep], source[keep]
    return u_set[unit], u_rep[unit], u_gram[unit], u_rep[source]
