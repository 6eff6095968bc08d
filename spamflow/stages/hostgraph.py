"""Stage ``hostgraph``: a published host graph (``input.hostgraph``: Common Crawl's
cc-webgraph host-level release, or a plain edge list with a vertex file) read into the same
node table and sparse matrix the links stage builds from pages, for the rank and
neighbourhood features without any WARC (the links plugin's ``links_hostgraph`` detector).

Outputs: ``nodes.parquet`` (node, host, domain: the host's registered domain, as the links
stage groups hosts), ``edges.npz`` (the 0/1 adjacency, self-links and repeated edges dropped
and counted) and ``bad_lines.jsonl`` (examples of the counted bad lines, with file and line).
A graph read by the MapReduce job (``engine``: :mod:`spamflow.hostgraph_build`) has
``adjacency.txt`` (node lines) instead of ``edges.npz``, since no process may hold it."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import scipy.sparse as sp

from spamflow.detector import DetectorParams, Stage, StageContext, StageResult
from spamflow.domains import registered_domain
from spamflow.errors import BadInputError
from spamflow.hostgraph_build import build_with_mapreduce
from spamflow.hostgraph_files import BadLines, read_text_graph
from spamflow.mr import Engine, use_mapreduce


class HostGraphFile(DetectorParams):
    path: str
    """A local path or an ``s3://`` / ``http(s)://`` URL."""
    bytes: int | None = None
    mtime_ns: int = 0
    etag: str | None = None
    last_modified: str | None = None


class HostGraphParams(DetectorParams):
    vertices: HostGraphFile
    edges: HostGraphFile
    format: str = "cc-webgraph"
    reversed_names: bool | None = None
    snapshot: str = "hostgraph"
    engine: Engine = "auto"
    mapreduce_above_bytes: int = 2**30
    execution_keys: ClassVar[frozenset[str]] = frozenset({"engine", "mapreduce_above_bytes"})


def file_identity(location: str, where: str = "<config>", key: str = "vertices") -> dict[str, Any]:
    """What makes a changed graph file a new stage: size and mtime of a local file, the
    server's ETag / Last-Modified of a remote one."""
    from spamflow.errors import ConfigError
    from spamflow.storage import Location

    try:
        identity = Location.of(location).input_identity()
    except OSError as exc:
        raise ConfigError(f"{where}: input.hostgraph.{key}: cannot read {location}: {exc}") from None
    if "error" in identity:  # a server that cannot describe it
        raise ConfigError(f"{where}: input.hostgraph.{key}: cannot read {location}: {identity['error']}")
    return identity


def adjacency(n: int, sources: np.ndarray, targets: np.ndarray) -> tuple[sp.csr_matrix, dict[str, int]]:
    """The 0/1 CSR matrix of the edges without self-links and repeats, and how many of each."""
    loops = sources == targets
    a = sp.csr_matrix((np.ones(int((~loops).sum())), (sources[~loops], targets[~loops])), shape=(n, n))
    a.sum_duplicates()
    repeats = int((~loops).sum()) - int(a.nnz)
    a.data[:] = 1.0
    return a, {"self_links": int(loops.sum()), "repeated_edges": repeats, "edges": int(a.nnz)}


class HostGraphStage(Stage):
    name = "hostgraph"
    version = "2"  # 2: bad_records_total counts every bad line; a duplicate vertex's example text is id and host
    description = "Read a published host graph (cc-webgraph or a plain edge list) into a node table and a 0/1 matrix."
    Params = HostGraphParams
    requires = ()

    def run(self, ctx: StageContext) -> StageResult:
        params = ctx.params
        assert isinstance(params, HostGraphParams)
        if use_mapreduce(params.engine, ctx.settings, size=params.edges.bytes or 0,
                         above=params.mapreduce_above_bytes):
            built = build_with_mapreduce(params.vertices.path, params.edges.path, params.format,
                                         params.reversed_names, ctx.outdir, ctx.settings)
            counts, bad = built.counts, built.bad
            outputs = {"nodes": "nodes.parquet", "adjacency": "adjacency.txt"}
        else:
            graph = read_text_graph(params.vertices.path, params.edges.path, params.format, params.reversed_names)
            matrix, edge_counts = adjacency(len(graph.hosts), graph.sources, graph.targets)
            pq.write_table(pa.table({"node": pa.array(np.arange(len(graph.hosts)), pa.int64()),
                                     "host": pa.array(graph.hosts, pa.string()),
                                     "domain": pa.array([registered_domain(h) for h in graph.hosts], pa.string())}),
                           ctx.outdir / "nodes.parquet")
            sp.save_npz(ctx.outdir / "edges.npz", matrix)
            counts, bad = {"nodes": len(graph.hosts), **graph.counts, **edge_counts}, graph.bad
            outputs = {"nodes": "nodes.parquet", "edges": "edges.npz"}
        self._check(bad, ctx)
        with open(ctx.outdir / "bad_lines.jsonl", "w", encoding="utf-8") as out:
            for example in bad.examples:
                out.write(json.dumps(example) + "\n")
        counts.update({f"bad_{k}": v for k, v in sorted(bad.counts.items())})
        return StageResult(outputs={**outputs, "bad_lines": "bad_lines.jsonl"}, counts=counts,
                           details={"snapshot": params.snapshot},
                           bad_records=[{**e, "record": f"{e['file']}:{e['line']}"} for e in bad.examples],
                           bad_records_total=sum(bad.counts.values()))

    @staticmethod
    def _check(bad: BadLines, ctx: StageContext) -> None:
        """``strict``: the first bad line fails the stage."""
        if ctx.settings.strict and bad.examples:
            first = bad.examples[0]
            raise BadInputError(f"{first['file']}: line {first['line']}: {first['reason']}")
