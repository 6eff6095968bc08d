"""XJaccard along time (Erdélyi et al. 3.1.3): the overlap of a node's k-step neighbourhoods in
snapshots t0 and t1, XJac_l = sum_{k=1..l} Jac(Gamma_k^t0, Gamma_k^t1) c^k (1 - c).

Gamma_k(v) is read as the set of nodes at the end of a walk of exactly k links from v (the
nonzero pattern of row v of A^k): the neighbourhood Algorithm 3 of Fogaras & Rácz computes, since
its min-hash of Gamma_k(v) is the min over v's out-neighbours of their min-hash of Gamma_{k-1}.
Jaccard of two empty sets is taken as 0 (nothing in common). Exact computation by sparse
matrix powers for small graphs; min-hash fingerprints with the same permutations in both
snapshots for large ones (standard error of each Jaccard term <= 0.5 / sqrt(fingerprints)).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from spamflow_links.minhash import EMPTY, min_over_rows, permutations
from spamflow_links.static_features import ratio


def _bool(a: sp.spmatrix) -> sp.csr_matrix:
    return sp.csr_matrix(a, dtype=bool)


def jaccard_layers_exact(a0: sp.spmatrix, a1: sp.spmatrix, max_k: int = 4) -> list[np.ndarray]:
    """Exact Jac(Gamma_k^t0(v), Gamma_k^t1(v)) for k = 1..max_k, every row v."""
    b0, b1 = _bool(a0), _bool(a1)
    w0, w1 = b0, b1
    out = []
    for k in range(1, max_k + 1):
        if k > 1:
            w0, w1 = _bool(w0 @ b0), _bool(w1 @ b1)
        inter = np.asarray(w0.multiply(w1).sum(axis=1)).ravel().astype(np.float64)
        union = np.diff(w0.indptr) + np.diff(w1.indptr) - inter
        out.append(np.nan_to_num(ratio(inter, union), nan=0.0))
    return out


def jaccard_layers_minhash(a0: sp.spmatrix, a1: sp.spmatrix, max_k: int = 4, fingerprints: int = 64,
                           seed: int = 0, chunk: int = 16) -> list[np.ndarray]:
    """Min-hash estimates of the same Jaccard terms: the fraction of permutations under which
    the two neighbourhoods have the same (non-empty) minimum."""
    b0, b1 = _bool(a0), _bool(a1)
    n = b0.shape[0]
    rng = np.random.default_rng(seed)
    agree = [np.zeros(n) for _ in range(max_k)]
    for lo in range(0, fingerprints, chunk):
        sigma = permutations(n, min(chunk, fingerprints - lo), rng)
        f0, f1 = sigma, sigma
        for k in range(max_k):
            f0, f1 = min_over_rows(b0, f0), min_over_rows(b1, f1)
            agree[k] += ((f0 == f1) & (f0 != EMPTY)).sum(axis=0)
    return [x / fingerprints for x in agree]


def xjaccard(layers: list[np.ndarray], c: float = 0.1) -> dict[int, np.ndarray]:
    """XJac_l for l = 1..len(layers) from the per-layer Jaccard values."""
    total = np.zeros_like(layers[0])
    out = {}
    for k, jac in enumerate(layers, start=1):
        total = total + jac * c ** k * (1.0 - c)
        out[k] = total
    return out
