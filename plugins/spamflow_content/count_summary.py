"""Counts of the keys of a stream, in memory bounded by a number of keys: a Misra-Gries
summary in its mergeable form (Agarwal et al., "Mergeable summaries", PODS 2012).

A crawl's vocabulary grows with the crawl, so counting every word or term of it does not fit
one process at scale (10^6 scale_web pages: 4.6 GB to merge the word counts), while what the
content stage needs from the counts, the 1,000 most frequent words and the terms in at least
``min_df`` of the documents, are the heavy ones.  Batches' counts are merged into the summary;
when it holds more than ``capacity`` keys, the (capacity+1)-th largest count ``c`` is taken
from every count and the keys left at zero or below are dropped.  ``error`` sums those ``c``:

* every key's kept count lies in [true - error, true], and a key not kept has true <= error
  (a cut takes at most ``c`` from any key);
* error <= total / (capacity + 1), ``total`` the sum of all counts added, since each cut
  takes ``c`` from at least capacity + 1 keys.

So the keys whose kept count plus ``error`` reaches a threshold include every key whose true
count does, and with nothing cut (error 0) the counts are exact.

Each kept key also carries ``since``, the ``error`` when it last entered the summary: a key
held since then lost exactly ``error - since`` to the cuts, and before it at most ``since``
(occurrences dropped with it earlier), so its true count is in [n + error - since, n + error],
and is exactly n + error for a key held since before the first cut (``since`` 0): the frequent
ones, which enter with the first batches.  The stage's word ranking then needs no recount.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


class CountSummary:
    """``key``, ``n`` counts summed over the batches added, cut to ``capacity`` keys (None:
    never cut, exact).  Holds the summary and the batches since its last merge: a merge runs
    when they reach twice the summary's size (at least 2^21 rows, at most 2 × ``capacity``), so
    the work is linear in the rows added (each merge hashes the held keys again: once as many
    pending rows as held hashed ~2 rows an added row, twice ~1.5) and the memory within
    ~3 × capacity rows."""

    def __init__(self, capacity: int | None) -> None:
        self.capacity = capacity
        self.error = 0
        self._parts: list[pa.Table] = []  # the merged counts first, then the batches' since
        self._pending_rows = 0
        self._held_rows = 0  # rows of _parts[0] that are merged counts (0 before the first merge)

    def add(self, keys: pa.Array, counts: pa.Array | np.ndarray) -> None:
        """One batch's keys (strings, each once) and their counts."""
        part = pa.table({"key": keys, "n": pa.array(np.asarray(counts, dtype=np.int64))})
        self._parts.append(part)
        self._pending_rows += part.num_rows
        bound = max(2 * self._parts[0].num_rows, 1 << 21)
        if self.capacity is not None:
            bound = min(bound, 2 * max(self.capacity, 1))
        if self._pending_rows >= bound and len(self._parts) > 1:
            self._merge()

    def counts(self) -> pa.Table:
        """``key``, ``n``, ``since``: the kept keys, each once, with their counts (true minus at
        most ``error``) and the ``error`` when each entered (true minus at least ``error - since``)."""
        self._merge()
        return self._parts[0]

    def _merge(self) -> None:
        if not self._parts:
            self._parts = [pa.table({"key": pa.array([], pa.string()), "n": pa.array([], pa.int64()),
                                     "since": pa.array([], pa.int64())})]
            self._held_rows = 0
            return
        if len(self._parts) == 1 and self._held_rows:  # merged, nothing added since
            return
        held = self._parts[0].column("since").to_numpy() if self._held_rows else np.zeros(0, np.int64)
        parts = pa.concat_tables([p.select(["key", "n"]) for p in self._parts])
        self._parts, self._pending_rows = [], 0
        keys = pc.dictionary_encode(parts["key"].combine_chunks())  # leaner than a group_by's hash table
        ids = np.asarray(keys.indices, dtype=np.int64)
        n = np.bincount(ids, weights=np.asarray(parts["n"], dtype=np.float64),
                        minlength=len(keys.dictionary)).astype(np.int64)
        del parts
        since = np.full(len(n), self.error, dtype=np.int64)  # entering now, before this merge's cut
        since[ids[:len(held)]] = held  # the held keys come first, each once
        names = keys.dictionary
        if self.capacity is not None and len(n) > self.capacity:
            cut = int(np.partition(n, len(n) - self.capacity - 1)[len(n) - self.capacity - 1])
            self.error += cut
            n -= cut
            kept = n > 0
            names, n, since = names.filter(pa.array(kept)), n[kept], since[kept]
        self._parts = [pa.table({"key": names, "n": pa.array(n), "since": pa.array(since)})]
        self._held_rows = len(n)
