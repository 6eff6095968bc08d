"""Linkage growth and death between snapshots t0 and t1 (Shen et al., as listed in Erdélyi et
al. section 3.1.1), the change rate of the clustering coefficient, their derived products and
ratios, and change(u) of Göbölös-Szabó & Benczúr. Both graphs are on one node index.

Features are defined only for nodes crawled in both snapshots (section 4: a site present in
one snapshot has missing temporal features); everything else is NaN. Means and variances
"across in-neighbours" are over the in-neighbours at t1 that have the feature (our choice:
the paper does not say which snapshot's in-neighbours).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from spamflow_links.static_features import neighbour_mean_var, ratio


def _binary(a: sp.spmatrix) -> sp.csr_matrix:
    b = sp.csr_matrix(a, dtype=np.float64, copy=True)
    b.data[:] = 1.0
    b.eliminate_zeros()
    return b


def death_growth(b0: sp.csr_matrix, b1: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """(death rate, growth rate) of each row's neighbour set: (|N0| - |N0 & N1|) / |N0| and
    (|N1| - |N0 & N1|) / |N0|; NaN where |N0| = 0."""
    n0 = np.diff(b0.indptr).astype(np.float64)
    n1 = np.diff(b1.indptr).astype(np.float64)
    both = np.asarray(b0.multiply(b1).sum(axis=1)).ravel()
    return ratio(n0 - both, n0), ratio(n1 - both, n0)


def clustering(b: sp.csr_matrix, chunk: int = 65536) -> np.ndarray:
    """CC(a) = |{(b, c) in G : b, c in Gamma(a)}| / |Gamma(a)| (section 3.1.1), NaN if Gamma(a)
    is empty. Rows in chunks so that A·A never materialises whole."""
    n = b.shape[0]
    links = np.zeros(n)
    for lo in range(0, n, chunk):
        rows = b[lo:lo + chunk]
        links[lo:lo + chunk] = np.asarray((rows @ b).multiply(rows).sum(axis=1)).ravel()
    return ratio(links, np.diff(b.indptr))


def log_change(x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    """|log(x0 / x1)|; add-one smoothing when either count is 0 (our choice: the paper's
    formula is undefined there, and a host going from 0 to 5 links did change)."""
    x0 = np.asarray(x0, dtype=np.float64)
    x1 = np.asarray(x1, dtype=np.float64)
    zero = (x0 == 0) | (x1 == 0)
    num = np.where(zero, x0 + 1, x0)
    den = np.where(zero, x1 + 1, x1)
    return np.abs(np.log(num / den))


def change_u(in0: np.ndarray, in1: np.ndarray, out0: np.ndarray, out1: np.ndarray,
             words0: np.ndarray, words1: np.ndarray) -> np.ndarray:
    """change(u) = |log din_t1/din_t2| + |log dout_t1/dout_t2| + |log words_t1/words_t2|."""
    return log_change(in0, in1) + log_change(out0, out1) + log_change(words0, words1)


def rate_features(a0: sp.spmatrix, a1: sp.spmatrix, both: np.ndarray, words0: np.ndarray,
                  words1: np.ndarray) -> dict[str, np.ndarray]:
    """IDR, IGR, ODR, OGR, their means and variances over in-neighbours, CRCC, the derived
    products and ratios, and change(u); ``both`` marks nodes crawled in both snapshots."""
    b0, b1 = _binary(a0), _binary(a1)
    t0, t1 = sp.csr_matrix(b0.T), sp.csr_matrix(b1.T)
    f: dict[str, np.ndarray] = {}
    f["IDR"], f["IGR"] = death_growth(t0, t1)
    f["ODR"], f["OGR"] = death_growth(b0, b1)
    for name in ("IDR", "IGR", "ODR", "OGR"):
        f[name] = np.where(both, f[name], np.nan)
    for name in ("IDR", "IGR", "ODR", "OGR"):
        f[f"{name}Mean"], f[f"{name}Var"] = neighbour_mean_var(t1, f[name])
    cc0, cc1 = clustering(b0), clustering(b1)
    f["CRCC"] = ratio(cc1 - cc0, cc0)
    for side in ("I", "O"):
        g, d = f"{side}GR", f"{side}DR"
        f[f"{g}*{d}"] = f[g] * f[d]
        f[f"{g}/{d}"] = ratio(f[g], f[d])
        f[f"{g}Mean/{g}"] = ratio(f[f"{g}Mean"], f[g])
        f[f"{g}Var/{g}"] = ratio(f[f"{g}Var"], f[g])
        f[f"{d}Mean/{d}"] = ratio(f[f"{d}Mean"], f[d])
        f[f"{d}Var/{d}"] = ratio(f[f"{d}Var"], f[d])
        f[f"{g}Mean*{d}Mean"] = f[f"{g}Mean"] * f[f"{d}Mean"]
        f[f"{g}Mean/{d}Mean"] = ratio(f[f"{g}Mean"], f[f"{d}Mean"])
        f[f"{g}Var*{d}Var"] = f[f"{g}Var"] * f[f"{d}Var"]
        f[f"{g}Var/{d}Var"] = ratio(f[f"{g}Var"], f[f"{d}Var"])
    f["change"] = change_u(np.diff(t0.indptr), np.diff(t1.indptr), np.diff(b0.indptr), np.diff(b1.indptr),
                           words0, words1)
    for name in f:
        f[name] = np.where(both, f[name], np.nan)
    return f
