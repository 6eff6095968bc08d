"""All temporal link features of one snapshot pair (Erdélyi et al. section 3.1, and change(u)),
on graphs that share one node index: rates, CRCC, XJaccard and PSimRank along time on the graph
and on its transpose, their means and variances over neighbours and the derived ratio and log
features of section 3.1.3; and personalized HITS on t1's graph from the hosts that changed
(Göbölös-Szabó & Benczúr section 2.5)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import scipy.sparse as sp

from spamflow.progress import progress_bar
from spamflow_links.hits import change_pagerank, change_personalization, personalized_hits
from spamflow_links.psimrank import psimrank
from spamflow_links.static_features import neighbour_mean_var, rank_matrix, ratio
from spamflow_links.temporal_rates import rate_features
from spamflow_links.xjaccard import jaccard_layers_exact, jaccard_layers_minhash, xjaccard


def _log(x: np.ndarray) -> np.ndarray:
    out = np.full(x.shape, np.nan)
    np.log(x, out=out, where=np.isfinite(x) & (x > 0))
    return out


def similarity_columns(name: str, sim: dict[int, np.ndarray], neighbours: sp.csr_matrix,
                       both: np.ndarray) -> dict[str, np.ndarray]:
    """``name_l`` for l = 1..4, their mean and variance over ``neighbours``, ``name_l_over_{l-1}``
    and its log for l = 2..4, and the log of the min, max and mean of those three ratios."""
    f: dict[str, np.ndarray] = {}
    for ell, values in sim.items():
        f[f"{name}_{ell}"] = np.where(both, values, np.nan)
    for ell in sim:
        f[f"{name}_{ell}_mean"], f[f"{name}_{ell}_var"] = neighbour_mean_var(neighbours, f[f"{name}_{ell}"])
    ratios = []
    for ell in range(2, max(sim) + 1):
        r = ratio(f[f"{name}_{ell}"], f[f"{name}_{ell - 1}"])
        f[f"{name}_{ell}_over_{ell - 1}"] = r
        f[f"log_{name}_{ell}_over_{ell - 1}"] = _log(r)
        ratios.append(r)
    if ratios:
        stack = np.vstack(ratios)
        all_nan = np.all(np.isnan(stack), axis=0)
        safe = np.where(all_nan, 1.0, stack)
        with np.errstate(invalid="ignore"):
            f[f"log_min_{name}_ratio"] = np.where(all_nan, np.nan, _log(np.nanmin(safe, axis=0)))
            f[f"log_max_{name}_ratio"] = np.where(all_nan, np.nan, _log(np.nanmax(safe, axis=0)))
            f[f"log_avg_{name}_ratio"] = np.where(all_nan, np.nan, _log(np.nanmean(safe, axis=0)))
    return {key: np.where(both, values, np.nan) for key, values in f.items()}


def temporal_features(a0: sp.spmatrix, a1: sp.spmatrix, crawled0: np.ndarray, crawled1: np.ndarray,
                      words0: np.ndarray, words1: np.ndarray, *, xjaccard_c: float = 0.1, psimrank_c: float = 0.15,
                      fingerprints: int = 64, exact_max_nodes: int = 5000, seed: int = 0,
                      hits_c: float = 200.0, change_T: float = 10.0, ppr_c: float = 0.9, tol: float = 1e-10,
                      rank_weights: Literal["binary", "counts"] = "binary",
                      progress: bool | None = False) -> dict[str, np.ndarray]:
    """Every temporal feature of every node; NaN for nodes not crawled in both snapshots.
    ``HitsAuth``, ``HitsHub`` and ``ChangePPR`` walk t1's graph (weights as the ranks': ``rank_weights``)."""
    both = np.asarray(crawled0, dtype=bool) & np.asarray(crawled1, dtype=bool)
    a0, a1 = sp.csr_matrix(a0), sp.csr_matrix(a1)
    in_t1 = sp.csr_matrix(a1.T)
    f = rate_features(a0, a1, both, words0, words1)
    walk1 = rank_matrix(a1, rank_weights)
    p = change_personalization(f["change"], change_T)
    auth, hub, _ = personalized_hits(walk1, p, hits_c, tol=tol)
    f["HitsAuth"], f["HitsHub"] = np.where(both, auth, np.nan), np.where(both, hub, np.nan)
    f["ChangePPR"] = np.where(both, change_pagerank(walk1, p, ppr_c, tol=tol), np.nan)
    exact = a0.shape[0] <= exact_max_nodes
    steps = progress_bar(total=4, desc="temporal similarities", setting=progress)
    for direction, g0, g1 in (("out", a0, a1), ("in", sp.csr_matrix(a0.T), in_t1)):
        layers = (jaccard_layers_exact(g0, g1) if exact
                  else jaccard_layers_minhash(g0, g1, 4, fingerprints, seed))
        f.update(similarity_columns(f"xjac_{direction}", xjaccard(layers, xjaccard_c), in_t1, both))
        steps.update()
    # PSimRank walks backwards along in-links; its transpose walks along out-links
    for direction, w0, w1 in (("in", sp.csr_matrix(a0.T), in_t1), ("out", a0, a1)):
        sim = psimrank(w0, w1, 4, psimrank_c, fingerprints, seed + 1)
        f.update(similarity_columns(f"psim_{direction}", sim, in_t1, both))
        steps.update()
    steps.close()
    return f
