"""Positions of a batch's values among a corpus's keys, with the keys indexed once.

``pc.index_in(values, value_set=keys)`` hashes all of ``keys`` again on every call, so
looking up each batch of pages or links against the whole corpus costs batches × corpus:
at 10^6 pages ~0.4 s a batch of links against the page URLs, minutes in all.  A
``KeyIndex`` is built once and answers each batch in time proportional to the batch.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


class KeyIndex:
    """``pc.index_in(values, value_set=keys).fill_null(-1)`` as an int64 array, for many
    batches of values: the position of each value's first occurrence in ``keys``, -1 where
    it is absent or null.  Integer keys are sorted once and searched (``np.searchsorted``);
    other keys go into a dictionary, which a batch of at least as many values as there are
    keys skips: ``pc.index_in`` then hashes no more keys than the batch has values, and a
    Python lookup per value costs ~5x Arrow's hashing (the candidate terms of a batch, a
    recount's candidate words)."""

    def __init__(self, keys: pa.Array | pa.ChunkedArray) -> None:
        keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
        self._size = len(keys)
        self._integer = pa.types.is_integer(keys.type) and keys.null_count == 0
        if self._integer:
            values = np.asarray(keys, dtype=np.int64)
            self._order = np.argsort(values, kind="stable")  # equal keys: first occurrence first
            self._sorted = values[self._order]
        else:
            self._keys = keys if keys.null_count == 0 else None  # index_in would find a null value
            position: dict[object, int] = {}
            for i, key in enumerate(keys.to_pylist()):
                if key is not None:
                    position.setdefault(key, i)
            self._position = position

    def __len__(self) -> int:
        return self._size

    def positions(self, values: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """Each value's position in the keys, -1 where absent or null."""
        if self._integer:
            found = np.full(len(values), -1, dtype=np.int64)
            valid = np.asarray(pc.is_valid(values), dtype=bool)
            wanted = np.asarray(values.fill_null(0), dtype=np.int64)
            at = np.searchsorted(self._sorted, wanted)
            hit = valid & (at < self._size)
            hit[hit] &= self._sorted[at[hit]] == wanted[hit]
            found[hit] = self._order[at[hit]]
            return found
        if self._keys is not None and len(self._keys) <= len(values) and values.type == self._keys.type:
            return np.asarray(pc.index_in(values, value_set=self._keys).fill_null(-1), dtype=np.int64)
        get = self._position.get
        return np.fromiter((-1 if v is None else get(v, -1) for v in values.to_pylist()), dtype=np.int64,
                           count=len(values))

    def contains(self, values: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """Whether each value is among the keys (``pc.is_in``)."""
        return self.positions(values) >= 0
