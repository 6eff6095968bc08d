"""What the two data-set-pipeline paths cost (docs/pipelines.md), on synthetic data of a chosen
size, each against a bare baseline measured in the same process:

1. a host graph in cc-webgraph format: reading it (``spamflow.hostgraph_files``) against a bare
   loop that only inflates and splits the same lines, then the links stage's static features
   in memory (``links_hostgraph``'s engine=memory path), in edges per second;
2. ``spamflow export`` of a run with N pages over H hosts (a synthetic run.json: page table,
   one detector's hosts table, the classifier's scores) as parquet, jsonl and dolma, in pages
   per second, against writing the bare page table once with pyarrow;
3. the datatrove filter's per-document cost against a pass-through that only takes the URL's host.

    python benchmarks/bench_pipelines.py                 # 100,000 hosts, 1,000,000 edges, 200,000 pages
    python benchmarks/bench_pipelines.py --quick         # a tenth of each
"""

from __future__ import annotations

import argparse
import gzip
import json
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - start, out


def write_graph(folder: Path, hosts: int, edges: int, seed: int = 0) -> tuple[Path, Path]:
    """A cc-webgraph-format host graph: in-degrees heavy-tailed (Zipf targets), sources uniform."""
    rng = np.random.default_rng(seed)
    names = [f"com.site{i:07d}.www" for i in range(hosts)]  # already in reversed-name order
    src = rng.integers(0, hosts, edges)
    dst = (rng.zipf(1.8, edges) - 1) % hosts
    pairs = np.unique(np.stack([src, dst], axis=1), axis=0)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    vertices, edge_file = folder / "vertices.txt.gz", folder / "edges.txt.gz"
    with gzip.open(vertices, "wt", compresslevel=6) as fh:
        fh.writelines(f"{i}\t{n}\n" for i, n in enumerate(names))
    with gzip.open(edge_file, "wt", compresslevel=6) as fh:
        fh.writelines(f"{a}\t{b}\n" for a, b in pairs.tolist())
    return vertices, edge_file


def bare_lines(path: Path) -> int:
    n = 0
    with gzip.open(path, "rb") as fh:
        for line in fh:
            line.split(b"\t")
            n += 1
    return n


def bench_graph(folder: Path, hosts: int, edges: int) -> None:
    from spamflow.hostgraph_files import read_text_graph
    from spamflow.stages.hostgraph import adjacency
    from spamflow_links.static_features import static_features

    vertices, edge_file = write_graph(folder, hosts, edges)
    bare_s, lines = timed(lambda: bare_lines(vertices) + bare_lines(edge_file))
    read_s, graph = timed(read_text_graph, str(vertices), str(edge_file))
    matrix, counts = adjacency(len(graph.hosts), graph.sources, graph.targets)
    m = counts["edges"]
    print(f"host graph: {len(graph.hosts):,} hosts, {m:,} edges ({edge_file.stat().st_size / 1e6:.1f} MB gzip)")
    print(f"  read (spamflow.hostgraph_files): {read_s:.2f} s = {m / read_s:,.0f} edges/s; bare inflate+split "
          f"{bare_s:.2f} s ({lines / bare_s:,.0f} lines/s); ratio {read_s / bare_s:.2f}x the bare loop")
    feat_s, f = timed(static_features, matrix, alpha=0.85, tol=1e-10, trust_seeds=None, exact_max_nodes=5000)
    print(f"  static features in memory (PageRank, CheiRank, truncated PageRank, HyperLogLog supporters, "
          f"{len(f)} columns): {feat_s:.2f} s = {m / feat_s:,.0f} edges/s")
    bench_mapreduce_steps(folder, matrix)


def bench_mapreduce_steps(folder: Path, matrix) -> None:
    """One MapReduce rank step and one HyperLogLog supporter step on the inline runner (one
    process: core-seconds), and the steps a whole feature table takes on this graph."""
    from spamflow_links.mapreduce import MapReduceRanks
    from spamflow_links.ranks import Walk, power_iteration

    m = int(matrix.nnz)
    steps = 2
    solver = MapReduceRanks(folder / "mr", "inline", max_iter=steps)
    rank_s, _ = timed(solver.power_iteration, matrix, 0.85)
    ball_s, _ = timed(solver.supporters, matrix, 1, 7, 0, False)
    per_rank, per_ball = rank_s / steps, ball_s
    iterations = [power_iteration(Walk.of(matrix, reverse=r), 0.85, None, 1e-10, 1000)[1] for r in (False, True)]
    total = 2 * iterations[0] + iterations[1] + 4  # PageRank, TrustRank (as PageRank), CheiRank, truncated
    print(f"  MapReduce (inline runner, one process): a rank step {per_rank:.2f} s = {per_rank / m * 1e6:.2f} "
          f"core-us per edge; a HyperLogLog supporter step {per_ball:.2f} s = {per_ball / m * 1e6:.2f} core-us per "
          f"edge; this graph's feature table: {total} rank steps (PageRank {iterations[0]}, CheiRank "
          f"{iterations[1]} iterations) + 4 supporter steps")


def synthetic_run(folder: Path, pages: int, hosts: int, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    names = [f"www.site{i:06d}.example" for i in range(hosts)]
    host_of_page = rng.integers(0, hosts, pages)
    (folder / "pages").mkdir()
    page_hosts = [names[h] for h in host_of_page.tolist()]
    table = pa.table({
        "snapshot": ["s1"] * pages, "host": page_hosts,
        "url": [f"http://{h}/p{i}" for i, h in enumerate(page_hosts)],
        "record_id": [f"<urn:uuid:{i:032x}>" for i in range(pages)],
        "warc_file": [f"/crawl/part-{i // 20000:05d}.warc.gz" for i in range(pages)],
        "warc_offset": pa.array(np.arange(pages) * 5000 % 10**9, pa.int64()),
        "html_bytes": pa.array(rng.integers(1000, 100000, pages), pa.int64())})
    pq.write_table(table, folder / "pages" / "part-00000.parquet")
    quilt = pa.table({"snapshot": ["s1"] * hosts, "host": names,
                      "quilted_pages": pa.array(rng.integers(0, 3, hosts), pa.int64()),
                      "quilted_fraction": rng.random(hosts)})
    pq.write_table(quilt, folder / "quilt.parquet")
    scores = rng.random(hosts)
    pq.write_table(pa.table({"snapshot": ["s1"] * hosts, "host": names, "score": scores,
                             "label": ["spam" if s > 0.8 else "nonspam" for s in scores],
                             "true_label": pa.nulls(hosts, pa.string()),
                             "evidence": [json.dumps({"detectors": {}})] * hosts}), folder / "scores.parquet")
    return {"spamflow_version": "bench", "config": "bench.yaml", "started_at": "", "finished_at": "", "stages": {
        "parse": {"outputs": {"pages": str(folder / "pages")}, "signature": "p"},
        "quilt": {"outputs": {"hosts": str(folder / "quilt.parquet")}, "signature": "q", "host_tables": {"hosts": {
            "key": ["snapshot", "host"], "features": {"quilted_pages": {"description": "q", "evidence": True,
                                                                          "above": 0}}}}},
        "classify": {"outputs": {"scores": str(folder / "scores.parquet")}, "signature": "c"}}}, table


def bench_export(folder: Path, pages: int, hosts: int) -> None:
    from spamflow.export.commands import export_run
    from spamflow.plugins import get_plugins

    manifest, table = synthetic_run(folder, pages, hosts)
    bare_s, _ = timed(pq.write_table, table, folder / "bare.parquet")
    print(f"export: {pages:,} pages over {hosts:,} hosts; bare page-table write {bare_s:.2f} s")
    for fmt in ("parquet", "jsonl", "dolma"):
        secs, counts = timed(export_run, manifest, folder / f"out-{fmt}", fmt, plugins=get_plugins())
        print(f"  {fmt:8s} {secs:.2f} s = {pages / secs:,.0f} pages/s ({secs / bare_s:.1f}x the bare write) {counts}")


def bench_filter(folder: Path, docs: int, hosts: int) -> None:
    from datatrove.data import Document

    from spamflow.domains import host_of
    from spamflow.integrations.datatrove import SpamflowHostFilter

    export = folder / "out-parquet"
    rng = np.random.default_rng(2)
    documents = [Document(text="", id=str(i), metadata={"url": f"http://www.site{h:06d}.example/p{i}"})
                 for i, h in enumerate(rng.integers(0, hosts, docs).tolist())]
    bare_s, _ = timed(lambda: [host_of(d.metadata["url"]) for d in documents])
    flt = SpamflowHostFilter(str(export))
    load_s, _ = timed(flt.scores)
    run_s, kept = timed(lambda: sum(1 for d in documents if flt.filter(d) is True))
    print(f"datatrove filter: {docs:,} documents; loading the export's {hosts:,} hosts {load_s:.2f} s; "
          f"filtering {run_s:.2f} s = {docs / run_s:,.0f} docs/s ({run_s / bare_s:.2f}x host_of alone); kept {kept:,}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    scale = 10 if args.quick else 1
    print(f"python {platform.python_version()}, pyarrow {pa.__version__}, numpy {np.__version__}, "
          f"{platform.machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "graph").mkdir()
        bench_graph(base / "graph", 100_000 // scale, 1_000_000 // scale)
        (base / "run").mkdir()
        bench_export(base / "run", 200_000 // scale, 20_000 // scale)
        bench_filter(base / "run", 200_000 // scale, 20_000 // scale)


if __name__ == "__main__":
    main()
