"""Personalized HITS with a supersource (Göbölös-Szabó & Benczúr, Temporal Wikipedia search by
edits and linkage, section 2.5), and their personalized PageRank (section 2.4), both
personalized on the change between two snapshots.

The supersource is a node linked to every node with weight p(v); each iteration it hands out
``c`` units of score split by p, so authority and hub flow from the hosts that changed:

    â(v) = sum_{uv in E} w(uv) h(u) + c p(v),   a = â / max(â)      (7)
    ĥ(v) = sum_{vu in E} w(vu) a(u) + c p(v),   h = ĥ / max(ĥ)      (8)

The personalization is the paper's change score of eq. (2) with no text query (alpha = 0):
change(u) / (change(u) + T), made a distribution (sum 1) as the supersource "splits a fixed
amount of score proportional to the personalization distribution".
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

from spamflow_links.ranks import check_weights, pagerank

log = logging.getLogger(__name__)


def change_personalization(change: np.ndarray, change_T: float) -> np.ndarray:
    """p(u) = s(u) / sum s, s(u) = change(u) / (change(u) + T) (eq. 2, alpha = 0); a host with
    no change value (not crawled in both snapshots: NaN) gets 0, as the paper allows weight 0.
    All zeros if nothing changed (then HITS is Kleinberg's, unpersonalized)."""
    change = np.asarray(change, dtype=np.float64)
    known = np.isfinite(change)
    if np.any(change[known] < 0):
        raise ValueError("change scores must be >= 0")
    s = np.zeros(len(change))
    s[known] = change[known] / (change[known] + change_T)
    total = s.sum()
    return s / total if total > 0 else s


def _max_normalised(x: np.ndarray) -> np.ndarray:
    """x / max(x) in place (x >= 0); all zeros stay zeros."""
    top = x.max() if x.size else 0.0
    if top > 0:
        x /= top
    return x


def personalized_hits(adjacency: sp.spmatrix, p: np.ndarray, c: float = 200.0, *, tol: float = 1e-10,
                      max_iter: int = 1000) -> tuple[np.ndarray, np.ndarray, int]:
    """(HitsAuth a, HitsHub h, iterations) of eqs. (7)-(8) on ``adjacency`` (row = source,
    entries = the edge weights w). Starts from a = h = 1, updates a from h and then h from the
    new a (Kleinberg's order; the fixed point does not depend on it), and stops when no
    element of a or h moved by more than ``tol`` (both have max 1, so this is a relative
    tolerance) or after ``max_iter`` iterations, then logging a warning with the last change."""
    a_mat = sp.csr_matrix(adjacency, dtype=np.float64)
    check_weights(a_mat)
    n = a_mat.shape[0]
    p = np.asarray(p, dtype=np.float64)
    if p.shape != (n,) or not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"the personalization must be {n} finite values >= 0")
    if n == 0:
        return np.zeros(0), np.zeros(0), 0
    supersource = c * p
    auth, hub = np.ones(n), np.ones(n)
    into = a_mat.T  # CSC view of the same arrays: into @ h sums h over each node's in-links
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        new_auth = _max_normalised(np.asarray(into @ hub) + supersource)
        new_hub = _max_normalised(np.asarray(a_mat @ new_auth) + supersource)
        moved = max(float(np.abs(new_auth - auth).max()), float(np.abs(new_hub - hub).max()))
        auth, hub = new_auth, new_hub
        if moved < tol:
            return auth, hub, iterations
    log.warning("personalized HITS stopped after %d iterations on %d nodes with a last change of %.3g (tol %.3g)",
                iterations, n, moved, tol)
    return auth, hub, iterations


def change_pagerank(adjacency: sp.spmatrix, p: np.ndarray, c: float = 0.9, *, tol: float = 1e-10) -> np.ndarray:
    """PPR_p of eq. (3): PPR(v) = (1 - c) sum_{uv in E} PPR(u) w(uv)/w(u) + c p(v), with c the
    probability of jumping back to p (the paper's c = 0.9: strongly personalized). A host
    without out-links (eq. 3 leaves it open) sends its score along p, as TrustRank's do; if
    nothing changed (p = 0) the jump is uniform: plain PageRank with damping 1 - c."""
    if not 0.0 < c <= 1.0:
        raise ValueError(f"the PageRank personalization c must be in (0, 1], got {c}")
    p = np.asarray(p, dtype=np.float64)
    return pagerank(adjacency, 1.0 - c, teleport=p if p.sum() > 0 else None, tol=tol)
