"""Hash partitions: how the quilt jobs group many rows into one record, and the few array
operations their mappers, combiners and reducers share.

A gram's bucket is a monotone function of its hash (multiply-shift of the top 32 bits), so
grams sorted by value are also sorted by bucket; a page's bucket is its doc_id modulo the
number of buckets (doc_ids are hashes with the top bit cleared, uniform in their low bits).

>>> gram_bucket(np.array([0, 2**63, 2**64 - 1], np.uint64), 4).tolist()
[0, 2, 3]
>>> [(b, c.tolist()) for b, (c,) in by_bucket(np.array([1, 0, 1]), np.array([5, 6, 7]))]
[(0, [6]), (1, [5, 7])]
>>> distinct(np.array([3, 1, 3], np.uint64)).tolist()
[1, 3]
>>> [a.tolist() for a in sum_by_key(np.array([3, 1, 3], np.uint64), np.array([1, 1, 2], np.uint32))]
[[1, 3], [1, 3]]
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

_32 = np.uint64(32)


def run_starts(*columns: np.ndarray) -> np.ndarray:
    """Where each run of equal rows starts, rows sorted by the columns (empty for empty ones).

    >>> run_starts(np.array([1, 1, 4, 5, 5])).tolist()
    [0, 2, 3]
    >>> run_starts(np.array([1, 1, 1]), np.array([7, 8, 8])).tolist()
    [0, 1]
    """
    if len(columns[0]) == 0:
        return np.empty(0, np.intp)
    change = np.zeros(len(columns[0]) - 1, bool)
    for column in columns:
        change |= column[1:] != column[:-1]
    return np.flatnonzero(np.r_[True, change])


def gram_bucket(grams: np.ndarray, buckets: int) -> np.ndarray:
    """Bucket of each gram hash, in [0, buckets), non-decreasing in the hash."""
    return ((grams >> _32) * np.uint64(buckets)) >> _32


def doc_bucket(docs: np.ndarray, buckets: int) -> np.ndarray:
    """Bucket of each doc_id, in [0, buckets)."""
    return docs % np.uint64(buckets)


def by_bucket(bucket: np.ndarray, *columns: np.ndarray) -> Iterator[tuple[int, tuple[np.ndarray, ...]]]:
    """The rows of each bucket, buckets in increasing order, rows in their order within it."""
    if len(bucket) == 0:
        return
    if np.any(bucket[1:] < bucket[:-1]):
        order = np.argsort(bucket.astype(np.uint32 if bucket.max() >= 2**16 else np.uint16), kind="stable")
        bucket = bucket[order]
        columns = tuple(column[order] for column in columns)
    starts = run_starts(bucket)
    ends = np.r_[starts[1:], len(bucket)]
    for start, end in zip(starts.tolist(), ends.tolist()):
        yield int(bucket[start]), tuple(column[start:end] for column in columns)


def sum_by_key(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys, sorted, with the sum of their counts."""
    if len(keys) == 0:
        return keys, counts
    order = np.argsort(keys, kind="stable")
    keys, counts = keys[order], counts[order]
    starts = run_starts(keys)
    return keys[starts], np.add.reduceat(counts, starts).astype(counts.dtype)


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values (``np.unique`` without its hash path, which NumPy 2.3+
    takes for plain calls and which is ~15x slower on 64-bit keys than sorting)."""
    values = np.sort(values)
    return values[run_starts(values)]


class RowBuffer:
    """Rows a mapper collects before it emits them in bucket-sized records (in-mapper
    combining: one record per bucket per flush instead of one per row)."""

    def __init__(self, columns: int) -> None:
        self.parts: list[list[np.ndarray]] = [[] for _ in range(columns)]
        self.rows = 0

    def add(self, *columns: np.ndarray) -> None:
        for part, column in zip(self.parts, columns):
            part.append(column)
        self.rows += len(columns[0])

    def take(self) -> list[np.ndarray]:
        """Everything added since the last take, one array per column."""
        out = [np.concatenate(part) if part else np.empty(0, np.uint64) for part in self.parts]
        self.parts = [[] for _ in self.parts]
        self.rows = 0
        return out
