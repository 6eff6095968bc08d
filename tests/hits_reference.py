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
