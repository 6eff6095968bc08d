"""Procedure 2 one bucket at a time, for the MapReduce clustering job (``mr_probe_check``).

In memory, :func:`spamflow_hss.probing.probe_check_edges` checks all buckets of a probe in
one numpy pass.  A reducer sees one bucket: the pages of one snapshot whose projection on
one probe's k-subset has the same key.  Running ``probe_check_edges`` on just those pages
and that one subset puts them all in one bucket, in the same (row) order, so it checks the
same pairs, finds the same edges and counts the same checks, rounds and unchecked pages as
the in-memory pass does for that bucket.  A bucket's edges are then thinned to a spanning
forest (each member joined to the bucket component's first row): the same connected
components from at most b - 1 pairs instead of up to b(b - 1)/2.

Imports NumPy and its own package only, so that it runs on workers without spamflow.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from spamflow_hss.fingerprint import EMPTY
from spamflow_hss.probing import ProbeStats, mix_key, probe_check_edges

U64 = npt.NDArray[np.uint64]
Index = npt.NDArray[np.int64]


def probe_keys(fingerprint: U64, subsets: Index) -> tuple[Index, U64]:
    """The probes whose k dimensions of one ``fingerprint`` are all non-empty, and the page's
    bucket key in each (the key :func:`~spamflow_hss.probing.projection_keys` gives it)."""
    projected = fingerprint[subsets]  # (p, k)
    probes = np.flatnonzero(np.all(projected != EMPTY, axis=1))
    return probes, mix_key(projected[probes])


def spanning_pairs(n: int, edges: Index) -> list[tuple[int, int]]:
    """(first, other) pairs that join every node of a component of the graph (n nodes,
    ``edges``) to its smallest node: a spanning forest with the same components."""
    parent = list(range(n))

    def root(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for a, b in edges.tolist():
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)  # the smaller node stays the root
    return [(root(node), node) for node in range(n) if root(node) != node]


def check_bucket(fingerprints: U64, subset: Index, t: int, max_representatives: int) -> tuple[
        list[tuple[int, int]], ProbeStats]:
    """One bucket (its fingerprints in table-row order): a spanning forest of its edges as
    pairs of positions in ``fingerprints``, and what the check cost (as in memory)."""
    stats = ProbeStats()
    edges = probe_check_edges(fingerprints, subset[None, :], t, stats, max_representatives)
    return spanning_pairs(len(fingerprints), edges), stats
