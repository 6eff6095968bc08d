"""Procedure 2 (HSS section 3.4): probe for similar pairs by projecting fingerprints on p
random k-subsets of the m dimensions, check each candidate with Sim_b > t, and cluster by
connected components; and P_miss (section 3.4.2), the chance the probing misses a pair.

A bucket of at most ``max_representatives`` pages is checked pair by pair, as Procedure 2
says.  Checking every pair of a big bucket is quadratic, and buckets of a big template hold
hundreds of thousands of pages (Table 1 has a 626,900-page cluster).  There we use the
quasi-transitivity of section 3.4.1: the bucket's first page is the representative, every
other page is checked against it only; the pages it does not match stay for a next round,
where the first of them is the representative, and so on.  A bucket of b pages of one
template costs b - 1 checks instead of b(b - 1)/2.  The worst case (b pairwise-dissimilar
pages sharing a key) would still be quadratic, so the rounds of a bucket are capped at
``max_representatives``: the pages still unmatched then are left for the other probes and
counted (``ProbeStats.unchecked``).  Either way a probe costs at most
``max_representatives`` checks per page.  Every round is one numpy pass over all buckets of
a probe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from spamflow_hss.fingerprint import EMPTY, matched_dimensions
from spamflow_hss.ngram_hash import fmix64

U64 = npt.NDArray[np.uint64]
Index = npt.NDArray[np.int64]


def p_miss(m: int, k: int, p: int, t: int) -> float:
    """Probability that p distinct random k-subsets of [m] all miss a pair of fingerprints
    matching on exactly t dimensions (so that no probe puts the two in one bucket).

    A k-subset brings the pair together when all its k dimensions are matched ones:
    C(t, k) of the C(m, k) subsets do.  Drawing p distinct subsets, the pair is missed with
    probability C(N - M, p) / C(N, p), N = C(m, k), M = C(t, k).  For k = 1 this is the
    paper's C(m - p, t) / C(m, t).  A pair above the check threshold matches on more than t
    dimensions, so this is an upper bound for the pairs the check accepts.

    >>> round(p_miss(128, 1, 20, 35), 5)
    0.00089
    >>> p_miss(128, 1, 20, 35) == math.comb(128 - 20, 35) / math.comb(128, 35)
    True
    """
    if not (0 < k <= m and 0 <= t <= m and 0 < p <= math.comb(m, k)):
        raise ValueError(f"need 0 < k <= m, 0 <= t <= m and 0 < p <= C(m, k); got m={m} k={k} p={p} t={t}")
    n_subsets, hitting = math.comb(m, k), math.comb(t, k)
    return float(Fraction(math.comb(n_subsets - hitting, p), math.comb(n_subsets, p)))


def probe_subsets(m: int, k: int, p: int, seed: int) -> Index:
    """p distinct random k-subsets of [m], each sorted: a (p, k) array."""
    if p > math.comb(m, k):
        raise ValueError(f"p={p} is more than the C({m}, {k}) = {math.comb(m, k)} distinct {k}-subsets of [{m}]")
    rng = np.random.default_rng(seed)
    if k == 1:
        return rng.choice(m, size=p, replace=False).astype(np.int64)[:, None]
    chosen: dict[tuple[int, ...], None] = {}
    while len(chosen) < p:
        chosen.setdefault(tuple(sorted(int(d) for d in rng.choice(m, size=k, replace=False))), None)
    return np.array(list(chosen), dtype=np.int64)


@dataclass
class ProbeStats:
    """What the probing did: for the cost and for the report."""

    probes: int = 0
    buckets: int = 0
    """Buckets of at least two fingerprints, over all probes."""
    largest_bucket: int = 0
    checks: int = 0
    """Sim_b computations (candidate pairs checked)."""
    edges: int = 0
    max_rounds: int = 0
    """Most representatives one bucket needed (1 when every bucket was one template)."""
    unchecked: int = 0
    """Pages left unchecked in a probe because their bucket reached ``max_representatives``."""
    skipped_empty_keys: int = 0
    """Fingerprint projections left out of a probe because a dimension of the subset was empty."""
    per_probe_checks: list[int] = field(default_factory=list)


def projection_keys(fingerprints: U64, subset: Index) -> tuple[Index, U64]:
    """Rows whose projection on ``subset`` has no empty dimension, and one uint64 key per
    row (the value itself for k = 1, a mixed hash of the k values otherwise)."""
    projected = fingerprints[:, subset]
    rows = np.flatnonzero(np.all(projected != EMPTY, axis=1))
    return rows, mix_key(projected[rows])


def mix_key(projected: U64) -> U64:
    """One uint64 key per row of a (rows, k) projection: the value itself for k = 1, a mixed
    hash of the k values otherwise (the bucket a page falls in, in memory and in the
    MapReduce job alike)."""
    if projected.shape[1] == 1:
        return projected[:, 0].copy()
    key = np.zeros(len(projected), np.uint64)
    for column in range(projected.shape[1]):
        key ^= projected[:, column]
        key = fmix64(key)
    return key


CHECK_PAIRS = 1 << 16
"""Pairs checked at once: each is two copied fingerprint rows (2 KB at m = 128)."""


def matches(fingerprints: U64, a: Index, b: Index, t: int) -> npt.NDArray[np.bool_]:
    """Whether rows ``a[i]`` and ``b[i]`` match on more than t dimensions, :data:`CHECK_PAIRS`
    pairs at a time: a round of a probe checks up to every page of a snapshot against its
    representative, and copying all their rows at once held 1 GB for 5 x 10^5 pages (a
    snapshot of 10^6 scale_web pages; the stage's process peaked at 5.5 GiB)."""
    ok = np.empty(len(a), bool)
    for start in range(0, len(a), CHECK_PAIRS):
        block = slice(start, start + CHECK_PAIRS)
        ok[block] = matched_dimensions(fingerprints[a[block]], fingerprints[b[block]]) > t
    return ok


def probe_check_edges(fingerprints: U64, subsets: Index, t: int, stats: ProbeStats | None = None,
                      max_representatives: int = 64) -> npt.NDArray[np.int64]:
    """Procedure 2 without the last step: the (E, 2) edges (representative, member) whose
    Sim_b exceeds t/m, i.e. that match on more than t dimensions."""
    stats = stats if stats is not None else ProbeStats()
    found: list[npt.NDArray[np.int64]] = []
    for subset in subsets:
        stats.probes += 1
        rows, key = projection_keys(fingerprints, subset)
        stats.skipped_empty_keys += len(fingerprints) - len(rows)
        order = np.argsort(key, kind="stable")
        rows, key = rows[order], key[order]
        if len(rows) < 2:
            stats.per_probe_checks.append(0)
            continue
        starts = np.r_[True, key[1:] != key[:-1]]
        bucket = np.cumsum(starts) - 1
        sizes = np.bincount(bucket)
        shared = sizes[bucket] >= 2
        rows, bucket = rows[shared], bucket[shared]
        small = sizes[bucket] <= max_representatives  # all pairs, as Procedure 2 says
        stats.buckets += int(np.count_nonzero(sizes >= 2))
        stats.largest_bucket = max(stats.largest_bucket, int(sizes.max()))
        checks = rounds = 0
        while len(rows) > 1:
            if rounds == max_representatives:
                stats.unchecked += len(rows) - len(np.unique(bucket))
                break
            rounds += 1
            first = np.r_[True, bucket[1:] != bucket[:-1]]
            representative = rows[first][np.cumsum(first) - 1]
            member = ~first
            a, b = representative[member], rows[member]
            ok = matches(fingerprints, a, b, t)
            checks += len(a)
            found.append(np.stack([a[ok], b[ok]], axis=1))
            left = member.copy()
            left[member] = ~ok | small[member]  # in a big bucket, a page that matched is done
            rows, bucket, small = rows[left], bucket[left], small[left]
            if len(rows):  # a bucket down to one page has nobody left to check against
                alone = np.bincount(bucket)[bucket] < 2
                rows, bucket, small = rows[~alone], bucket[~alone], small[~alone]
        stats.checks += checks
        stats.per_probe_checks.append(checks)
        stats.max_rounds = max(stats.max_rounds, rounds)
    edges = np.concatenate(found) if found else np.empty((0, 2), np.int64)
    stats.edges += len(edges)
    return edges.astype(np.int64, copy=False)


def components(n: int, edges: npt.NDArray[np.int64]) -> Index:
    """Connected component label of each of n nodes (scipy.sparse.csgraph), numbered in the
    order of each component's first node."""
    from scipy.sparse import coo_matrix  # here, so that the MapReduce workers need NumPy only
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(len(edges), np.int8), (edges[:, 0], edges[:, 1])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    return labels.astype(np.int64)


def cluster_fingerprints(fingerprints: U64, k: int, p: int, t: int, seed: int = 0,
                         stats: ProbeStats | None = None, max_representatives: int = 64) -> Index:
    """Procedure 2: component label per fingerprint (labels of singletons are their own)."""
    m = fingerprints.shape[1]
    if not 0 < t <= m:
        raise ValueError(f"need 0 < t <= m; got t={t}, m={m}")
    edges = probe_check_edges(fingerprints, probe_subsets(m, k, p, seed), t, stats, max_representatives)
    return components(len(fingerprints), edges)
