"""The ``hostgraph`` stage's MapReduce path: a graph too large for one process (its edge
file above ``input.hostgraph.mapreduce_above_bytes``, or any graph on a cluster runner) read
by the job :mod:`spamflow.mr_hostgraph`, whose output this driver streams, line by line, into

- ``nodes.parquet`` (node, host, domain: the in-memory path's columns; rows in the job's
  output order, not by node: use the ``node`` column), and
- ``adjacency.txt``: one line per node, ``id<TAB>out-neighbour ids<TAB>in-neighbour ids``
  (ascending, joined by ``,``), the 0/1 graph without self-links and repeats, which the links
  plugin's MapReduce engine turns into its jobs' inputs without holding it.

The driver holds no edge and no host name beyond one Parquet batch."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from spamflow.detector import RunSettings
from spamflow.hostgraph_files import FORMATS, BadLines
from spamflow.mr import run_job
from spamflow.mr_hostgraph import BAD, BLOCK_LINES, COUNT, MRHostGraphBuild
from spamflow.storage import task_location

NODES_SCHEMA = pa.schema([("node", pa.int64()), ("host", pa.string()), ("domain", pa.string())])
BATCH_ROWS = 1 << 16


@dataclass
class BuiltGraph:
    """What the build job counted: the in-memory reader's counts and bad lines."""

    counts: dict[str, int]
    bad: BadLines


def build_with_mapreduce(vertices: str, edges: str, fmt: str, reversed_names: bool | None, outdir: Path,
                         settings: RunSettings, block_lines: int = BLOCK_LINES) -> BuiltGraph:
    """Run the build job over the two files and write ``nodes.parquet`` and ``adjacency.txt``
    into ``outdir``."""
    if fmt not in FORMATS:
        raise ValueError(f"host graph format {fmt!r}: one of {', '.join(FORMATS)}")
    flip = fmt == "cc-webgraph" if reversed_names is None else reversed_names
    with tempfile.TemporaryDirectory(prefix="build-", dir=outdir) as work:
        tasks = Path(work) / "files.txt"
        tasks.write_text(f"v\t{task_location(vertices)}\ne\t{task_location(edges)}\n", encoding="utf-8")
        out = run_job(MRHostGraphBuild, [tasks], Path(work) / "nodes.txt", runner=settings.runner,
                      runner_args=settings.runner_args,
                      args=["--format", fmt, "--reversed-names", "yes" if flip else "no", "--vertices", vertices,
                            "--edges", edges, "--block-lines", str(block_lines)])
        return split_output(out, outdir)


def split_output(job_output: Path, outdir: Path) -> BuiltGraph:
    """The job's node lines into ``outdir``'s ``adjacency.txt`` and ``nodes.parquet``, a line
    at a time; its ``!count`` and ``!bad`` lines as counts and bad lines."""
    counts: dict[str, int] = {}
    bad = BadLines()
    batch: dict[str, list[Any]] = {"node": [], "host": [], "domain": []}
    with open(job_output, encoding="utf-8") as lines, open(outdir / "adjacency.txt", "w", encoding="utf-8") as adj, \
            pq.ParquetWriter(outdir / "nodes.parquet", NODES_SCHEMA) as nodes:
        for line in lines:
            if line.startswith("!"):
                key, _, value = line.rstrip("\n").partition("\t")
                if key == COUNT:
                    counts.update(json.loads(value))
                elif key == BAD:
                    bad.merge(*json.loads(value))
                continue
            node, host, domain, rest = line.split("\t", 3)
            adj.write(f"{node}\t{rest}")
            batch["node"].append(int(node))
            batch["host"].append(host)
            batch["domain"].append(domain)
            if len(batch["node"]) >= BATCH_ROWS:
                nodes.write_table(pa.table(batch, schema=NODES_SCHEMA))
                batch = {k: [] for k in batch}
        nodes.write_table(pa.table(batch, schema=NODES_SCHEMA))
    return BuiltGraph({"nodes": 0, "vertex_lines": 0, "edge_lines": 0, "vertices_same_host": 0, "self_links": 0,
                       "repeated_edges": 0, "edges": 0, **counts}, bad)
