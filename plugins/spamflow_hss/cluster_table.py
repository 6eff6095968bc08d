"""The cluster table of HSS Table 1: per cluster its size, distinct domains and IPs, the
centroid (the member most similar to the others) and the members' mean similarity to it,
ranked by mean similarity x domain count."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from spamflow_hss.fingerprint import matched_dimensions

U64 = npt.NDArray[np.uint64]
CENTROID_SAMPLE = 256
"""Clusters larger than this choose their centroid among this many random members, by
similarity to the same sample (exact for smaller clusters; see docs/hss.md)."""


@dataclass(frozen=True)
class Centroid:
    index: int
    """Position of the centroid in the member list."""
    similarities: npt.NDArray[np.float64]
    """Sim_b of every member to the centroid (1.0 for the centroid itself)."""

    @property
    def mean_similarity(self) -> float:
        """Mean Sim_b of the other members to the centroid."""
        others = np.delete(self.similarities, self.index)
        return float(others.mean()) if len(others) else 1.0


def centroid(fingerprints: U64, rng: np.random.Generator, sample: int = CENTROID_SAMPLE) -> Centroid:
    """The member with the highest summed Sim_b to the others (ties: the first), among a
    random sample of ``sample`` members when there are more (then judged against that sample)."""
    size, m = fingerprints.shape
    pool = np.arange(size) if size <= sample else np.sort(rng.choice(size, sample, replace=False))
    block = fingerprints[pool]
    pairwise = matched_dimensions(block[:, None, :], block[None, :, :])
    np.fill_diagonal(pairwise, 0)  # a page's match with itself counts its non-empty dimensions: leave it out
    scores = pairwise.sum(axis=1)
    best = int(pool[int(np.argmax(scores))])
    similarities = (matched_dimensions(fingerprints, fingerprints[best]) / m).astype(np.float64)
    similarities[best] = 1.0
    return Centroid(best, similarities)


def rank_key(mean_similarity: float, domains: int) -> float:
    """Table 1's order: clusters with high mean similarity over many domains first."""
    return mean_similarity * domains
