"""The per-host link features of one snapshot: the public Web Spam Challenge set (Becchetti
et al., named as in WEBSPAM-UK2007's ``link_based_features``, host level so without the
``_hp``/``_mp`` suffixes), CheiRank, 2DRank, ratios, and the public set's transformed
features (logs and ratios, :mod:`spamflow_links.transforms`). All vectorised over scipy.sparse.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np
import scipy.sparse as sp

from spamflow_links.neighbourhood import supporters_exact, supporters_hll
from spamflow_links.ranks import Walk, pagerank, rank_index, truncated_pagerank, two_d_rank
from spamflow_links.transforms import host_transforms, transformed_features


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, NaN (missing) where den is 0 or either side is missing."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    ok = np.isfinite(num) & np.isfinite(den) & (den != 0)
    np.divide(num, den, out=out, where=ok)
    return out


def neighbour_mean_var(rows: sp.csr_matrix, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and (population) variance of ``values[y]`` over the column indices y of each row,
    ignoring missing values; NaN for a row with no valid neighbour."""
    b = sp.csr_matrix(rows, dtype=np.float64, copy=True)
    b.data[:] = 1.0
    valid = np.isfinite(values)
    v = np.where(valid, values, 0.0)
    count = b @ valid.astype(np.float64)
    return mean_var_of_sums(b @ v, b @ (v * v), count)


VARIANCE_ROUNDING = 1e-11
"""Below this fraction of the mean square, E[x²] - E[x]² is rounding, not spread: summing the
squares in another order (sparse products here, ``math.fsum`` in the MapReduce jobs) moves it by
~n·eps·E[x²], so a host whose neighbours all rank alike came out 0 on one engine and 7e-12
(L_prsigma -25.6 against -50) on the other."""


def mean_var_of_sums(sums: np.ndarray, squares: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and population variance from the sums of values and of their squares over ``counts``
    values (NaN where there are none); a variance within rounding of 0 is 0
    (:data:`VARIANCE_ROUNDING`), so the engines agree on ties."""
    mean = ratio(sums, counts)
    mean_square = ratio(squares, counts)
    var = mean_square - mean * mean
    return mean, np.where(var <= VARIANCE_ROUNDING * mean_square, 0.0, var)


def rank_matrix(adjacency: sp.spmatrix, rank_weights: Literal["binary", "counts"]) -> sp.csr_matrix:
    """The matrix the PageRank-type walks use: the 0/1 pattern (binary, the documented default,
    so 50 links from one host to another weigh as much as one) or the link counts as given."""
    if rank_weights not in ("binary", "counts"):
        raise ValueError(f"rank_weights must be 'binary' or 'counts', not {rank_weights!r}")
    a = sp.csr_matrix(adjacency, dtype=np.float64, copy=True)
    a.eliminate_zeros()
    if rank_weights == "binary":
        a.data[:] = 1.0
    return a


@dataclass
class Walked:
    """Every walk of a snapshot, as :func:`walk_features` asks them of a solver at once."""

    pagerank: np.ndarray
    trustrank: np.ndarray | None
    """None without trust seeds."""
    truncated: dict[int, np.ndarray]
    """Truncated PageRank by T = 1 .. truncated_steps."""
    supporters: dict[int, np.ndarray]
    """The supporters at distance 1 .. distances."""
    cheirank: np.ndarray


class RankSolver(Protocol):
    """Who walks the graph: :class:`MemoryRanks` here, or the MapReduce jobs
    (``spamflow_links.mapreduce.MapReduceRanks``, every walk of a snapshot in one job); both
    give the same vectors."""

    def walks(self, weights: Any, binary: Any, *, alpha: float, tol: float, trust_seeds: np.ndarray | None,
              truncated_steps: int, distances: int, log2m: int, seed: int, exact: bool) -> Walked: ...


class MemoryRanks:
    """The in-process solver: scipy.sparse power iteration, one ``Walk`` per weight matrix
    (kept while the same matrix comes back, so PageRank, TrustRank and truncated PageRank
    share it), exact BFS or HyperLogLog supporters."""

    def __init__(self, progress: bool | None = False) -> None:
        self.progress = progress
        self._walks: dict[tuple[int, bool], tuple[sp.spmatrix, Walk]] = {}

    def walk(self, weights: sp.spmatrix, reverse: bool = False) -> Walk:
        kept = self._walks.get((id(weights), reverse))
        if kept is None or kept[0] is not weights:
            kept = (weights, Walk.of(weights, reverse=reverse))
            self._walks[id(weights), reverse] = kept
        return kept[1]

    def pagerank(self, weights: sp.spmatrix, alpha: float, tol: float, teleport: np.ndarray | None = None,
                 reverse: bool = False) -> np.ndarray:
        return pagerank(self.walk(weights, reverse), alpha, teleport=teleport, tol=tol)

    def truncated_pagerank(self, weights: sp.spmatrix, max_t: int, alpha: float,
                           pr: np.ndarray) -> dict[int, np.ndarray]:
        return truncated_pagerank(self.walk(weights), max_t, alpha, pr=pr)

    def supporters(self, binary: sp.spmatrix, max_k: int, log2m: int, seed: int,
                   exact: bool) -> dict[int, np.ndarray]:
        if exact:
            return supporters_exact(binary, max_k)
        return supporters_hll(binary, max_k, log2m, seed, progress=self.progress)

    def walks(self, weights: sp.spmatrix, binary: sp.spmatrix, *, alpha: float, tol: float,
              trust_seeds: np.ndarray | None, truncated_steps: int, distances: int, log2m: int, seed: int,
              exact: bool) -> Walked:
        """The walks one after the other (PageRank first: truncated PageRank reads it)."""
        pr = self.pagerank(weights, alpha, tol)
        trust = None if trust_seeds is None else self.pagerank(weights, alpha, tol, teleport=trust_seeds)
        truncated = self.truncated_pagerank(weights, truncated_steps, alpha, pr)
        support = self.supporters(binary, distances, log2m, seed, exact)
        return Walked(pr, trust, truncated, support, self.pagerank(weights, alpha, tol, reverse=True))


def static_features(adjacency: sp.spmatrix, *, alpha: float = 0.85, tol: float = 1e-10,
                    trust_seeds: np.ndarray | None = None, exact_max_nodes: int = 5000,
                    hll_log2_registers: int = 7, seed: int = 0, progress: bool | None = False,
                    rank_weights: Literal["binary", "counts"] = "binary",
                    solver: RankSolver | None = None) -> dict[str, np.ndarray]:
    """Every static feature of every node of the graph (self-links must already be gone).
    Degrees and neighbourhoods use the 0/1 pattern; ranks use ``rank_matrix(rank_weights)``.
    ``solver`` walks the graph (default: in this process)."""
    weights = rank_matrix(adjacency, rank_weights)
    b = weights if rank_weights == "binary" else rank_matrix(adjacency, "binary")
    bt = sp.csr_matrix(b.T)
    return walk_features(degree_features(b, bt), weights, b, lambda pr: neighbour_mean_var(bt, pr)[1],
                         MemoryRanks(progress) if solver is None else solver, alpha=alpha, tol=tol,
                         trust_seeds=trust_seeds, exact_max_nodes=exact_max_nodes,
                         hll_log2_registers=hll_log2_registers, seed=seed)


def walk_features(f: dict[str, np.ndarray], weights: Any, binary: Any, in_variance: Callable[[np.ndarray], np.ndarray],
                  ranks: RankSolver, *, alpha: float, tol: float, trust_seeds: np.ndarray | None,
                  exact_max_nodes: int, hll_log2_registers: int, seed: int) -> dict[str, np.ndarray]:
    """``f`` (:func:`degree_features`'s columns) with the ranks, supporters and ratios.  The
    graph is only handed to ``ranks`` (``weights`` for the walks, ``binary`` for the supporters:
    matrices, or what the solver takes instead) and read through ``in_variance`` (the variance
    of a node value over each node's in-neighbours), so a solver may keep it out of memory."""
    indeg = f["indegree"]
    n = len(indeg)
    exact = n <= exact_max_nodes
    seeded = trust_seeds is not None and bool(np.any(trust_seeds))
    walked = ranks.walks(weights, binary, alpha=alpha, tol=tol,
                         trust_seeds=np.asarray(trust_seeds, dtype=np.float64) if seeded else None,
                         truncated_steps=4, distances=4, log2m=hll_log2_registers, seed=seed, exact=exact)
    pr = walked.pagerank
    f["pagerank"] = pr
    f["prsigma"] = np.sqrt(in_variance(pr))
    f["trustrank"] = walked.trustrank if walked.trustrank is not None else np.full(n, np.nan)
    for t, values in walked.truncated.items():
        f[f"truncatedpagerank_{t}"] = values
    support = {k: v.astype(np.float64) for k, v in walked.supporters.items()}
    if not exact:
        support[1] = indeg
    for k in (2, 3, 4):
        f[f"neighbors_{k}"] = support[k]
    chei = walked.cheirank  # CheiRank: PageRank of the reversed links
    f["cheirank"] = chei
    k_pr, k_chei = rank_index(pr), rank_index(chei)
    f["pagerank_index"], f["cheirank_index"] = k_pr.astype(np.float64), k_chei.astype(np.float64)
    f["twodrank_index"] = two_d_rank(k_pr, k_chei).astype(np.float64)
    # ratios, as in the transformed public set
    return with_ratios(f)


def degree_features(b: sp.csr_matrix, bt: sp.csr_matrix) -> dict[str, np.ndarray]:
    """In- and out-degree, reciprocity, the neighbours' mean degrees and assortativity of every
    node of the 0/1 graph ``b`` (``bt`` its transpose): one sparse product each."""
    outdeg = np.diff(b.indptr).astype(np.float64)
    indeg = np.diff(bt.indptr).astype(np.float64)
    mutual = np.asarray(b.multiply(bt).sum(axis=1)).ravel()
    degree = indeg + outdeg
    return degree_columns(indeg, outdeg, mutual, b @ indeg, bt @ outdeg, b @ degree + bt @ degree)


def degree_columns(indeg: np.ndarray, outdeg: np.ndarray, mutual: np.ndarray, in_of_out: np.ndarray,
                   out_of_in: np.ndarray, neighbour_degrees: np.ndarray) -> dict[str, np.ndarray]:
    """The degree features from their sums: ``mutual`` (links returned), the in-degrees of the
    out-neighbours summed, the out-degrees of the in-neighbours summed, the degrees of both
    (a node linked both ways counted twice)."""
    return {"indegree": indeg, "outdegree": outdeg, "reciprocity": ratio(mutual, outdeg),
            "avgin_of_out": ratio(in_of_out, outdeg), "avgout_of_in": ratio(out_of_in, indeg),
            "assortativity": ratio(indeg + outdeg, ratio(neighbour_degrees, indeg + outdeg))}


def with_ratios(f: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``f`` (the raw degree, rank and neighbourhood features) plus the ratios and the public
    set's transformed features, which are computed from them value by value."""
    pr, chei, indeg = f["pagerank"], f["cheirank"], f["indegree"]
    f["pagerank_over_indegree"] = ratio(pr, indeg)
    f["trustrank_over_pagerank"] = ratio(f["trustrank"], pr)
    for t in (1, 2, 3, 4):
        f[f"truncatedpagerank_{t}_over_pagerank"] = ratio(f[f"truncatedpagerank_{t}"], pr)
    f["neighbors_2_over_indegree"] = ratio(f["neighbors_2"], indeg)
    f["neighbors_3_over_neighbors_2"] = ratio(f["neighbors_3"], f["neighbors_2"])
    f["neighbors_4_over_neighbors_3"] = ratio(f["neighbors_4"], f["neighbors_3"])
    f["cheirank_over_pagerank"] = ratio(chei, pr)
    f.update(transformed_features(f, host_level=True))  # L_indegree, log_OP_indegree_div_pagerank_CP_, ...
    return f


RAW_COLUMNS: tuple[str, ...] = (
    "indegree", "outdegree", "reciprocity", "avgin_of_out", "avgout_of_in", "assortativity", "pagerank",
    "prsigma", "trustrank", "truncatedpagerank_1", "truncatedpagerank_2", "truncatedpagerank_3",
    "truncatedpagerank_4", "neighbors_2", "neighbors_3", "neighbors_4", "cheirank", "pagerank_index",
    "cheirank_index", "twodrank_index", "pagerank_over_indegree", "trustrank_over_pagerank",
    "truncatedpagerank_1_over_pagerank", "truncatedpagerank_2_over_pagerank", "truncatedpagerank_3_over_pagerank",
    "truncatedpagerank_4_over_pagerank", "neighbors_2_over_indegree", "neighbors_3_over_neighbors_2",
    "neighbors_4_over_neighbors_3", "cheirank_over_pagerank",
)
"""The columns of links version 2, in order."""

TRANSFORMED_COLUMNS: tuple[str, ...] = tuple(name for name, formula, suffix in host_transforms()
                                             if formula.inputs(suffix) <= set(RAW_COLUMNS))
"""The public set's transformed features computable at host level (not the site-neighbour ones:
the host graph has no site level)."""

STATIC_COLUMNS: tuple[str, ...] = RAW_COLUMNS + TRANSFORMED_COLUMNS
"""Column order of the static feature table (after ``snapshot`` and ``host``)."""
