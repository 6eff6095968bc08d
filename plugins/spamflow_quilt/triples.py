"""The triples of Section 2, vectorised: for each patch gram g and each two distinct pages
d, d' that contain it, (d, g, d') — restricted, with ``foreign``, to pages on different
servers (Section 3).  A patch gram is in at most m pages, so a gram gives at most m(m−1).

>>> d, g, o = pair_triples(np.array([9, 9, 4], np.uint64), np.array([1, 2, 3], np.uint64),
...                        np.array([1, 1, 1], np.uint64), foreign=False)
>>> sorted(zip(d.tolist(), g.tolist(), o.tolist()))
[(1, 9, 2), (2, 9, 1)]
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from spamflow_quilt.buckets import run_starts
from spamflow_quilt.servers import NO_SERVER_ID

CHUNK_TRIPLES = 1 << 22
"""Triples made at once (bounds a reducer's memory at ~100 MB)."""


def pair_triples(grams: np.ndarray, docs: np.ndarray, servers: np.ndarray, *, foreign: bool,
                 left: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All (doc, gram, other doc) of the given (gram, doc, server) rows, as three arrays;
    with ``left`` (a mask over the rows), only those whose doc is a row in the mask."""
    parts = list(iter_pair_triples(grams, docs, servers, foreign=foreign, left=left))
    if not parts:
        empty = np.empty(0, np.uint64)
        return empty, empty, empty
    return tuple(np.concatenate(column) for column in zip(*parts))  # type: ignore[return-value]


def iter_pair_triples(grams: np.ndarray, docs: np.ndarray, servers: np.ndarray, *, foreign: bool,
                      left: np.ndarray | None = None) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`pair_triples` in chunks of about :data:`CHUNK_TRIPLES`, whole grams each."""
    if len(grams) == 0:
        return
    if left is None:
        left = np.ones(len(grams), bool)
    order = np.lexsort((docs, grams))
    grams, docs, servers, left = grams[order], docs[order], servers[order], left[order]
    starts = run_starts(grams)
    sizes = np.diff(np.r_[starts, len(grams)])
    cumulative = np.cumsum(sizes.astype(np.int64) ** 2)
    first = 0
    while first < len(starts):
        done = int(cumulative[first - 1]) if first else 0
        last = max(int(np.searchsorted(cumulative, done + CHUNK_TRIPLES, side="right")), first + 1)
        lo, hi = starts[first], (starts[last] if last < len(starts) else len(grams))
        yield _triples(grams[lo:hi], docs[lo:hi], servers[lo:hi], left[lo:hi], starts[first:last] - lo,
                       sizes[first:last], foreign)
        first = last


def _triples(grams, docs, servers, left_ok, starts, sizes, foreign):
    """Every ordered pair of distinct rows within each group (rows sorted by gram), the
    first of the pair a row of ``left_ok``."""
    row_size = np.repeat(sizes, sizes) * left_ok  # for each row, the pairs it starts
    row_start = np.repeat(starts, sizes)
    left = np.repeat(np.arange(len(grams)), row_size)
    offsets = np.arange(len(left)) - np.repeat(np.cumsum(row_size) - row_size, row_size)
    right = np.repeat(row_start, row_size) + offsets
    keep = left != right
    if foreign:
        keep &= (servers[left] != servers[right]) & (servers[left] != NO_SERVER_ID) & (servers[right] != NO_SERVER_ID)
    left, right = left[keep], right[keep]
    return docs[left], grams[left], docs[right]
