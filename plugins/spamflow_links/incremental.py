"""Link features of new hosts against a frozen host graph (incremental scoring; Erdélyi et al.,
section 6.2: "the link structure is nontrivial to update").

A links run saves ``frozen.npz``: its latest snapshot's host graph, the links its pages made to
hosts it had not crawled (so a host crawled later still gets its in-links from the known
hosts), and the rank vectors of the known hosts. A later run with ``frozen_links:`` that file
joins its own pages' links to that graph — the union graph a full recomputation would build,
edge for edge — and computes the features of its own hosts only:

* exact on the union graph: in/out-degree, reciprocity, the neighbours' mean degrees,
  assortativity (sparse products), and supporters at distance 2-4 (breadth-first from the
  new hosts only);
* approximated: PageRank, TrustRank, CheiRank and truncated PageRank. The known hosts keep
  their frozen values (PageRank-type ones scaled by N / N' for the N' - N new nodes), and the
  new hosts' values solve the power iteration's equations with the known hosts held there —
  one step of the iteration from the known hosts' in-links, iterated only among the new hosts.
  The rank indices (and 2DRank) place the new hosts among the frozen values. The error is
  measured against a full recomputation in docs/links.md and docs/classify.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import scipy.sparse as sp

from spamflow_links.hostgraph import HostGraph
from spamflow_links.ranks import Walk, rank_index, two_d_rank
from spamflow_links.static_features import (
    STATIC_COLUMNS,
    degree_features,
    neighbour_mean_var,
    rank_matrix,
    with_ratios,
)
from spamflow_links.transforms import host_transforms

FORMAT = "spamflow-links-frozen/1"
EXACT_RAW = ("indegree", "outdegree", "reciprocity", "avgin_of_out", "avgout_of_in", "assortativity",
             "neighbors_2", "neighbors_3", "neighbors_4")
"""The raw features a new host gets exactly as a full run on the union graph would (with
exact supporters: a full run above ``exact_max_nodes`` estimates them by HyperLogLog)."""
TRUNCATED = 4
"""Truncated PageRank T = 1..4, as ``static_features``."""


def exact_columns() -> tuple[str, ...]:
    """The static columns computed from ``EXACT_RAW`` only (their ratios and transforms too)."""
    inputs = {name: formula.inputs(suffix) for name, formula, suffix in host_transforms()}
    inputs |= {"neighbors_2_over_indegree": {"neighbors_2", "indegree"},
               "neighbors_3_over_neighbors_2": {"neighbors_3", "neighbors_2"},
               "neighbors_4_over_neighbors_3": {"neighbors_4", "neighbors_3"}}
    return tuple(c for c in STATIC_COLUMNS if set(inputs.get(c, {c})) <= set(EXACT_RAW))


@dataclass
class FrozenLinks:
    """One snapshot's host graph and its hosts' rank vectors, as saved for later runs."""

    snapshot: str
    nodes: np.ndarray
    """Node names (hosts or domains), sorted: position = node id of ``adjacency``."""
    adjacency: sp.csr_matrix
    """Page links between known nodes (row = source), self-links dropped."""
    uncrawled_source: np.ndarray
    uncrawled_target: np.ndarray
    uncrawled_links: np.ndarray
    """Links of known nodes to hosts not crawled then: source id, target name, count."""
    pagerank: np.ndarray
    cheirank: np.ndarray
    trustrank: np.ndarray
    """NaN everywhere when the run had no trust seeds."""
    walk: np.ndarray
    """x_1 .. x_{T-1} of the truncated PageRank series (x_0 = 1/N), one row each."""
    seeds: np.ndarray
    alpha: float
    rank_weights: str

    def save(self, path: Path) -> None:
        a = self.adjacency
        with open(path, "wb") as fh:
            np.savez_compressed(fh, format=np.array(FORMAT), snapshot=np.array(self.snapshot),
                                nodes=np.array(self.nodes.tolist(), dtype=str), indptr=a.indptr, indices=a.indices,
                                data=a.data, uncrawled_source=self.uncrawled_source,
                                uncrawled_target=np.array(self.uncrawled_target.tolist(), dtype=str),
                                uncrawled_links=self.uncrawled_links, pagerank=self.pagerank,
                                cheirank=self.cheirank, trustrank=self.trustrank, walk=self.walk, seeds=self.seeds,
                                alpha=np.array(self.alpha), rank_weights=np.array(self.rank_weights))

    @classmethod
    def load(cls, path: str | Path) -> FrozenLinks:
        where = f"detectors.links.frozen_links: {path}"
        try:
            with np.load(path, allow_pickle=False) as z:
                data = {k: z[k] for k in z.files}
        except (OSError, ValueError) as exc:
            raise ValueError(f"{where}: cannot read it ({exc})") from None
        if str(data.get("format", "")) != FORMAT:
            raise ValueError(f"{where} is not a {FORMAT} file (use the frozen output of an earlier links stage)")
        try:
            n = len(data["nodes"])
            adjacency = sp.csr_matrix((data["data"], data["indices"], data["indptr"]), shape=(n, n))
            return cls(str(data["snapshot"]), data["nodes"].astype(object), adjacency, data["uncrawled_source"],
                       data["uncrawled_target"].astype(object), data["uncrawled_links"], data["pagerank"],
                       data["cheirank"], data["trustrank"], data["walk"], data["seeds"], float(data["alpha"]),
                       str(data["rank_weights"]))
        except (KeyError, ValueError) as exc:
            raise ValueError(f"{where}: incomplete or inconsistent ({exc})") from None


def freeze(graph: HostGraph, nodes: np.ndarray, features: dict[str, np.ndarray], seeds: np.ndarray, alpha: float,
           rank_weights: str) -> FrozenLinks:
    """What a later run needs of ``graph`` (whose static ``features`` are computed)."""
    unc = graph.uncrawled if graph.uncrawled is not None else pa.table(
        {"source": pa.array([], pa.int64()), "target": pa.array([], pa.string()), "links": pa.array([], pa.int64())})
    weights = rank_matrix(graph.adjacency, rank_weights)  # type: ignore[arg-type]
    walk = Walk.of(weights)
    n = walk.n
    x = np.full(n, 1.0 / max(n, 1))
    series = []
    scratch = np.empty(n)
    for _ in range(1, TRUNCATED):
        mass = walk.dangling_mass(x)
        x = walk.step(x, scratch) + mass / n
        series.append(x)
    return FrozenLinks(graph.snapshot, nodes, sp.csr_matrix(graph.adjacency), np.asarray(unc["source"], np.int64),
                       np.array(unc["target"].to_pylist(), dtype=object), np.asarray(unc["links"], np.int64),
                       features["pagerank"], features["cheirank"], features["trustrank"],
                       np.array(series).reshape(TRUNCATED - 1, n), np.asarray(seeds, dtype=bool), alpha, rank_weights)


def union_graph(frozen: FrozenLinks, graph: HostGraph, index: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    """(page-link counts of the union graph on ``index``, the known nodes' ids in it): the
    frozen graph, the known nodes' links to hosts this run crawled, and this run's links
    (rows of nodes crawled again replace their frozen ones)."""
    position = {name: i for i, name in enumerate(index.tolist())}
    known = np.array([position[name] for name in frozen.nodes.tolist()], dtype=np.int64)
    n = len(index)
    a = frozen.adjacency.tocoo()
    src, dst, w = known[a.row], known[a.col], a.data
    target = np.array([position.get(t, -1) for t in frozen.uncrawled_target.tolist()], dtype=np.int64)
    hit = target >= 0
    src = np.concatenate([src, known[frozen.uncrawled_source[hit]]])
    dst = np.concatenate([dst, target[hit]])
    w = np.concatenate([w, frozen.uncrawled_links[hit].astype(np.float64)])
    keep = ~graph.crawled[src] & (src != dst)
    old = sp.csr_matrix((w[keep], (src[keep], dst[keep])), shape=(n, n))
    union = sp.csr_matrix(old + graph.adjacency)
    union.sum_duplicates()
    return union, known


def local_rank(walk: Walk, start: np.ndarray, new: np.ndarray, alpha: float, teleport: np.ndarray,
               tol: float, max_iter: int = 1000) -> np.ndarray:
    """The walk's rank vector with every node outside ``new`` held at ``start``: the new nodes'
    entries solve p = alpha (S p + dangling mass * v) + (1 - alpha) v, iterated among the new
    nodes only (the known nodes' part of S p is one sparse product, made once)."""
    p = start.copy()
    idx = np.flatnonzero(new)
    if len(idx) == 0:
        return p
    held = np.where(new, 0.0, p)
    from_known = np.asarray(walk.matrix @ (held * walk.inv_out))[idx]
    dangling = np.zeros(walk.n, dtype=bool)
    dangling[walk.dangling] = True
    mass_known = float(held[dangling].sum())
    among = sp.csr_matrix(walk.matrix)[idx][:, idx]
    inv, dang, v = walk.inv_out[idx], dangling[idx], teleport[idx]
    q = p[idx]
    for _ in range(max_iter):
        jump = alpha * (mass_known + float(q[dang].sum())) + (1.0 - alpha)
        nxt = alpha * (from_known + among @ (q * inv)) + jump * v
        err = float(np.abs(nxt - q).sum())
        q = nxt
        if err < tol:
            break
    p[idx] = q
    return p


def truncated_local(walk: Walk, frozen_series: np.ndarray, known: np.ndarray, new: np.ndarray, pr: np.ndarray,
                    alpha: float) -> dict[int, np.ndarray]:
    """Truncated PageRank (``ranks.truncated_pagerank``) with the known nodes' walk x_1..x_3
    held at their frozen values (scaled by N / N'), the new nodes' x_t one walk step from x_{t-1}."""
    n = walk.n
    scale = len(known) / n
    x = np.full(n, 1.0 / n)
    head = np.zeros(n)
    out: dict[int, np.ndarray] = {}
    scratch = np.empty(n)
    for t in range(TRUNCATED + 1):
        head += (1.0 - alpha) * alpha ** t * x
        if t >= 1:
            out[t] = np.clip(pr - head, 0.0, None)
        if t == TRUNCATED:
            break
        stepped = walk.step(x, scratch) + walk.dangling_mass(x) / n
        if t + 1 < TRUNCATED:  # x_{t+1}: frozen for the known nodes, one step for the new ones
            held = np.zeros(n)
            held[known] = frozen_series[t] * scale
            stepped = np.where(new, stepped, held)
        x = stepped
    return out


def new_host_features(frozen: FrozenLinks, union: sp.csr_matrix, known: np.ndarray, new: np.ndarray,
                      seeds: np.ndarray, tol: float) -> dict[str, np.ndarray]:
    """Every static feature column over the nodes of the union graph, meant for the ``new``
    rows (this run's crawled nodes). Degrees and ranks are there for every node; supporters,
    ratios and transforms for the new rows only (NaN elsewhere). Ranks are solved for the new
    rows and for nodes of the run not crawled in this snapshot; the other known nodes hold
    their frozen values."""
    is_known = np.zeros(union.shape[0], dtype=bool)
    is_known[known] = True
    solve = new | ~is_known
    n = union.shape[0]
    alpha = frozen.alpha
    weights = rank_matrix(union, frozen.rank_weights)  # type: ignore[arg-type]
    b = rank_matrix(union, "binary")
    bt = sp.csr_matrix(b.T)
    f = degree_features(b, bt)
    scale = len(known) / max(n, 1)

    def held(values: np.ndarray, factor: float) -> np.ndarray:
        start = np.zeros(n)
        start[known] = values * factor
        return start

    forward, backward = Walk.of(weights), Walk.of(weights, reverse=True)
    uniform = np.full(n, 1.0 / max(n, 1))
    pr = local_rank(forward, held(frozen.pagerank, scale), solve, alpha, uniform, tol)
    f["pagerank"] = pr
    _, var = neighbour_mean_var(bt, pr)
    f["prsigma"] = np.sqrt(var)
    if seeds.any():
        v = seeds / seeds.sum()
        f["trustrank"] = local_rank(forward, held(np.nan_to_num(frozen.trustrank), 1.0), solve, alpha, v, tol)
    else:
        f["trustrank"] = np.full(n, np.nan)
    for t, values in truncated_local(forward, frozen.walk, known, solve, pr, alpha).items():
        f[f"truncatedpagerank_{t}"] = values
    for k, values in supporters_of(b, new, 4).items():
        f[f"neighbors_{k}"] = values
    chei = local_rank(backward, held(frozen.cheirank, scale), solve, alpha, uniform, tol)
    f["cheirank"] = chei
    k_pr, k_chei = rank_index(pr), rank_index(chei)
    f["pagerank_index"], f["cheirank_index"] = k_pr.astype(np.float64), k_chei.astype(np.float64)
    f["twodrank_index"] = two_d_rank(k_pr, k_chei).astype(np.float64)
    rows = np.flatnonzero(new)  # ratios and transforms value by value, of the new hosts only
    raw = set(f)
    for name, values in with_ratios({k: v[rows] for k, v in f.items()}).items():
        if name not in raw:
            f[name] = np.full(n, np.nan)
            f[name][rows] = values
    return f


def supporters_of(b: sp.csr_matrix, rows: np.ndarray, max_k: int) -> dict[int, np.ndarray]:
    """``neighbourhood.supporters_exact`` for the ``rows`` nodes only (other entries NaN):
    breadth-first along in-links from those nodes, one sparse product per distance."""
    idx = np.flatnonzero(rows)
    n = b.shape[0]
    at = sp.csr_matrix(b.T, dtype=bool)
    reach = sp.csr_matrix((np.ones(len(idx), dtype=bool), (np.arange(len(idx)), idx)), shape=(len(idx), n))
    previous = np.ones(len(idx), dtype=np.int64)
    out: dict[int, np.ndarray] = {}
    for k in range(1, max_k + 1):
        reach = sp.csr_matrix(reach + reach @ at, dtype=bool)
        size = np.diff(reach.indptr).astype(np.int64)
        values = np.full(n, np.nan)
        values[idx] = size - previous
        out[k] = values
        previous = size
    return out
