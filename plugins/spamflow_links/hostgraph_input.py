"""Detector ``links_hostgraph``: the links detector's static features (degrees, PageRank,
TrustRank, truncated PageRank, CheiRank, 2DRank, supporters at distance 2-4 and the Web Spam
Challenge's transformed link features) of every node of a published host graph, read by the
core ``hostgraph`` stage instead of built from pages.  The same functions as the links stage
(:func:`spamflow_links.static_features.static_features`), walked by MapReduce jobs when the
graph has more than ``mapreduce_above_edges`` edges or the runner is a cluster one."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.sparse as sp
from pydantic import Field

from spamflow.detector import Detector, DetectorParams, StageContext, StageResult
from spamflow.mr import Engine, use_mapreduce
from spamflow.per_host import PerHostTable
from spamflow_links.mapreduce import MapReduceRanks
from spamflow_links.params import LinksParams
from spamflow_links.static_features import STATIC_COLUMNS, static_features


def _same(name: str) -> object:
    """A field of the links detector's parameters, with its default and description."""
    return LinksParams.model_fields[name]


class HostGraphLinksParams(DetectorParams):
    nodes: Literal["host", "domain"] = Field("host", description=(
        "graph nodes: the graph's hosts, or their registered domains (edges inside a domain are dropped)"))
    alpha: float = _same("alpha")  # type: ignore[assignment]
    tol: float = _same("tol")  # type: ignore[assignment]
    trust_seeds: list[str] = _same("trust_seeds")  # type: ignore[assignment]
    exact_max_nodes: int = _same("exact_max_nodes")  # type: ignore[assignment]
    hll_log2_registers: int = _same("hll_log2_registers")  # type: ignore[assignment]
    seed: int = _same("seed")  # type: ignore[assignment]
    engine: Engine = Field("auto", description=(
        "memory: ranks and supporters in this process; mapreduce: each power-iteration and supporter step one "
        "mrjob job; auto: mapreduce on a cluster runner or above mapreduce_above_edges edges"))
    mapreduce_above_edges: int = _same("mapreduce_above_edges")  # type: ignore[assignment]
    execution_keys: ClassVar[frozenset[str]] = frozenset({"engine", "mapreduce_above_edges"})


def by_domain(adjacency: sp.csr_matrix, domains: list[str]) -> tuple[sp.csr_matrix, list[str], int]:
    """The graph of registered domains: a domain links to another when one of its hosts links to
    one of the other's; links inside a domain are dropped (as the links stage's ``nodes: domain``).
    Returns the 0/1 matrix, the domain names (sorted) and the number of edges dropped as inside."""
    names = sorted(set(domains))
    position = {d: i for i, d in enumerate(names)}
    of = np.fromiter((position[d] for d in domains), dtype=np.int64, count=len(domains))
    coo = adjacency.tocoo()
    src, dst = of[coo.row], of[coo.col]
    inside = src == dst
    m = sp.csr_matrix((np.ones(int((~inside).sum())), (src[~inside], dst[~inside])), shape=(len(names), len(names)))
    m.sum_duplicates()
    m.data[:] = 1.0
    return m, names, int(inside.sum())


class LinksHostgraphDetector(Detector):
    name = "links_hostgraph"
    version = "1"
    description = ("The links detector's static features (ranks, degrees, supporters, the Web Spam Challenge's "
                   "transformed link features) of every node of a published host graph (input.hostgraph).")
    Params = HostGraphLinksParams
    requires = ("hostgraph",)
    uses_mapreduce = True
    host_tables = (PerHostTable("hosts"),)  # the links stage's static columns, all numeric features

    def run(self, ctx: StageContext) -> StageResult:
        params = ctx.params
        assert isinstance(params, HostGraphLinksParams)
        graph = ctx.inputs["hostgraph"]
        nodes = pq.read_table(graph["nodes"])
        adjacency = sp.load_npz(graph["edges"]).tocsr()
        names = nodes.column("host").to_pylist()
        counts: dict[str, int] = {}
        if params.nodes == "domain":
            adjacency, names, counts["edges_inside_domains"] = by_domain(adjacency, nodes.column("domain").to_pylist())
        position = {name: i for i, name in enumerate(names)}
        seeds = np.zeros(len(names), dtype=bool)
        for host in params.trust_seeds:
            if host in position:
                seeds[position[host]] = True
        counts.update({"nodes": len(names), "edges": int(adjacency.nnz), "trust_seeds": int(seeds.sum()),
                       "trust_seeds_not_in_graph": len(set(params.trust_seeds)) - int(seeds.sum())})
        with tempfile.TemporaryDirectory(prefix="work-", dir=ctx.outdir) as work:
            solver = None
            if use_mapreduce(params.engine, ctx.settings, size=int(adjacency.nnz), above=params.mapreduce_above_edges):
                solver = MapReduceRanks(Path(work) / "ranks", ctx.settings.runner, ctx.settings.runner_args)
            f = static_features(adjacency, alpha=params.alpha, tol=params.tol, trust_seeds=seeds,
                                exact_max_nodes=params.exact_max_nodes, hll_log2_registers=params.hll_log2_registers,
                                seed=params.seed, progress=ctx.settings.progress, rank_weights="binary",
                                solver=solver)
            counts["mapreduce_jobs"] = solver.jobs if solver is not None else 0
        snapshot = str(graph.params.get("snapshot", "hostgraph"))
        data: dict[str, pa.Array] = {"snapshot": pa.array([snapshot] * len(names), pa.string()),
                                     "host": pa.array(names, pa.string())}
        for column in STATIC_COLUMNS:
            data[column] = pa.array(f[column], type=pa.float64(), from_pandas=True)
        pq.write_table(pa.table(data), ctx.outdir / "hosts.parquet")
        return StageResult(outputs={"hosts": "hosts.parquet"}, counts=counts)
