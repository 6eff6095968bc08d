"""The links stage's MapReduce walks on Spark ``local[2]``: iterations, jobs (= Spark
applications), wall and child CPU seconds, and the L1 distance to the in-memory walks.  The
checkout to measure is the first argument (its root), so two versions can be compared on the
same machine in the same minutes (benchmarks/README.md, "Spark applications per walk")::

    .venv/bin/python benchmarks/spark_walk_applications.py /path/to/checkout MAX_ITER
    .venv/bin/python benchmarks/spark_walk_applications.py /path/to/checkout MAX_ITER --snapshot

Without ``--snapshot``: one PageRank walk.  With it: every walk of a snapshot as the links
stage asks for them (PageRank, TrustRank, truncated PageRank T = 1..4, the HyperLogLog
supporters at distance 1..4, CheiRank): through the solver's ``walks`` where the checkout has
it (all in one job), else one method after the other as ``walk_features`` called them before.
"""

from __future__ import annotations

import argparse
import importlib
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def one_walk(solver, ranks, a, max_iter: int) -> str:
    p, iterations = solver.power_iteration(a, 0.85, tol=1e-10)
    want, want_iterations = ranks.power_iteration(ranks.Walk.of(a), 0.85, None, 1e-10, max_iter)
    return (f"{iterations} iterations (in memory {want_iterations}), L1 to in memory "
            f"{float(np.abs(p - want).sum()):.1e}")


def snapshot_walks(solver, static_features, a, seeds) -> str:
    wanted = dict(alpha=0.85, tol=1e-10, truncated_steps=4, distances=4, log2m=7, seed=0, exact=False)
    memory = static_features.MemoryRanks()
    if hasattr(solver, "walks"):
        got = solver.walks(a, a, trust_seeds=seeds, **wanted)
        vectors = {"pagerank": got.pagerank, "trustrank": got.trustrank, "cheirank": got.cheirank,
                   **{f"truncated_{t}": v for t, v in got.truncated.items()},
                   **{f"supporters_{k}": v for k, v in got.supporters.items()}}
    else:  # one job (or up to three) per walk, in walk_features' order before
        pr = solver.pagerank(a, 0.85, 1e-10)
        vectors = {"pagerank": pr, "trustrank": solver.pagerank(a, 0.85, 1e-10, teleport=seeds)}
        vectors.update({f"truncated_{t}": v for t, v in solver.truncated_pagerank(a, 4, 0.85, pr).items()})
        vectors.update({f"supporters_{k}": v for k, v in solver.supporters(a, 4, 7, 0, False).items()})
        vectors["cheirank"] = solver.pagerank(a, 0.85, 1e-10, reverse=True)
    pr = memory.pagerank(a, 0.85, 1e-10)
    want = {"pagerank": pr, "trustrank": memory.pagerank(a, 0.85, 1e-10, teleport=seeds),
            "cheirank": memory.pagerank(a, 0.85, 1e-10, reverse=True),
            **{f"truncated_{t}": v for t, v in memory.truncated_pagerank(a, 4, 0.85, pr).items()},
            **{f"supporters_{k}": v for k, v in memory.supporters(a, 4, 7, 0, False).items()}}
    worst = max(float(np.abs(vectors[name] - want[name]).sum()) for name in want)
    return f"{len(want)} vectors, largest L1 to in memory {worst:.1e}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("root", help="the checkout to measure")
    p.add_argument("max_iter", type=int, help="iterations at most, per rank walk")
    p.add_argument("--snapshot", action="store_true", help="every walk of a snapshot, not one PageRank")
    args = p.parse_args()
    sys.path[:0] = [args.root, f"{args.root}/plugins"]
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    hostgraph = importlib.import_module("spamflow_links.hostgraph")
    mapreduce = importlib.import_module("spamflow_links.mapreduce")
    ranks = importlib.import_module("spamflow_links.ranks")
    static_features = importlib.import_module("spamflow_links.static_features")
    rng = np.random.default_rng(9)  # 40 nodes, 150 links, the last tenth dangling
    src, dst = rng.integers(0, 36, 150), rng.integers(0, 40, 150)
    a = hostgraph.graph_from_edges(40, zip(src.tolist(), dst.tolist())).adjacency
    seeds = np.zeros(40)
    seeds[[1, 5, 20]] = 1.0
    work = Path(tempfile.mkdtemp(prefix="bench-walk-"))
    solver = mapreduce.MapReduceRanks(work, "spark", ("--spark-master", "local[2]"), max_iter=args.max_iter)
    started = time.time()
    result = snapshot_walks(solver, static_features, a, seeds) if args.snapshot else one_walk(solver, ranks, a,
                                                                                               args.max_iter)
    wall = time.time() - started
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(work, ignore_errors=True)
    print(f"{args.root}: {result}, {solver.jobs} jobs ({solver.steps} steps), wall {wall:.1f} s, "
          f"child CPU {children.ru_utime + children.ru_stime:.1f} s, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
