"""Supporters at distance exactly k (Becchetti et al.'s ``neighbors_k``): nodes whose shortest
directed path *to* x has k links. Exact by sparse boolean BFS for small graphs; for large ones
HyperLogLog counters propagated along in-links (the ANF idea: the ball of radius k of x is the
union of the balls of radius k-1 of x and of its in-neighbours), O(k * edges * registers).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from spamflow.progress import progress_bar


def supporters_exact(adjacency: sp.spmatrix, max_k: int = 4) -> dict[int, np.ndarray]:
    """|{y : dist(y, x) == k}| for k = 1..max_k, from reach sets S_k = S_{k-1} + S_{k-1} A^T."""
    a = sp.csr_matrix(adjacency, dtype=bool)
    n = a.shape[0]
    reach = sp.identity(n, dtype=bool, format="csr")
    at = sp.csr_matrix(a.T)
    sizes = [np.ones(n, dtype=np.int64)]
    out: dict[int, np.ndarray] = {}
    for k in range(1, max_k + 1):
        reach = sp.csr_matrix(reach + reach @ at, dtype=bool)
        size = np.diff(reach.indptr).astype(np.int64)
        out[k] = size - sizes[-1]
        sizes.append(size)
    return out


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """A 64-bit mixing hash of integers (vectorised splitmix64 finaliser)."""
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def hll_init(n: int, log2m: int, seed: int = 0) -> np.ndarray:
    """Registers (2^log2m x n, uint8) of the one-element sets {x}."""
    m = 1 << log2m
    h = _splitmix64(np.arange(n, dtype=np.uint64) ^ _splitmix64(np.array([seed], dtype=np.uint64))[0])
    bucket = (h & np.uint64(m - 1)).astype(np.int64)
    rest = h >> np.uint64(log2m)
    bits = 64 - log2m
    # rank = position of the lowest set bit of the remaining bits, 1-based (geometric)
    rank = np.full(n, bits + 1, dtype=np.int64)
    low = rest & (~rest + np.uint64(1))
    nz = rest != 0
    rank[nz] = np.log2(low[nz].astype(np.float64)).astype(np.int64) + 1
    regs = np.zeros((m, n), dtype=np.uint8)
    regs[bucket, np.arange(n)] = rank.astype(np.uint8)
    return regs


def hll_estimate(regs: np.ndarray) -> np.ndarray:
    """HyperLogLog cardinality per node (Flajolet et al. 2007, with linear counting for small
    sets); ``regs`` is registers x nodes. One register at a time, so memory stays O(nodes)."""
    m = regs.shape[0]
    alpha = 0.7213 / (1 + 1.079 / m) if m >= 128 else {16: 0.673, 32: 0.697, 64: 0.709}[m]
    table = np.power(2.0, -np.arange(256, dtype=np.float64))
    inverse_sum = np.zeros(regs.shape[1])
    zeros = np.zeros(regs.shape[1])
    for reg in regs:
        inverse_sum += table[reg]
        zeros += reg == 0
    raw = alpha * m * m / inverse_sum
    small = (raw <= 2.5 * m) & (zeros > 0)
    est = raw.copy()
    est[small] = m * np.log(m / zeros[small])
    return est


def _max_over_neighbours(rows: sp.csr_matrix, regs: np.ndarray) -> np.ndarray:
    """out[r, x] = max of regs[r, y] over the column indices y of row x (0 if none); one
    contiguous 1-D reduceat per register (``regs`` is registers x nodes)."""
    out = np.zeros_like(regs)
    if not rows.nnz:
        return out
    nonempty = np.diff(rows.indptr) > 0
    starts = rows.indptr[:-1][nonempty]
    for reg_in, reg_out in zip(regs, out):
        reg_out[nonempty] = np.maximum.reduceat(reg_in[rows.indices], starts)
    return out


def supporters_hll(adjacency: sp.spmatrix, max_k: int = 4, log2m: int = 7, seed: int = 0,
                   progress: bool | None = False) -> dict[int, np.ndarray]:
    """Estimated supporters at distance exactly k: HLL(ball_k) - HLL(ball_{k-1}), clipped at 0
    (standard error of each ball about 1.04 / sqrt(2^log2m))."""
    a = sp.csr_matrix(adjacency)
    in_rows = sp.csr_matrix(a.T)
    in_rows.sort_indices()
    regs = hll_init(a.shape[0], log2m, seed)
    previous = hll_estimate(regs)
    out: dict[int, np.ndarray] = {}
    for k in progress_bar(range(1, max_k + 1), desc="neighbours (HyperLogLog)", setting=progress):
        regs = np.maximum(regs, _max_over_neighbours(in_rows, regs))
        size = hll_estimate(regs)
        out[k] = np.clip(size - previous, 0.0, None)
        previous = size
    return out
