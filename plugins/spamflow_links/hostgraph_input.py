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
from spamflow_links.file_graph import FileGraph, adjacency_lines, domain_graph
from spamflow_links.mapreduce import MapReduceRanks
from spamflow_links.params import LinksParams
from spamflow_links.static_features import STATIC_COLUMNS, static_features, walk_features


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
    version = "2"  # 2: a neighbour variance within rounding of 0 is 0 (static_features.VARIANCE_ROUNDING)
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
        snapshot = str(graph.params.get("snapshot", "hostgraph"))
        if "adjacency" in graph.outputs and params.engine != "memory":
            return self._run_from_file(ctx, params, graph.outputs, snapshot)
        nodes = pq.read_table(graph["nodes"]).sort_by("node")
        if "adjacency" in graph.outputs:  # read by MapReduce, small enough for memory all the same
            adjacency = read_adjacency(graph["adjacency"], nodes.num_rows)
        else:
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
        counts.update(_seed_counts(len(names), int(adjacency.nnz), seeds, params.trust_seeds))
        with tempfile.TemporaryDirectory(prefix="work-", dir=ctx.outdir) as work:
            solver = None
            if use_mapreduce(params.engine, ctx.settings, size=int(adjacency.nnz), above=params.mapreduce_above_edges):
                solver = MapReduceRanks(Path(work) / "ranks", ctx.settings.runner, ctx.settings.runner_args)
            f = static_features(adjacency, alpha=params.alpha, tol=params.tol, trust_seeds=seeds,
                                exact_max_nodes=params.exact_max_nodes, hll_log2_registers=params.hll_log2_registers,
                                seed=params.seed, progress=ctx.settings.progress, rank_weights="binary",
                                solver=solver)
            counts["mapreduce_jobs"] = solver.jobs if solver is not None else 0
        with pq.ParquetWriter(ctx.outdir / "hosts.parquet", host_schema()) as out:
            out.write_table(host_rows(snapshot, names, np.arange(len(names)), f))
        return StageResult(outputs={"hosts": "hosts.parquet"}, counts=counts)

    def _run_from_file(self, ctx: StageContext, params: HostGraphLinksParams, outputs: dict[str, Path],
                       snapshot: str) -> StageResult:
        """The graph the ``hostgraph`` stage read by MapReduce, left in its file: every O(edges)
        step a job (``nodes: domain``: the domain graph too), the names streamed from
        ``nodes.parquet``, never all held."""
        counts: dict[str, int] = {}
        with tempfile.TemporaryDirectory(prefix="work-", dir=ctx.outdir) as work:
            nodes_path, adjacency = outputs["nodes"], outputs["adjacency"]
            if params.nodes == "domain":
                domains = Path(work) / "domains"
                built = domain_graph(nodes_path, adjacency, domains, ctx.settings.runner, ctx.settings.runner_args)
                counts["edges_inside_domains"] = built.counts.get("edges_inside_domains", 0)
                nodes_path, adjacency = domains / "nodes.parquet", domains / "adjacency.txt"
            nodes = pq.ParquetFile(nodes_path)
            n = nodes.metadata.num_rows
            seeds = np.zeros(n, dtype=bool)
            wanted = set(params.trust_seeds)
            for batch in nodes.iter_batches(columns=["node", "host"]):
                ids, hosts = batch.column("node").to_numpy(), batch.column("host").to_pylist()
                seeds[ids[[h in wanted for h in hosts]]] = True
            graph = FileGraph(adjacency, n, seeds, Path(work) / "stats", ctx.settings.runner, ctx.settings.runner_args)
            solver = MapReduceRanks(Path(work) / "ranks", ctx.settings.runner, ctx.settings.runner_args)
            f = walk_features(graph.degree_features(), graph, graph, graph.in_variance, solver, alpha=params.alpha,
                              tol=params.tol, trust_seeds=seeds, exact_max_nodes=params.exact_max_nodes,
                              hll_log2_registers=params.hll_log2_registers, seed=params.seed)
            counts.update(_seed_counts(n, int(np.sum(f["outdegree"])), seeds, params.trust_seeds))
            counts["mapreduce_jobs"] = solver.jobs + graph.jobs + (params.nodes == "domain")
            with pq.ParquetWriter(ctx.outdir / "hosts.parquet", host_schema()) as out:
                for batch in nodes.iter_batches(columns=["node", "host"]):
                    out.write_table(host_rows(snapshot, batch.column("host").to_pylist(),
                                              batch.column("node").to_numpy(), f))
        return StageResult(outputs={"hosts": "hosts.parquet"}, counts=counts)


def _seed_counts(nodes: int, edges: int, seeds: np.ndarray, wanted: list[str]) -> dict[str, int]:
    return {"nodes": nodes, "edges": edges, "trust_seeds": int(seeds.sum()),
            "trust_seeds_not_in_graph": len(set(wanted)) - int(seeds.sum())}


def host_schema() -> pa.Schema:
    return pa.schema([("snapshot", pa.string()), ("host", pa.string()),
                      *((column, pa.float64()) for column in STATIC_COLUMNS)])


def host_rows(snapshot: str, names: list[str], ids: np.ndarray, f: dict[str, np.ndarray]) -> pa.Table:
    """The rows of the nodes ``ids`` (named ``names``) of the feature columns ``f``."""
    data: dict[str, pa.Array] = {"snapshot": pa.array([snapshot] * len(names), pa.string()),
                                 "host": pa.array(names, pa.string())}
    for column in STATIC_COLUMNS:
        data[column] = pa.array(f[column][ids], type=pa.float64(), from_pandas=True)
    return pa.table(data, schema=host_schema())


def read_adjacency(path: Path, n: int) -> sp.csr_matrix:
    """The 0/1 matrix of an ``adjacency.txt`` (small graphs: ``engine: memory``)."""
    rows: list[int] = []
    cols: list[int] = []
    for node, out, _ in adjacency_lines(path):
        targets = [int(t) for t in out.split(",")] if out else []
        rows.extend([node] * len(targets))
        cols.extend(targets)
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
