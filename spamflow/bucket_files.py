"""Rows of one numpy dtype in a file per bucket on local disk, read back one bucket at a time.

The single-machine engines that run a MapReduce job's arithmetic in one process (quilt's and
spin's ``direct`` engines) keep the rows between two steps here instead of in mrjob's shuffle:
a step appends rows to the bucket of their key, the next reads each bucket on its own, so
memory holds one bucket, not the step's output."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np


class BucketFiles:
    """Rows of ``dtype`` appended to ``<folder>/<name>-NNNNN``, one file per bucket."""

    def __init__(self, folder: Path, name: str, dtype: np.dtype, buckets: int) -> None:
        self.paths = [folder / f"{name}-{b:05d}" for b in range(buckets)]
        self.dtype = dtype
        self.handles: dict[int, BinaryIO] = {}

    def append(self, bucket_of_rows: np.ndarray, **columns: np.ndarray) -> None:
        """Rows (``columns``, the dtype's fields) to the buckets ``bucket_of_rows`` says, each
        bucket's rows in their order here."""
        if len(bucket_of_rows) == 0:
            return
        rows = np.empty(len(bucket_of_rows), self.dtype)
        if np.any(bucket_of_rows[1:] < bucket_of_rows[:-1]):
            narrow = bucket_of_rows.astype(np.uint16 if bucket_of_rows.max() < 2**16 else np.uint32)
            order = np.argsort(narrow, kind="stable")  # a radix sort on 16 bits
            bucket_of_rows = bucket_of_rows[order]
            for name, column in columns.items():
                rows[name] = column[order]
        else:
            for name, column in columns.items():
                rows[name] = column
        bounds = np.searchsorted(bucket_of_rows, np.arange(len(self.paths) + 1))
        for bucket in np.flatnonzero(np.diff(bounds)).tolist():
            rows[bounds[bucket]:bounds[bucket + 1]].tofile(self._handle(bucket))

    def write(self, bucket: int, **columns: np.ndarray) -> None:
        """Rows to one bucket."""
        rows = np.empty(len(next(iter(columns.values()))), self.dtype)
        for name, column in columns.items():
            rows[name] = column
        rows.tofile(self._handle(bucket))

    def _handle(self, bucket: int) -> BinaryIO:
        if bucket not in self.handles:
            self.handles[bucket] = open(self.paths[bucket], "ab")  # noqa: SIM115 (closed in close())
        return self.handles[bucket]

    def size(self, bucket: int) -> int:
        """Bytes of a bucket's file (closed)."""
        return self.paths[bucket].stat().st_size if self.paths[bucket].exists() else 0

    def close(self) -> None:
        for handle in self.handles.values():
            handle.close()
        self.handles = {}

    def take(self, bucket: int, chunk_rows: int | None = None) -> Iterator[np.ndarray]:
        """A bucket's rows, in chunks of ``chunk_rows`` (None: all at once); its file removed."""
        path = self.paths[bucket]
        if not path.exists():
            return
        with open(path, "rb") as fh:
            while len(rows := np.fromfile(fh, self.dtype, count=chunk_rows or -1)):
                yield rows
        path.unlink()

    def take_all(self) -> Iterator[np.ndarray]:
        """Every bucket's rows, one array a bucket, in bucket order; the files removed."""
        for bucket in range(len(self.paths)):
            yield from self.take(bucket)
