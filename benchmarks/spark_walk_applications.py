"""One PageRank walk of the links stage's MapReduce engine on Spark ``local[2]``: iterations,
jobs (= Spark applications), wall and child CPU seconds, and the L1 distance to the in-memory
walk.  The checkout to measure is the first argument (its root), so two versions can be
compared on the same machine in the same minutes (benchmarks/README.md, "Spark applications
per walk")::

    .venv/bin/python benchmarks/spark_walk_applications.py /path/to/checkout MAX_ITER
"""

from __future__ import annotations

import importlib
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    root, max_iter = sys.argv[1], int(sys.argv[2])
    sys.path[:0] = [root, f"{root}/plugins"]
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    hostgraph = importlib.import_module("spamflow_links.hostgraph")
    mapreduce = importlib.import_module("spamflow_links.mapreduce")
    ranks = importlib.import_module("spamflow_links.ranks")
    rng = np.random.default_rng(9)  # 40 nodes, 150 links, the last tenth dangling
    src, dst = rng.integers(0, 36, 150), rng.integers(0, 40, 150)
    a = hostgraph.graph_from_edges(40, zip(src.tolist(), dst.tolist())).adjacency
    work = Path(tempfile.mkdtemp(prefix="bench-walk-"))
    solver = mapreduce.MapReduceRanks(work, "spark", ("--spark-master", "local[2]"), max_iter=max_iter)
    started = time.time()
    p, iterations = solver.power_iteration(a, 0.85, tol=1e-10)
    wall = time.time() - started
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(work, ignore_errors=True)
    want, want_iterations = ranks.power_iteration(ranks.Walk.of(a), 0.85, None, 1e-10, max_iter)
    print(f"{root}: {iterations} iterations (in memory {want_iterations}), L1 to in memory "
          f"{float(np.abs(p - want).sum()):.1e}, {solver.jobs} jobs, wall {wall:.1f} s, "
          f"child CPU {children.ru_utime + children.ru_stime:.1f} s")


if __name__ == "__main__":
    main()
