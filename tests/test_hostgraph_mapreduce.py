"""The host graph read by MapReduce (``input.hostgraph.engine: mapreduce``: the job
``spamflow.mr_hostgraph``, for graphs no process can hold) and its features computed from
the resulting file by jobs only (``links_hostgraph`` on ``adjacency.txt``), checked against
the in-memory reader and features and against networkx, on a graph written in cc-webgraph's
format from ../shared/data/web-graphs-small."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp

from spamflow.detector import RunSettings
from spamflow.domains import registered_domain
from spamflow.hostgraph_build import build_with_mapreduce
from spamflow.hostgraph_files import KEPT_EXAMPLES, read_text_graph
from spamflow.stages.hostgraph import adjacency

from conftest import shared_data
from hostgraph_files import pajek_host_edges, write_cc_webgraph


def _built(folder: Path) -> tuple[list[str], set[tuple[str, str]]]:
    """Host names by node id and the host-to-host edges of a build's two files."""
    table = pq.read_table(folder / "nodes.parquet").sort_by("node")
    assert table.column("node").to_pylist() == list(range(table.num_rows))
    hosts = table.column("host").to_pylist()
    edges, edges_in = set(), set()
    for line in (folder / "adjacency.txt").read_text().splitlines():
        node, out, into = line.split("\t")
        edges |= {(hosts[int(node)], hosts[int(t)]) for t in out.split(",") if t}
        edges_in |= {(hosts[int(s)], hosts[int(node)]) for s in into.split(",") if s}
    assert edges == edges_in
    return hosts, edges


def _messy_graph(folder: Path) -> tuple[Path, Path]:
    """Bad lines of every kind (more of some than are kept as examples), two ids with the same
    host, self-links (one through that host), repeated edges, in cc-webgraph's format."""
    vertices, edges = folder / "v.txt", folder / "e.txt.gz"
    lines = [f"{i}\tcom.host{i}.www" if i != 9 else "9\tcom.host3.www" for i in range(30)]
    lines[5:5] = ["not-a-number\tcom.x", "7", "4\tcom.again"] + [f"x{i}\tcom.y" for i in range(KEPT_EXAMPLES + 3)]
    vertices.write_text("\n".join(lines) + "\n")
    pairs = [f"{i}\t{(i * 7 + 3) % 30}" for i in range(30)] + ["3\t9", "9\t3", "5\t5", "0\t1", "0\t1"]
    pairs += ["0\t99", "98\t1", "1\t2\t3", "x\t1"] + [f"{i}\t77" for i in range(KEPT_EXAMPLES + 2)]
    with gzip.open(edges, "wt") as fh:
        fh.write("\n".join(pairs) + "\n")
    return vertices, edges


def test_the_mapreduce_build_equals_the_in_memory_reader(tmp_path):
    vertices, edges = _messy_graph(tmp_path)
    graph = read_text_graph(str(vertices), str(edges))
    matrix, edge_counts = adjacency(len(graph.hosts), graph.sources, graph.targets)
    want_edges = {(graph.hosts[a], graph.hosts[b]) for a, b in zip(*matrix.nonzero())}
    out = tmp_path / "built"
    out.mkdir()
    # three vertex lines a numbering block: the blocks' starts must add up
    built = build_with_mapreduce(str(vertices), str(edges), "cc-webgraph", None, out, RunSettings(runner="inline"),
                                 block_lines=3)
    hosts, got_edges = _built(out)
    assert hosts == graph.hosts  # numbered in vertex-file order, as the in-memory reader numbers them
    assert got_edges == want_edges
    assert built.counts == {"nodes": len(graph.hosts), **graph.counts, **edge_counts}
    assert built.counts["vertices_same_host"] == 1 and built.counts["self_links"] == 3
    assert built.counts["repeated_edges"] == 1
    assert built.bad.counts == graph.bad.counts and built.bad.counts["edge_unknown_vertex"] == KEPT_EXAMPLES + 4
    key = lambda e: (e["kind"], e["file"], e["line"])  # noqa: E731
    assert sorted(built.bad.examples, key=key) == sorted(graph.bad.examples, key=key)
    assert len([e for e in built.bad.examples if e["kind"] == "edge_unknown_vertex"]) == KEPT_EXAMPLES


def test_the_mapreduce_build_reads_the_plain_format(tmp_path):
    (tmp_path / "hosts.txt").write_text("107 www.b.org\n100 a.com\n114 c.net\n")
    (tmp_path / "links.txt").write_text("100 107\n107  114\n114 100\n100 114\n")
    graph = read_text_graph(str(tmp_path / "hosts.txt"), str(tmp_path / "links.txt"), "plain")
    built = build_with_mapreduce(str(tmp_path / "hosts.txt"), str(tmp_path / "links.txt"), "plain", None, tmp_path,
                                 RunSettings(runner="inline"))
    hosts, edges = _built(tmp_path)
    assert hosts == graph.hosts == ["www.b.org", "a.com", "c.net"]
    assert edges == {("a.com", "www.b.org"), ("www.b.org", "c.net"), ("c.net", "a.com"), ("a.com", "c.net")}
    assert built.counts["edges"] == 4 and not built.bad.counts


def _run(folder: Path, hostgraph: dict, links: dict) -> dict:
    config = folder / "hg.yaml"
    config.write_text(json.dumps({"workdir": "run", "input": {"hostgraph": hostgraph}, "mapreduce": {"runner": "inline"},
                                  "detectors": {"links_hostgraph": links}}))
    out = subprocess.run([sys.executable, "-m", "spamflow_workflows", "run", "-c", str(config), "--local-scheduler",
                          "--no-progress"], capture_output=True, text=True, timeout=900, env=dict(os.environ))
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads((folder / "run" / "run.json").read_text())["stages"]


@pytest.mark.slow
def test_features_of_a_graph_read_by_mapreduce_equal_the_in_memory_ones_and_networkx(tmp_path):
    hosts, edges = pajek_host_edges(shared_data("web-graphs-small", "kleinberg-epa.net.gz"))
    write_cc_webgraph(hosts, edges, tmp_path)
    files = {"vertices": str(tmp_path / "vertices.txt.gz"), "edges": str(tmp_path / "edges.txt.gz")}
    seed = sorted(hosts)[7]
    # alpha 0.2: the walks take ~15 steps instead of ~140 at 0.85 (each inline step costs ~1 s); the
    # engines and networkx are compared at the same alpha, so it is the same check
    links = {"alpha": 0.2, "trust_seeds": [seed], "exact_max_nodes": 10000}
    rows, stages = {}, {}
    for engine in ("memory", "mapreduce"):
        folder = tmp_path / engine
        folder.mkdir()
        stages[engine] = _run(folder, {**files, "engine": engine}, {**links, "engine": engine})
        table = pq.read_table(stages[engine]["links_hostgraph"]["outputs"]["hosts"]).to_pylist()
        rows[engine] = {r["host"]: r for r in table}
    built = stages["mapreduce"]["hostgraph"]
    assert "adjacency" in built["outputs"] and "edges" not in built["outputs"]
    assert built["mapreduce_applications"] == 1
    record = stages["mapreduce"]["links_hostgraph"]
    # the neighbour sums (2 jobs) and every walk in one job, plus <= 2 for rank walks not converged in it
    assert 2 + 1 <= record["mapreduce_applications"] <= 2 + 3
    assert record["counts"]["mapreduce_jobs"] == record["mapreduce_applications"]
    assert set(rows["mapreduce"]) == set(rows["memory"]) == set(hosts)
    columns = [c for c in rows["memory"][hosts[0]] if c not in ("snapshot", "host")]
    for name in columns:
        a = np.array([rows["memory"][h][name] for h in hosts], dtype=float)  # None (missing) is NaN
        b = np.array([rows["mapreduce"][h][name] for h in hosts], dtype=float)
        # fsum in the jobs, sparse products in memory: equal to ~1e-12 relative, logs of tiny ratios
        # included (a neighbour variance within rounding of 0 is 0 on both: at alpha 0.2 many hosts'
        # neighbours rank alike, and prsigma was 0 on one engine and 7e-12 on the other)
        assert np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True), (name, float(np.nanmax(np.abs(a - b))))
    g = nx.DiGraph()
    g.add_nodes_from(hosts)
    g.add_edges_from(edges)
    for name, want in (("pagerank", nx.pagerank(g, alpha=0.2, tol=1e-13)),
                       ("cheirank", nx.pagerank(g.reverse(), alpha=0.2, tol=1e-13)),
                       ("trustrank", nx.pagerank(g, alpha=0.2, tol=1e-13, personalization={seed: 1.0}))):
        assert max(abs(rows["mapreduce"][h][name] - v) for h, v in want.items()) < 1e-9, name
    for host in hosts:
        assert rows["mapreduce"][host]["indegree"] == g.in_degree(host)
        assert rows["mapreduce"][host]["reciprocity"] == pytest.approx(
            sum(g.has_edge(t, host) for t in g.successors(host)) / g.out_degree(host) if g.out_degree(host) else None)


def test_a_graph_in_a_file_teleports_only_uniformly_or_to_its_seeds(tmp_path):
    from spamflow_links.file_graph import FileGraph

    (tmp_path / "adjacency.txt").write_text("0\t1,2\t2\n1\t2\t0\n2\t0\t0,1\n")
    graph = FileGraph(tmp_path / "adjacency.txt", 3, np.array([True, False, False]), tmp_path / "work")
    matrix = sp.csr_matrix(np.array([[0, 1, 1], [0, 0, 1], [1, 0, 0]], dtype=float))
    for reverse in (False, True):
        walk = matrix.T if reverse else matrix
        spread = np.full(3, 1 / 3) / np.asarray(walk.sum(axis=1)).ravel()
        assert np.allclose(graph.walk(reverse).u(np.full(3, 1 / 3)), walk.T @ spread, rtol=0, atol=1e-15)
    assert np.allclose(graph.walk(False).u(np.array([1.0, 0, 0])), matrix.T @ np.array([0.5, 0, 0]))
    with pytest.raises(ValueError, match="trust seeds"):
        graph.walk(False).u(np.array([0.0, 1.0, 0]))


def test_the_domain_graph_job_equals_the_in_memory_grouping(tmp_path):
    from spamflow_links.file_graph import domain_graph
    from spamflow_links.hostgraph_input import by_domain

    hosts, edges = pajek_host_edges(shared_data("web-graphs-small", "kleinberg-epa.net.gz"))
    vertices, edge_file = write_cc_webgraph(hosts, edges, tmp_path)
    graph = read_text_graph(str(vertices), str(edge_file))
    matrix, _ = adjacency(len(graph.hosts), graph.sources, graph.targets)
    want, names, inside = by_domain(matrix, [registered_domain(h) for h in graph.hosts])
    built_hosts = tmp_path / "hosts"
    built_hosts.mkdir()
    build_with_mapreduce(str(vertices), str(edge_file), "cc-webgraph", None, built_hosts, RunSettings(runner="inline"))
    built = domain_graph(built_hosts / "nodes.parquet", built_hosts / "adjacency.txt", tmp_path / "domains")
    got_names, got_edges = _built(tmp_path / "domains")
    assert got_names == names  # numbered in name order, as by_domain numbers them
    assert got_edges == {(names[a], names[b]) for a, b in zip(*want.nonzero())}
    assert built.counts["edges_inside_domains"] == inside > 0 and built.counts["edges"] == want.nnz
