"""The ``links`` stage: host graphs per snapshot, static link features per snapshot, temporal
link features per pair of consecutive snapshots, all written as Parquet."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import scipy.sparse as sp

from spamflow.detector import Detector, StageContext, StageResult
from spamflow.domains import registered_domain
from spamflow.mr import use_mapreduce
from spamflow.per_host import PerHostTable
from spamflow.progress import progress_bar
from spamflow_links.hostgraph import HostGraph, build_host_graph, node_index
from spamflow_links.incremental import FrozenLinks, freeze, new_host_features, union_graph
from spamflow_links.mapreduce import MapReduceRanks, host_graphs_mapreduce
from spamflow_links.params import LinksParams
from spamflow_links.ranks import kappa, rank_density
from spamflow_links.static_features import STATIC_COLUMNS, static_features
from spamflow_links.temporal_features import temporal_features

PAGE_COLUMNS = ["snapshot", "host", "domain", "words", "links"]


def feature_table(keys: dict[str, pa.Array], features: dict[str, np.ndarray], rows: np.ndarray,
                  columns: list[str] | tuple[str, ...]) -> pa.Table:
    """Key columns plus float64 feature columns for the selected rows; NaN becomes null."""
    data: dict[str, pa.Array] = dict(keys)
    for name in columns:
        data[name] = pa.array(features[name][rows], type=pa.float64(), from_pandas=True)
    return pa.table(data)


def load_graphs(pages: ds.Dataset, params: LinksParams, progress: bool | None,
                known: np.ndarray | None = None) -> tuple[np.ndarray, list[HostGraph]]:
    """The node index over all snapshots (and the ``known`` nodes of a frozen graph, so links
    to them are kept) and one host graph per snapshot, in snapshot order."""
    keys = pages.to_table(columns=["snapshot", params.nodes])
    snapshots = sorted(s for s in pc.unique(keys["snapshot"]).to_pylist() if s is not None)
    extra = [] if known is None else [pa.array(known.tolist(), pa.string())]
    index = node_index([keys[params.nodes], *extra])
    graphs = []
    for snapshot in progress_bar(snapshots, desc="host graphs", unit="snapshot", setting=progress):
        batches = pages.to_batches(columns=PAGE_COLUMNS, filter=pc.field("snapshot") == snapshot, batch_size=4096)
        graphs.append(build_host_graph(snapshot, batches, index, nodes=params.nodes, nofollow=params.nofollow,
                                       to_domain=registered_domain))
    return index, graphs


def graphs_by_engine(pages: ds.Dataset, params: LinksParams, ctx: StageContext, workdir: Path,
                     frozen: FrozenLinks | None = None) -> tuple[np.ndarray, list[HostGraph]]:
    """``load_graphs``, or the same graphs from the edges job when MapReduce is asked for or
    the runner is a cluster one (host nodes only: the job cannot map hosts to registered
    domains without spamflow, so ``nodes: domain`` builds its graphs here)."""
    if frozen is not None:  # joined to a frozen graph: built here, with its nodes in the index
        return load_graphs(pages, params, ctx.settings.progress, frozen.nodes)
    if params.nodes == "host" and use_mapreduce(params.engine, ctx.settings):
        return host_graphs_mapreduce([Path(f) for f in pages.files], workdir / "edges", nofollow=params.nofollow,
                                     runner=ctx.settings.runner, runner_args=ctx.settings.runner_args)
    return load_graphs(pages, params, ctx.settings.progress)


class LinksDetector(Detector):
    name = "links"
    version = "6"  # 6: a neighbour variance within rounding of 0 is 0 (prsigma and the temporal
    # variances agree across engines on ties: static_features.VARIANCE_ROUNDING);
    # 5: adds HitsAuth, HitsHub and ChangePPR to the temporal table, writes frozen.npz;
    # 4: rank indices take values a rounding error apart as ties (by node id, as documented);
    # 3: adds the public set's transformed features (L_*, log_OP_*); 2: the ranks walk the 0/1 host graph, as
    # documented (1 walked page-link counts)
    description = ("Host link graph per snapshot; PageRank, CheiRank, 2DRank, TrustRank, truncated PageRank and the "
                   "Web Spam Challenge link features; IDR/IGR/ODR/OGR, CRCC, XJaccard, PSimRank, change(u) "
                   "and personalized HITS and PageRank between consecutive snapshots.")
    Params = LinksParams
    host_tables = (PerHostTable("hosts"),  # its columns depend on the parameters: every numeric one is a feature
                   PerHostTable("temporal", snapshot_column="snapshot_t1", optional=True))
    requires = ("parse",)
    uses_mapreduce = True  # engine: mapreduce, or auto on a cluster runner or over mapreduce_above_edges
    frozen_statistics = {"frozen": "frozen_links"}  # a model scores new hosts against this graph and its ranks

    def run(self, ctx: StageContext) -> StageResult:
        with tempfile.TemporaryDirectory(prefix="work-", dir=ctx.outdir) as work:  # the jobs' files, not kept
            return self._run(ctx, Path(work))

    def _run(self, ctx: StageContext, workdir: Path) -> StageResult:
        params = ctx.params
        assert isinstance(params, LinksParams)
        progress = ctx.settings.progress
        pages = ds.dataset(ctx.inputs["parse"]["pages"], format="parquet")
        frozen = FrozenLinks.load(params.frozen_links) if params.frozen_links else None
        index, graphs = graphs_by_engine(pages, params, ctx, workdir, frozen)
        graph_dir = ctx.outdir / "graphs"
        graph_dir.mkdir()
        pq.write_table(pa.table({"node": pa.array(np.arange(len(index)), pa.int64()),
                                 "host": pa.array(index.tolist(), pa.string())}), graph_dir / "nodes.parquet")
        position = {name: i for i, name in enumerate(index.tolist())}
        seeds = np.zeros(len(index), dtype=bool)
        missing_seeds = 0
        for host in params.trust_seeds:
            if host in position:
                seeds[position[host]] = True
            else:
                missing_seeds += 1
        if frozen is not None:  # the model's seeds, which its TrustRank features were trained with
            seeds[[position[name] for name in frozen.nodes[frozen.seeds].tolist()]] = True
        counts: dict[str, int] = {"snapshots": len(graphs), "nodes": len(index), "trust_seeds": int(seeds.sum()),
                                  "trust_seeds_not_in_graph": missing_seeds}
        latest: tuple[HostGraph, dict[str, np.ndarray]] | None = None
        summary: dict[str, dict] = {"snapshots": {}, "pairs": {}}
        static_tables = []
        densities: dict[str, np.ndarray] = {}
        for g in graphs:
            sp.save_npz(graph_dir / f"{g.snapshot.replace('/', '_')}.npz", g.adjacency)
            for key, value in g.counts.items():
                counts[key] = counts.get(key, 0) + value
            solver = None
            if use_mapreduce(params.engine, ctx.settings, size=g.adjacency.nnz, above=params.mapreduce_above_edges):
                solver = MapReduceRanks(workdir / "ranks" / g.snapshot.replace("/", "_"), ctx.settings.runner,
                                        ctx.settings.runner_args)
            if frozen is not None:
                union, known = union_graph(frozen, g, index)
                f = new_host_features(frozen, union, known, g.crawled, seeds, params.tol)
                counts["union_edges"] = counts.get("union_edges", 0) + int(union.nnz)
            else:
                f = static_features(g.adjacency, alpha=params.alpha, tol=params.tol, trust_seeds=seeds,
                                    exact_max_nodes=params.exact_max_nodes,
                                    hll_log2_registers=params.hll_log2_registers, seed=params.seed,
                                    progress=progress, rank_weights=params.rank_weights, solver=solver)
                latest = (g, f)
            if solver is not None:
                counts["mapreduce_jobs"] = counts.get("mapreduce_jobs", 0) + solver.jobs
            rows = np.flatnonzero(g.crawled)
            static_tables.append(feature_table(
                {"snapshot": pa.array([g.snapshot] * len(rows), pa.string()),
                 "host": pa.array(index[rows].tolist(), pa.string())}, f, rows, STATIC_COLUMNS))
            summary["snapshots"][g.snapshot] = {**g.counts, "kappa": kappa(f["pagerank"], f["cheirank"])}
            densities[f"{g.snapshot}/density"], densities[f"{g.snapshot}/edges"] = rank_density(
                f["pagerank_index"], f["cheirank_index"])
        with open(ctx.outdir / "rank_density.npz", "wb") as fh:
            np.savez_compressed(fh, **densities)  # type: ignore[arg-type]  # numpy stubs type **kwds as bool
        hosts = pa.concat_tables(static_tables) if static_tables else feature_table(
            {"snapshot": pa.array([], pa.string()), "host": pa.array([], pa.string())},
            {c: np.zeros(0) for c in STATIC_COLUMNS}, np.zeros(0, dtype=np.int64), STATIC_COLUMNS)
        pq.write_table(hosts, ctx.outdir / "hosts.parquet")
        temporal_tables = []
        for g0, g1 in zip(graphs, graphs[1:]):
            f = temporal_features(g0.adjacency, g1.adjacency, g0.crawled, g1.crawled, g0.words, g1.words,
                                  xjaccard_c=params.xjaccard_c, psimrank_c=params.psimrank_c,
                                  fingerprints=params.fingerprints, exact_max_nodes=params.exact_max_nodes,
                                  seed=params.seed, hits_c=params.hits_c, change_T=params.change_T, ppr_c=params.ppr_c,
                                  tol=params.tol, rank_weights=params.rank_weights, progress=progress)
            rows = np.flatnonzero(g0.crawled | g1.crawled)
            temporal_tables.append(feature_table(
                {"snapshot_t0": pa.array([g0.snapshot] * len(rows), pa.string()),
                 "snapshot_t1": pa.array([g1.snapshot] * len(rows), pa.string()),
                 "host": pa.array(index[rows].tolist(), pa.string())}, f, rows, list(f)))
            both = g0.crawled & g1.crawled
            summary["pairs"][f"{g0.snapshot}..{g1.snapshot}"] = {
                "hosts_in_both": int(both.sum()), "hosts_in_one": int((g0.crawled ^ g1.crawled).sum())}
        counts["snapshot_pairs"] = len(temporal_tables)
        counts["hosts_static_rows"] = hosts.num_rows
        outputs = {"graphs": "graphs", "hosts": "hosts.parquet", "summary": "summary.json",
                   "rank_density": "rank_density.npz"}
        if latest is not None:  # what a model trained on this run scores new hosts against
            frozen_out = freeze(latest[0], index, latest[1], seeds, params.alpha, params.rank_weights)
            frozen_out.save(ctx.outdir / "frozen.npz")
            outputs["frozen"] = "frozen.npz"
        if temporal_tables:
            temporal = pa.concat_tables(temporal_tables)
            pq.write_table(temporal, ctx.outdir / "temporal.parquet")
            counts["hosts_temporal_rows"] = temporal.num_rows
            outputs["temporal"] = "temporal.parquet"
        Path(ctx.outdir / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
        return StageResult(outputs=outputs, counts=counts)


LinkFeatures = LinksDetector
"""The old name (detector classes are named ``<Stage>Detector``); kept for existing imports."""
