"""A host graph kept out of memory, for release-size graphs: the ``hostgraph`` stage's
``adjacency.txt`` (``id<TAB>out ids<TAB>in ids``, one line per node, read by its MapReduce
job).  The driver keeps O(nodes) vectors only; every O(edges) step is a job: the
neighbour sums (:mod:`spamflow_links.mr_node_stats`), the rank walks and the supporter balls
(:class:`spamflow_links.mapreduce.MapReduceRanks`, whose inputs are written from this file a
line at a time)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from spamflow.errors import SpamflowError
from spamflow.hostgraph_build import BuiltGraph, split_output
from spamflow.mr import run_job
from spamflow.mr.driver import package_zip
from spamflow_links.mr_domain_graph import MRDomainGraph
from spamflow_links.mr_node_stats import COLUMNS, MRNodeStats
from spamflow_links.static_features import degree_columns, mean_var_of_sums


def adjacency_lines(path: Path) -> Iterator[tuple[int, str, str]]:
    """(node id, out ids, in ids: each joined by ``,``) of every line."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            node, out, into = line.rstrip("\n").split("\t")
            yield int(node), out, into


def with_weights(ids: str) -> str:
    """``3,7`` as the rank walk's ``3:1.0,7:1.0`` (the 0/1 graph's weights)."""
    return ids.replace(",", ":1.0,") + ":1.0" if ids else ""


@dataclass
class FileWalk:
    """What a rank walk's input needs of the graph, along its links or against them."""

    graph: FileGraph
    reverse: bool

    @property
    def n(self) -> int:
        return self.graph.n

    @property
    def out_weight(self) -> np.ndarray:
        return self.graph.stats["indegree" if self.reverse else "outdegree"]

    def rows(self) -> Iterator[tuple[int, str]]:
        for node, out, into in adjacency_lines(self.graph.path):
            yield node, with_weights(into if self.reverse else out)

    def u(self, teleport: np.ndarray) -> np.ndarray:
        """S v, from the neighbour sums: v uniform (either way), or TrustRank's seeds."""
        support = teleport > 0
        level = float(teleport[support][0]) if support.any() else 0.0
        if not np.all(teleport[support] == level):
            raise ValueError("a walk of a graph kept in a file teleports uniformly, or to its trust seeds equally")
        if support.all():
            return self.graph.stats["inverse_indegree_out" if self.reverse else "inverse_outdegree_in"] * level
        if self.reverse or not np.array_equal(support, self.graph.seeds):
            raise ValueError("a walk of a graph kept in a file teleports to all nodes or to its trust seeds")
        return self.graph.stats["value_over_outdegree_in"] * level


class FileGraph:
    """The graph of ``adjacency.txt``, ``n`` nodes, with its neighbour sums (one job)."""

    def __init__(self, path: Path, n: int, seeds: np.ndarray, workdir: Path, runner: str = "inline",
                 runner_args: Sequence[str] = ()) -> None:
        self.path, self.n, self.seeds = path, n, np.asarray(seeds, dtype=bool)
        self.workdir, self.runner, self.runner_args = workdir, runner, tuple(runner_args)
        self.jobs = 0
        workdir.mkdir(parents=True, exist_ok=True)
        self.stats = self.neighbour_sums(self.seeds.astype(np.float64))

    def walk(self, reverse: bool) -> FileWalk:
        return FileWalk(self, reverse)

    def targets(self) -> Iterator[tuple[int, str]]:
        """(node, out ids joined by ``,``): the supporter balls' input."""
        for node, out, _ in adjacency_lines(self.path):
            yield node, out

    def neighbour_sums(self, values: np.ndarray) -> dict[str, np.ndarray]:
        """The :data:`~spamflow_links.mr_node_stats.COLUMNS` of every node, ``values`` its values."""
        source, out = self.workdir / "stats-input.txt", self.workdir / "stats.txt"
        with open(source, "w", encoding="utf-8") as fh:
            for node, nodes_out, nodes_in in adjacency_lines(self.path):
                fh.write(f"{node}\t{float(values[node])!r}\t{nodes_out}\t{nodes_in}\n")
        self.jobs += 1
        run_job(MRNodeStats, [source], out, runner=self.runner, runner_args=self.runner_args)
        source.unlink()
        columns = {name: np.zeros(self.n) for name in COLUMNS}
        with open(out, encoding="utf-8") as fh:
            for line in fh:
                fields = line.rstrip("\n").split("\t")
                for name, value in zip(COLUMNS, fields[1:]):
                    columns[name][int(fields[0])] = float(value)
        out.unlink()
        return columns

    def degree_features(self) -> dict[str, np.ndarray]:
        s = self.stats
        return degree_columns(s["indegree"], s["outdegree"], s["mutual"], s["in_of_out"], s["out_of_in"],
                              s["neighbour_degrees"])

    def in_variance(self, values: np.ndarray) -> np.ndarray:
        """The (population) variance of ``values`` over each node's in-neighbours, as
        ``static_features.neighbour_mean_var``; NaN for a node without any."""
        s = self.neighbour_sums(values)
        return mean_var_of_sums(s["value_sum_in"], s["value_squares_in"], s["values_in"])[1]


def domain_graph(nodes: Path, adjacency: Path, outdir: Path, runner: str = "inline",
                 runner_args: Sequence[str] = ()) -> BuiltGraph:
    """The registered-domain graph of the host graph ``nodes.parquet`` + ``adjacency.txt``,
    by one job (:mod:`spamflow_links.mr_domain_graph`), written as the same two files into
    ``outdir``; its counts (``edges_inside_domains``, ``edges``, ``nodes``)."""
    outdir.mkdir(parents=True, exist_ok=True)
    source = outdir / "hosts-input.txt"
    with open(source, "w", encoding="utf-8") as fh:
        lines = adjacency_lines(adjacency)
        for batch in pq.ParquetFile(nodes).iter_batches(columns=["node", "domain"]):
            for node, domain in zip(batch.column("node").to_pylist(), batch.column("domain").to_pylist()):
                line = next(lines, None)
                if line is None or line[0] != node:
                    raise SpamflowError(f"{adjacency}: line of node {line and line[0]} where {nodes} has node {node}: "
                                        "the two files are not from the same build")
                fh.write(f"{node}\t{domain}\t{line[1]}\t{line[2]}\n")
    if runner != "inline":  # the job's steps 3-8 are spamflow's
        runner_args = (*runner_args, "--py-files", str(package_zip("spamflow")))
    out = run_job(MRDomainGraph, [source], outdir / "domains.txt", runner=runner, runner_args=runner_args)
    source.unlink()
    built = split_output(out, outdir)
    out.unlink()
    return built
