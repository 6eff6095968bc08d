"""A dense reference for personalized HITS, written straight from eqs. (7)-(8) of
Göbölös-Szabó & Benczúr (section 2.5), for the tests to hold the sparse code to."""

from __future__ import annotations

import numpy as np


def dense_hits(w: np.ndarray, p: np.ndarray, c: float, tol: float = 1e-14,
               max_iter: int = 100_000) -> tuple[np.ndarray, np.ndarray]:
    """Eqs. (7)-(8) literally on a dense weight matrix w[u, v] = w(uv): per node a sum over its
    in-links (authority) or out-links (hub) plus c p(v), then divided by the maximum. Both
    vectors are updated from the previous iteration's (Jacobi order, unlike the code's
    Kleinberg order: the fixed point is the same), until nothing moves by ``tol``."""
    n = len(p)
    a, h = np.ones(n), np.ones(n)
    for _ in range(max_iter):
        a_hat = np.array([sum(w[u, v] * h[u] for u in range(n)) for v in range(n)]) + c * p
        h_hat = np.array([sum(w[v, u] * a[u] for u in range(n)) for v in range(n)]) + c * p
        new_a = a_hat / a_hat.max() if a_hat.max() > 0 else a_hat
        new_h = h_hat / h_hat.max() if h_hat.max() > 0 else h_hat
        moved = max(np.abs(new_a - a).max(), np.abs(new_h - h).max())
        a, h = new_a, new_h
        if moved < tol:
            return a, h
    raise AssertionError("the dense iteration did not converge")


def dense_ppr(w: np.ndarray, p: np.ndarray, c: float) -> np.ndarray:
    """Eq. (3) solved as a linear system: PPR = (1 - c) Mᵀ PPR + c p, M[u, v] = w(uv) / w(u),
    where a node without out-links jumps along p (uniform if p is all zeros), as the code's
    stated choice for what eq. (3) leaves open."""
    n = len(p)
    jump = p / p.sum() if p.sum() > 0 else np.full(n, 1.0 / n)
    out = w.sum(axis=1)
    m = np.array([w[u] / out[u] if out[u] > 0 else jump for u in range(n)])
    return np.linalg.solve(np.eye(n) - (1.0 - c) * m.T, c * jump)
