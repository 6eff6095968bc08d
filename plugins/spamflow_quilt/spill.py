"""An external group-by for a reducer: rows kept in memory up to a byte limit, beyond it
hash-partitioned by key into files on disk and read back one partition at a time.

Job (c)'s cover reducer needs every triple of a unit at once, but a bucket's triples arrive
in any order from every gram bucket, and near-copies (texts on many pages that differ in a
few words, so that they are not one gram set) can make a bucket many times larger than its
share of the input.  Spilling keeps the reducer's memory at about ``limit`` bytes (plus one
partition) whatever the bucket holds; a partition still over the limit is split again by
other bits of the hash.

>>> spill = GroupSpill(2, limit_bytes=64)
>>> for key in [5, 3, 5, 9, 3, 5]:
...     spill.add(np.array([key], np.uint64), np.array([key * 10], np.uint64))
>>> batches = [list(zip(k.tolist(), v.tolist())) for k, v in spill.groups()]  # spilled: 96 bytes > 64
>>> sorted(row for batch in batches for row in batch)
[(3, 30), (3, 30), (5, 50), (5, 50), (5, 50), (9, 90)]
>>> all(batch == sorted(batch) for batch in batches) and spill.folder is None
True
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

import numpy as np

FANOUT = 16
"""Partitions per spill (and per further split of a partition still too large)."""

_MULTIPLIERS = [np.uint64(m) for m in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                                       0xD6E8FEB86659FD93)]


def partition(keys: np.ndarray, depth: int) -> np.ndarray:
    """Partition of each key, in [0, FANOUT), independent between depths."""
    return ((keys * _MULTIPLIERS[depth % len(_MULTIPLIERS)]) >> np.uint64(59)).astype(np.intp) % FANOUT


class GroupSpill:
    """uint64 rows (the first column the key), grouped by key with bounded memory."""

    def __init__(self, columns: int, limit_bytes: int) -> None:
        self.columns = columns
        self.limit = limit_bytes
        self.parts: list[np.ndarray] = []
        self.bytes = 0
        self.folder: str | None = None

    def add(self, *columns: np.ndarray) -> None:
        rows = np.stack([np.asarray(c, np.uint64) for c in columns], axis=1)
        self.parts.append(rows)
        self.bytes += rows.nbytes
        if self.bytes > self.limit:
            self._spill(np.concatenate(self.parts), self._folder(), depth=0)
            self.parts, self.bytes = [], 0

    def _folder(self) -> str:
        if self.folder is None:
            self.folder = tempfile.mkdtemp(prefix="spamflow-spill-")
        return self.folder

    def _spill(self, rows: np.ndarray, folder: str, depth: int) -> None:
        part = partition(rows[:, 0], depth)
        order = np.argsort(part, kind="stable")
        bounds = np.searchsorted(part[order], np.arange(FANOUT + 1))
        for p in range(FANOUT):
            chunk = rows[order[bounds[p]:bounds[p + 1]]]
            if len(chunk):
                with open(os.path.join(folder, f"{depth}-{p}"), "ab") as fh:
                    chunk.tofile(fh)

    def groups(self) -> Iterator[tuple[np.ndarray, ...]]:
        """The rows, as columns, in batches that hold every row of their keys, each sorted by
        key (any order of batches).  Removes the spill files."""
        try:
            if self.folder is None:
                if self.parts:
                    yield self._sorted(np.concatenate(self.parts))
                return
            if self.parts:
                self._spill(np.concatenate(self.parts), self.folder, depth=0)
                self.parts = []
            yield from self._read(self.folder, depth=0)
        finally:
            if self.folder is not None:
                shutil.rmtree(self.folder, ignore_errors=True)
                self.folder = None

    def _read(self, folder: str, depth: int) -> Iterator[tuple[np.ndarray, ...]]:
        for p in range(FANOUT):
            path = os.path.join(folder, f"{depth}-{p}")
            if not os.path.exists(path):
                continue
            rows = np.fromfile(path, np.uint64).reshape(-1, self.columns)
            os.remove(path)
            if rows.nbytes > self.limit and depth + 1 < 8 and len(np.unique(rows[:, 0])) > 1:
                sub = tempfile.mkdtemp(dir=folder)
                self._spill(rows, sub, depth + 1)
                del rows
                yield from self._read(sub, depth + 1)
            else:
                yield self._sorted(rows)

    @staticmethod
    def _sorted(rows: np.ndarray) -> tuple[np.ndarray, ...]:
        rows = rows[np.argsort(rows[:, 0], kind="stable")]
        return tuple(np.ascontiguousarray(rows[:, i]) for i in range(rows.shape[1]))
