"""Per-edge CPU cost of a host graph's MapReduce path on mrjob's local runner, at two sizes,
for the per-release estimate in docs/running-mapreduce.md ("Common Crawl's host graph"):

1. the build job (``spamflow.mr_hostgraph``: cc-webgraph text files to numbered node records,
   eight steps in one job), against the in-memory reader on the same files (the baseline,
   in this process);
2. the neighbour-sums job (``spamflow_links.mr_node_stats``, one step; run twice per feature
   table: degrees and TrustRank's teleport, then prsigma);
3. a rank walk of two steps and a HyperLogLog supporter job of one step, both written from
   the build's ``adjacency.txt`` (``spamflow_links.file_graph``);
4. the driver's own serial share of a walk job: writing its input from ``adjacency.txt``
   and reading its output records back (every walk job does both once; the cluster does
   not speed these up).

CPU is this process's plus its finished children's (the local runner's task processes):
core-seconds whatever the parallelism.  The marginal rate between the two sizes (the cost
of the extra edges) is what extrapolates to a release; the rate at one size includes the
jobs' fixed start-up.

    python benchmarks/bench_hostgraph_mapreduce.py                # 100,000 and 1,000,000 edges
    python benchmarks/bench_hostgraph_mapreduce.py --sizes 20000 100000
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_pipelines import write_graph  # noqa: E402


def cpu() -> float:
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def measured(fn, *args, **kwargs):
    wall, used = time.perf_counter(), cpu()
    out = fn(*args, **kwargs)
    return time.perf_counter() - wall, cpu() - used, out


def one_size(folder: Path, edges: int, runner: str) -> dict[str, float]:
    from spamflow.detector import RunSettings
    from spamflow.hostgraph_build import build_with_mapreduce
    from spamflow.hostgraph_files import read_text_graph
    from spamflow_links.file_graph import FileGraph
    from spamflow_links.mapreduce import MapReduceRanks, RankWalk, WalkLines

    vertices, edge_file = write_graph(folder, edges // 10, edges)
    base_wall, base_cpu, graph = measured(read_text_graph, str(vertices), str(edge_file))
    m = len(graph.sources)
    out = folder / "built"
    out.mkdir()
    build_wall, build_cpu, built = measured(build_with_mapreduce, str(vertices), str(edge_file), "cc-webgraph", None,
                                            out, RunSettings(runner=runner))
    n = built.counts["nodes"]
    sums_wall, sums_cpu, file_graph = measured(FileGraph, out / "adjacency.txt", n, np.zeros(n, dtype=bool),
                                               folder / "stats", runner)
    solver = MapReduceRanks(folder / "ranks", runner, max_iter=2)
    walk_wall, walk_cpu, _ = measured(solver.power_iteration, file_graph, 0.85)
    uniform = np.full(n, 1.0 / n)
    written = folder / "walk-input.txt"

    def write() -> None:
        with open(written, "w", encoding="utf-8") as fh:
            RankWalk(file_graph.walk(False), 0.85, 1e-10, uniform, 10).write(fh, "p")

    def read():
        lines = WalkLines(n)
        with open(written, encoding="utf-8") as fh:
            for line in fh:
                lines.add(line.rstrip("\n").split("\t")[1:])
        return lines.state(written)

    write_wall, write_cpu, _ = measured(write)
    read_wall, read_cpu, _ = measured(read)
    ball_wall, ball_cpu, _ = measured(solver.supporters, file_graph, 1, 7, 0, False)
    print(f"{m:,} edges, {n:,} hosts ({edge_file.stat().st_size / 1e6:.1f} MB gzip), {runner} runner:")
    for name, wall, used in (("in-memory reader (baseline)", base_wall, base_cpu), ("build job, 8 steps", build_wall,
                             build_cpu), ("neighbour sums, 1 step", sums_wall, sums_cpu),
                             ("rank walk, 2 steps", walk_wall, walk_cpu), ("HLL supporters, 1 step", ball_wall,
                                                                          ball_cpu),
                             ("driver: write a walk's input", write_wall, write_cpu),
                             ("driver: read a walk's records", read_wall, read_cpu)):
        print(f"  {name:28s} {wall:7.1f} s wall {used:8.1f} core-s = {used / m * 1e6:7.1f} core-us/edge")
    print(f"  build / in-memory reader: {build_cpu / base_cpu:.0f}x the CPU")
    return {"edges": m, "build": build_cpu, "sums": sums_cpu, "walk_step": walk_cpu / 2, "ball_step": ball_cpu,
            "driver_write": write_cpu, "driver_read": read_cpu}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs=2, default=[100_000, 1_000_000], help="edges of the two graphs")
    p.add_argument("--runner", default="local")
    args = p.parse_args()
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}")
    results = []
    for edges in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            results.append(one_size(Path(tmp), edges, args.runner))
    small, large = results
    extra = large["edges"] - small["edges"]
    print("marginal cost of the extra edges (start-up cancels):")
    for name in ("build", "sums", "walk_step", "ball_step", "driver_write", "driver_read"):
        print(f"  {name:10s} {(large[name] - small[name]) / extra * 1e6:7.1f} core-us/edge")


if __name__ == "__main__":
    main()
