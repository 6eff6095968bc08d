"""PageRank, CheiRank, 2DRank and the correlator kappa (Eom et al., Time evolution of Wikipedia
network ranking), TrustRank (Gyöngyi et al.) and truncated PageRank (Becchetti et al.), by power
iteration on scipy.sparse. One ``Walk`` (the graph's matrix and inverse out-weights) serves
PageRank, TrustRank and truncated PageRank; CheiRank walks the same arrays backwards.

Conventions follow the Wikipedia paper: ``S`` is the column-stochastic transition matrix of
the 0/1 (or weighted) adjacency, a dangling node's column is replaced by 1/N, and
``G = alpha * S + (1 - alpha) / N``; PageRank is G's eigenvector at 1, summing to 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class Walk:
    """The random walk on a graph, built once and shared by every rank computed on it.

    ``step(x)`` is S x without the dangling columns: A^T (x / out). Keeping A as given and
    scaling the vector instead of the matrix means no normalised or transposed copy of the
    m edges is ever made: the forward walk multiplies by the CSC view A^T of A's CSR arrays
    (a scatter, faster here than a gather on a transposed copy), the reversed walk (CheiRank)
    by A itself."""

    matrix: sp.spmatrix
    """M with M @ x = the mass arriving at each node: A^T (forward) or A (reversed), float64."""
    inv_out: np.ndarray
    """1 / (total link weight leaving the node along the walk), 0 for a dangling node."""
    dangling: np.ndarray
    """Ids of the dangling nodes (no link out along the walk), ascending."""

    @classmethod
    def of(cls, adjacency: sp.spmatrix, *, reverse: bool = False) -> Walk:
        """The walk along the links of ``adjacency`` (row = source), or against them."""
        a = sp.csr_matrix(adjacency, dtype=np.float64)  # no copy if already float64 CSR
        check_weights(a)
        matrix = a if reverse else a.T  # views of the same arrays
        out = np.asarray(matrix.T @ np.ones(a.shape[0]))  # weight leaving each node along the walk
        dangling = out == 0
        inv = np.divide(1.0, out, out=np.zeros_like(out), where=~dangling)
        return cls(matrix, inv, np.flatnonzero(dangling))

    @property
    def n(self) -> int:
        return int(self.matrix.shape[0])

    def step(self, x: np.ndarray, scratch: np.ndarray) -> np.ndarray:
        """S x over the non-dangling columns (a new array); ``scratch``: n floats to reuse."""
        np.multiply(x, self.inv_out, out=scratch)
        return np.asarray(self.matrix @ scratch)

    def dangling_mass(self, x: np.ndarray) -> float:
        return float(x.take(self.dangling).sum())


def check_weights(a: sp.csr_matrix) -> None:
    """A walk needs a square matrix of finite, non-negative link weights: say which edge is not."""
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"the adjacency matrix must be square (one row and column per node), not {a.shape}")
    if a.data.size == 0 or (a.data.min() >= 0 and a.data.max() < np.inf):  # False for NaN too; no copy
        return
    bad = np.flatnonzero(~(np.isfinite(a.data) & (a.data >= 0)))
    k = int(bad[0])
    source = int(np.searchsorted(a.indptr, k, side="right")) - 1
    raise ValueError(f"link weights must be finite and >= 0: {len(bad)} are not, the first is "
                     f"{a.data[k]!r} on the edge {source} -> {int(a.indices[k])}")


def as_walk(graph: sp.spmatrix | Walk) -> Walk:
    """The forward walk on ``graph``, unless it already is a walk."""
    return graph if isinstance(graph, Walk) else Walk.of(graph)


def pagerank(adjacency: sp.spmatrix | Walk, alpha: float = 0.85, *, teleport: np.ndarray | None = None,
             tol: float = 1e-10, max_iter: int = 1000) -> np.ndarray:
    """PageRank by power iteration: p <- alpha (S p) + (1 - alpha) v, where a dangling node
    sends its mass along v (uniform 1/N unless ``teleport`` is given, as for TrustRank); stops
    when the L1 change of p is below ``tol``. ``adjacency``: the graph, or its ``Walk``."""
    return power_iteration(as_walk(adjacency), alpha, teleport, tol, max_iter)[0]


def power_iteration(walk: Walk, alpha: float, teleport: np.ndarray | None, tol: float,
                    max_iter: int) -> tuple[np.ndarray, int]:
    """(PageRank of the walk, iterations made): ``pagerank`` without the defaults. Each
    iteration is one sparse product plus in-place vector passes; nothing of size m is made."""
    n = walk.n
    if n == 0:
        return np.zeros(0), 0
    v = None if teleport is None else np.asarray(teleport, dtype=np.float64) / float(np.sum(teleport))
    p = np.full(n, 1.0 / n) if v is None else v.copy()
    scratch = np.empty(n)
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        new = walk.step(p, scratch)
        new *= alpha
        jump = alpha * walk.dangling_mass(p) + (1.0 - alpha)
        if v is None:
            new += jump / n
        else:
            new += np.multiply(v, jump, out=scratch)
        err = np.abs(np.subtract(new, p, out=scratch), out=scratch).sum()
        p = new
        if err < tol:
            break
    return p / p.sum(), iterations


def cheirank(adjacency: sp.spmatrix, alpha: float = 0.85, tol: float = 1e-10) -> np.ndarray:
    """PageRank of the inverted network (every link reversed): high for communicative nodes."""
    return pagerank(Walk.of(adjacency, reverse=True), alpha, tol=tol)


TIE_RTOL = 1e-12
"""Probabilities this close (relative) are ties: two hosts with the same links get values a
rounding error apart, which differs between summation orders (scipy, MapReduce)."""


def rank_index(p: np.ndarray) -> np.ndarray:
    """K(i): 1 for the largest probability; ties broken by node id, so K is a permutation.
    Values within ``TIE_RTOL`` of the next larger one (a chain of them) are one tie."""
    ids = np.arange(len(p))
    order = np.lexsort((ids, -p))
    ranked = p[order]
    new_group = np.ones(len(p), dtype=bool)
    new_group[1:] = ranked[:-1] - ranked[1:] > TIE_RTOL * np.abs(ranked[:-1])
    group = np.empty(len(p), dtype=np.int64)
    group[order] = np.cumsum(new_group)
    k = np.empty(len(p), dtype=np.int64)
    k[np.lexsort((ids, group))] = np.arange(1, len(p) + 1)
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


def trustrank(adjacency: sp.spmatrix | Walk, seeds: np.ndarray, alpha: float = 0.85, tol: float = 1e-10) -> np.ndarray:
    """TrustRank: PageRank whose random jumps (and dangling mass) go to the good seeds only,
    uniformly; ``seeds`` is a boolean mask with at least one True."""
    seeds = np.asarray(seeds, dtype=bool)
    if not seeds.any():
        raise ValueError("trustrank needs at least one seed node")
    return pagerank(adjacency, alpha, teleport=seeds.astype(np.float64), tol=tol)


def truncated_pagerank(adjacency: sp.spmatrix | Walk, max_t: int = 4, alpha: float = 0.85,
                       tol: float = 1e-10, pr: np.ndarray | None = None) -> dict[int, np.ndarray]:
    """Truncated PageRank for T = 1..max_t (Becchetti et al. 2006): the PageRank series
    sum_t (1-alpha) alpha^t x_t, x_0 = 1/N, x_{t+1} = S x_t, without its terms t <= T, so the
    first T steps of support (a link farm's own links) do not count. ``pr``: the graph's
    PageRank for the same alpha, if already computed."""
    walk = as_walk(adjacency)
    n = walk.n
    if pr is None:
        pr = pagerank(walk, alpha, tol=tol)
    x = np.full(n, 1.0 / n)
    head = np.zeros(n)
    scratch = np.empty(n)
    out: dict[int, np.ndarray] = {}
    for t in range(max_t + 1):
        head += (1.0 - alpha) * alpha ** t * x
        if t >= 1:
            out[t] = np.clip(pr - head, 0.0, None)
        mass = walk.dangling_mass(x)
        x = walk.step(x, scratch)
        x += mass / n
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
