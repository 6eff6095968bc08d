"""Min over neighbour lists, vectorised: the one primitive of the min-hash fingerprints of
XJaccard and of the coupled random walks of PSimRank."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

EMPTY = np.iinfo(np.int64).max
"""Fingerprint of an empty set."""


def min_over_rows(rows: sp.csr_matrix, values: np.ndarray) -> np.ndarray:
    """out[x] = min of values[y] over the column indices y of row x (EMPTY if the row is empty);
    ``values`` may be 1-D (n,) or 2-D (n, s)."""
    n = rows.shape[0]
    shape = (n,) + values.shape[1:]
    out = np.full(shape, EMPTY, dtype=np.int64)
    nonempty = np.diff(rows.indptr) > 0
    if rows.nnz:
        out[nonempty] = np.minimum.reduceat(values[rows.indices], rows.indptr[:-1][nonempty], axis=0)
    return out


def permutations(n: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` independent random permutations of 0..n-1 as columns (n x count, int64)."""
    return np.argsort(rng.random((count, n)), axis=1).T.astype(np.int64)
