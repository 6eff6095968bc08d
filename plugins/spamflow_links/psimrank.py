"""PSimRank along time (Erdélyi et al. 3.1.4, after Fogaras & Rácz): two random walks start at
v, one in snapshot t0 and one in t1, and step backwards along in-links. At step k both use one
random permutation sigma_k of the nodes and move to the in-neighbour with the smallest
sigma_k, so walks at u' (in t0) and v' (in t1) meet in one step with probability equal to the
Jaccard coefficient of I^t0(u') and I^t1(v'). With tau the step at which they first stand
on the same node, PSimRank_l(v) = E[c^tau ; tau <= l], estimated over ``fingerprints`` walk
pairs. A node whose in-links did not change meets at step 1 with certainty: PSimRank = c,
the largest value, whatever its in-degree (SimRank's c/k deficiency of section 3.1.2 is gone).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from spamflow_links.minhash import EMPTY, min_over_rows


def psimrank(in0: sp.spmatrix, in1: sp.spmatrix, max_l: int = 4, c: float = 0.15, fingerprints: int = 64,
             seed: int = 0) -> dict[int, np.ndarray]:
    """PSimRank_l for l = 1..max_l; ``in0``/``in1`` have the walk's next candidates as row
    entries (the transposed adjacency for walks along in-links)."""
    r0, r1 = sp.csr_matrix(in0, dtype=bool), sp.csr_matrix(in1, dtype=bool)
    n = r0.shape[0]
    rng = np.random.default_rng(seed)
    total = {ell: np.zeros(n) for ell in range(1, max_l + 1)}
    start = np.arange(n, dtype=np.int64)
    for _ in range(fingerprints):
        p0, p1 = start.copy(), start.copy()
        met = np.zeros(n, dtype=bool)
        for k in range(1, max_l + 1):
            sigma = rng.permutation(n).astype(np.int32)
            inverse = np.empty(n, dtype=np.int64)
            inverse[sigma] = np.arange(n)
            step0, step1 = min_over_rows(r0, sigma), min_over_rows(r1, sigma)
            next0 = np.where(step0 == EMPTY, -1, inverse[np.minimum(step0, n - 1)])
            next1 = np.where(step1 == EMPTY, -1, inverse[np.minimum(step1, n - 1)])
            p0 = np.where(p0 >= 0, next0[np.maximum(p0, 0)], -1)
            p1 = np.where(p1 >= 0, next1[np.maximum(p1, 0)], -1)
            new = ~met & (p0 >= 0) & (p0 == p1)
            met |= new
            for ell in range(k, max_l + 1):
                total[ell][new] += c ** k
    return {ell: v / fingerprints for ell, v in total.items()}
