"""``hss.t: auto``: the check threshold t chosen from the crawl's own null distribution of Sim_b.

The null is Sim_b (as matched dimensions, 0..m) between pages of **different registered
domains** of one snapshot: pages that, apart from shared templates, have nothing to do with
each other.  The chosen t is the smallest one in [t_min, t_max] whose expected false edges per
page stay under ``false_edge_rate``:

    E(t) = q(t) * K,   q(t) = (sampled cross-domain pairs matching on more than t dimensions) / S,
                       K    = mean number of cross-domain candidate pairs per page
                            = sum over snapshots of 2 * X_s / (pages, all snapshots),

X_s being the cross-domain pairs of snapshot s and S the pairs sampled.  q is the *empirical*
tail (no fitted model: the measured tail is heavy, shared CMS and script boilerplate, and a
binomial fitted to the bulk under-estimates it by orders of magnitude; docs/hss.md).  An edge
needs more than t matched dimensions (Sim_b > t/m), as in the check, so E(t) counts the null
pairs the check at t would accept.

Sampling: per snapshot, S_s = S * X_s / sum X pairs (so that the pooled histogram weighs the
snapshots by their pairs), uniformly among its cross-domain pairs with a generator seeded by
``seed`` (the same crawl and parameters always give the same t); a snapshot with at most S_s
cross-domain pairs contributes all of them (the exact null).

Guards: t never leaves [t_min, t_max]; when no t in that range meets the rate (a heavy tail, or
a crawl too large for the rate), t = t_max; when the crawl has no cross-domain pair at all
(one domain), there is no null, and t = t_max too.  A small sample cannot show a small tail: a
tail probability below 1/S reads as 0, so E(t) reads 0 for every t above the sample's largest
Sim_b; t_min keeps such a sample from choosing a threshold no measurement supports.
The pure part (:func:`choose_t`, :func:`expected_false_edges`) imports NumPy only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from spamflow_hss.fingerprint import EMPTY

U64 = npt.NDArray[np.uint64]
CHUNK = 65_536  # pairs compared at once (2 x 1 KB rows each with m = 128)


@dataclass
class AutoThreshold:
    """What ``t: auto`` chose and from what (summary.json's and stage.json's ``threshold``)."""

    t: int
    false_edge_rate: float
    t_min: int
    t_max: int
    sample_pairs: int  # the sample size asked for
    pairs: int  # null pairs measured (fewer than asked when the crawl has fewer cross-domain pairs)
    cross_domain_pairs: int  # X, all snapshots
    candidates_per_page: float  # K
    expected_false_edges: float  # E(t) at the chosen t
    reason: str  # "rate": the smallest t meeting the rate; "ceiling": none did; "no cross-domain pairs"
    histogram: list[int] = field(default_factory=list)  # null pairs matching on exactly s dimensions, s = 0..m

    def record(self) -> dict[str, Any]:
        """For JSON: the histogram as {s: count} of its non-zero bins (most are zero)."""
        out = asdict(self)
        out["histogram"] = {str(s): c for s, c in enumerate(self.histogram) if c}
        return out


def expected_false_edges(histogram: npt.ArrayLike, candidates_per_page: float) -> npt.NDArray[np.float64]:
    """E(t) for t = 0..m: the empirical P(matched > t) over the null pairs times K."""
    counts = np.asarray(histogram, np.float64)
    total = counts.sum()
    if total == 0:
        return np.zeros(len(counts))
    above = counts[::-1].cumsum()[::-1]  # above[s] = pairs matching on s or more
    tail = np.r_[above[1:], 0.0] / total  # P(matched > t)
    return tail * candidates_per_page


def choose_t(histogram: npt.ArrayLike, candidates_per_page: float, rate: float, t_min: int,
             t_max: int) -> tuple[int, str]:
    """The smallest t in [t_min, t_max] with E(t) <= rate, and why (``rate``); t_max if there is
    none (``ceiling``) or if there was no null pair (``no cross-domain pairs``)."""
    counts = np.asarray(histogram, np.int64)
    if counts.sum() == 0:
        return t_max, "no cross-domain pairs"
    expected = expected_false_edges(counts, candidates_per_page)
    for t in range(t_min, t_max + 1):
        if expected[min(t, len(expected) - 1)] <= rate:
            return t, "rate"
    return t_max, "ceiling"


def cross_domain_pair_count(codes: npt.NDArray[np.int64]) -> int:
    """X: pairs of pages of different domains (codes: one integer per page, its domain)."""
    n = len(codes)
    sizes = np.bincount(codes) if n else np.zeros(0, np.int64)
    return (n * n - int((sizes.astype(np.int64) ** 2).sum())) // 2


def sample_cross_domain_pairs(codes: npt.NDArray[np.int64], size: int,
                              rng: np.random.Generator) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``size`` pairs (a, b) of pages of different domains, uniform among them (with
    replacement); all of them, each once, when there are at most ``size``."""
    n = len(codes)
    total = cross_domain_pair_count(codes)
    if total == 0 or size <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if total <= size:
        a, b = np.triu_indices(n, 1)
        keep = codes[a] != codes[b]
        return a[keep].astype(np.int64), b[keep].astype(np.int64)
    found_a: list[npt.NDArray[np.int64]] = []
    found_b: list[npt.NDArray[np.int64]] = []
    have = 0
    while have < size:  # rejection: a uniform ordered pair, kept when the domains differ
        a = rng.integers(0, n, 2 * (size - have) + 64)
        b = rng.integers(0, n, len(a))
        keep = codes[a] != codes[b]
        found_a.append(a[keep])
        found_b.append(b[keep])
        have += int(keep.sum())
    return np.concatenate(found_a)[:size], np.concatenate(found_b)[:size]


def matched_histogram(fingerprints: U64, a: npt.NDArray[np.int64], b: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """How many of the pairs (a[i], b[i]) match on exactly s dimensions, s = 0..m."""
    m = fingerprints.shape[1]
    histogram = np.zeros(m + 1, np.int64)
    for start in range(0, len(a), CHUNK):
        x = fingerprints[a[start:start + CHUNK]]
        y = fingerprints[b[start:start + CHUNK]]
        matched = np.count_nonzero((x == y) & (x != EMPTY), axis=1)
        histogram += np.bincount(matched, minlength=m + 1)
    return histogram


def auto_threshold(snapshots: Iterable[tuple[U64, npt.ArrayLike]], m: int, sample_pairs: int,
                   false_edge_rate: float, t_min: int, t_max: int, seed: int) -> AutoThreshold:
    """Choose t from the null of (fingerprints, registered domain per page) of each snapshot.
    Computed once, on the driver, before clustering: both engines check with the same t."""
    coded = []
    for fingerprints, domains in snapshots:
        codes = np.unique(np.asarray(domains, dtype=object).astype(str), return_inverse=True)[1].astype(np.int64)
        coded.append((fingerprints, codes, cross_domain_pair_count(codes)))
    pages = sum(len(c) for _, c, _ in coded)
    total = sum(x for _, _, x in coded)
    histogram = np.zeros(m + 1, np.int64)
    rng = np.random.default_rng([seed, 2006])  # fixed: the same crawl gives the same t
    for fingerprints, codes, cross in coded:
        if cross == 0:
            continue
        share = max(1, round(sample_pairs * cross / total))
        a, b = sample_cross_domain_pairs(codes, share, rng)
        histogram += matched_histogram(fingerprints, a, b)
    candidates = 2 * total / pages if pages else 0.0
    t, reason = choose_t(histogram, candidates, false_edge_rate, t_min, t_max)
    expected = float(expected_false_edges(histogram, candidates)[t]) if histogram.sum() else 0.0
    return AutoThreshold(t=t, false_edge_rate=false_edge_rate, t_min=t_min, t_max=t_max, sample_pairs=sample_pairs,
                         pairs=int(histogram.sum()), cross_domain_pairs=int(total), candidates_per_page=candidates,
                         expected_false_edges=expected, reason=reason, histogram=histogram.tolist())
