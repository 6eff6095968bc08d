"""PageRank, CheiRank, 2DRank and the correlator kappa (Eom et al., Time evolution of Wikipedia
network ranking), TrustRank (Gyöngyi et al.) and truncated PageRank (Becchetti et al.), by power
iteration on scipy.sparse.

Conventions follow the Wikipedia paper: ``S`` is the column-stochastic transition matrix of
the 0/1 (or weighted) adjacency, a dangling node's column is replaced by 1/N, and
``G = alpha * S + (1 - alpha) / N``; PageRank is G's eigenvector at 1, summing to 1.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def transition(adjacency: sp.spmatrix) -> tuple[sp.csr_matrix, np.ndarray]:
    """(S^T as CSR rows = sources normalised, dangling mask): row i of the result holds the
    probabilities of stepping from i to each j."""
    a = sp.csr_matrix(adjacency, dtype=np.float64)
    out = np.asarray(a.sum(axis=1)).ravel()
    dangling = out == 0
    inv = np.divide(1.0, out, out=np.zeros_like(out), where=~dangling)
    return sp.csr_matrix(sp.diags(inv) @ a), dangling


def pagerank(adjacency: sp.spmatrix, alpha: float = 0.85, *, teleport: np.ndarray | None = None,
             tol: float = 1e-10, max_iter: int = 1000) -> np.ndarray:
    """PageRank by power iteration: p <- alpha (S p) + (1 - alpha) v, where a dangling node
    sends its mass along v (uniform 1/N unless ``teleport`` is given, as for TrustRank)."""
    n = adjacency.shape[0]
    if n == 0:
        return np.zeros(0)
    m, dangling = transition(adjacency)
    mt = sp.csr_matrix(m.T)
    v = np.full(n, 1.0 / n) if teleport is None else np.asarray(teleport, dtype=np.float64) / float(np.sum(teleport))
    p = v.copy()
    for _ in range(max_iter):
        new = alpha * (mt @ p) + (alpha * p[dangling].sum() + (1.0 - alpha)) * v
        err = np.abs(new - p).sum()
        p = new
        if err < tol:
            break
    return p / p.sum()


def cheirank(adjacency: sp.spmatrix, alpha: float = 0.85, tol: float = 1e-10) -> np.ndarray:
    """PageRank of the inverted network (every link reversed): high for communicative nodes."""
    return pagerank(sp.csr_matrix(adjacency.T), alpha, tol=tol)


def rank_index(p: np.ndarray) -> np.ndarray:
    """K(i): 1 for the largest probability; ties broken by node id, so K is a permutation."""
    order = np.lexsort((np.arange(len(p)), -p))
    k = np.empty(len(p), dtype=np.int64)
    k[order] = np.arange(1, len(p) + 1)
    return k


def two_d_rank(k: np.ndarray, k_star: np.ndarray) -> np.ndarray:
    """2DRank K2 (Zhirov et al.): nodes in order of appearance on the ribs of squares
    [1, s] x [1, s] in the (K, K*) plane as s grows from 1 to N. Two nodes appearing on the
    same square (one at K = s, one at K* = s) are ordered by their other coordinate, smaller
    first (our choice: the paper does not say)."""
    side = np.maximum(k, k_star)
    other = np.minimum(k, k_star)
    order = np.lexsort((other, side))
    k2 = np.empty(len(k), dtype=np.int64)
    k2[order] = np.arange(1, len(k) + 1)
    return k2


def kappa(p: np.ndarray, p_star: np.ndarray) -> float:
    """The correlator kappa = N sum_i P(i) P*(i) - 1 (Eom et al. eq. 3); 0 if uncorrelated."""
    return float(len(p) * np.dot(p, p_star) - 1.0)


def trustrank(adjacency: sp.spmatrix, seeds: np.ndarray, alpha: float = 0.85, tol: float = 1e-10) -> np.ndarray:
    """TrustRank: PageRank whose random jumps (and dangling mass) go to the good seeds only,
    uniformly; ``seeds`` is a boolean mask with at least one True."""
    seeds = np.asarray(seeds, dtype=bool)
    if not seeds.any():
        raise ValueError("trustrank needs at least one seed node")
    return pagerank(adjacency, alpha, teleport=seeds.astype(np.float64), tol=tol)


def truncated_pagerank(adjacency: sp.spmatrix, max_t: int = 4, alpha: float = 0.85,
                       tol: float = 1e-10, pr: np.ndarray | None = None) -> dict[int, np.ndarray]:
    """Truncated PageRank for T = 1..max_t (Becchetti et al. 2006): the PageRank series
    sum_t (1-alpha) alpha^t x_t, x_0 = 1/N, x_{t+1} = S x_t, without its terms t <= T, so the
    first T steps of support (a link farm's own links) do not count. ``pr``: the graph's
    PageRank for the same alpha, if already computed."""
    n = adjacency.shape[0]
    if pr is None:
        pr = pagerank(adjacency, alpha, tol=tol)
    m, dangling = transition(adjacency)
    mt = sp.csr_matrix(m.T)
    x = np.full(n, 1.0 / n)
    head = np.zeros(n)
    out: dict[int, np.ndarray] = {}
    for t in range(max_t + 1):
        head += (1.0 - alpha) * alpha ** t * x
        if t >= 1:
            out[t] = np.clip(pr - head, 0.0, None)
        x = mt @ x + x[dangling].sum() / n
    return out


def rank_density(k: np.ndarray, k_star: np.ndarray, cells: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """The density of nodes in the (K, K*) plane on ``cells`` x ``cells`` logarithmically
    equidistant cells covering [1, N]^2 (Eom et al. Fig. 2): (counts / N with rows = K cells,
    columns = K* cells, the shared cell edges)."""
    n = len(k)
    edges = np.logspace(0.0, np.log10(max(n, 2)), cells + 1)
    edges[-1] = np.nextafter(edges[-1], np.inf)  # K = N falls in the last cell
    counts, _, _ = np.histogram2d(k, k_star, bins=(edges, edges))
    return counts / max(n, 1), edges
