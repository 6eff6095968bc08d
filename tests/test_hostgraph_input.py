"""``input.hostgraph``: a host graph in Common Crawl's cc-webgraph host-level format (and the
plain one), written from the real page graphs of ../shared/data/web-graphs-small, run through
the DAG (stage ``hostgraph``, detector ``links_hostgraph``) and checked against networkx and
brute-force breadth-first search; bad lines counted with file and line; a gzip file cut short
refused with a message."""

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

from spamflow.domains import registered_domain
from spamflow.errors import BadInputError, SpamflowError
from spamflow.hostgraph_files import read_text_graph

from conftest import shared_data
from hostgraph_files import pajek_host_edges, write_cc_webgraph, write_plain

PAGERANK_ATOL = 1e-8
"""networkx stops its power iteration when the L1 step is below n * tol (5,832 * 1e-12 here,
about 6e-9), ours at 1e-10: each value is within about that of the fixed point."""


def _run(folder: Path, hostgraph: dict, links: dict | None = None, env: dict | None = None
         ) -> subprocess.CompletedProcess:
    config = folder / "hg.yaml"
    config.write_text(json.dumps({"workdir": "run", "input": {"hostgraph": hostgraph}, "mapreduce": {"runner": "inline"},
                                  "detectors": {"links_hostgraph": links or {}}}))
    return subprocess.run([sys.executable, "-m", "spamflow_workflows", "run", "-c", str(config), "--local-scheduler",
                           "--no-progress"], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env} if env else None)


def _stages(folder: Path) -> dict:
    return json.loads((folder / "run" / "run.json").read_text())["stages"]


@pytest.fixture(scope="module")
def california(tmp_path_factory) -> dict:
    hosts, edges = pajek_host_edges(shared_data("web-graphs-small", "kleinberg-california.net.gz"))
    folder = tmp_path_factory.mktemp("cc-webgraph")
    write_cc_webgraph(hosts, edges, folder)
    out = _run(folder, {"vertices": "vertices.txt.gz", "edges": "edges.txt.gz", "snapshot": "california"},
               {"trust_seeds": ["www.ca.gov"], "exact_max_nodes": 10000})
    assert out.returncode == 0, out.stdout + out.stderr
    stages = _stages(folder)
    table = pq.read_table(stages["links_hostgraph"]["outputs"]["hosts"]).to_pylist()
    return {"hosts": hosts, "edges": edges, "folder": folder, "stages": stages, "rows": {r["host"]: r for r in table}}


@pytest.mark.slow
def test_pagerank_trustrank_cheirank_and_degrees_equal_networkx(california):
    g = nx.DiGraph()
    g.add_nodes_from(california["hosts"])
    g.add_edges_from(california["edges"])
    rows = california["rows"]
    assert set(rows) == set(california["hosts"]) and len(rows) == 5832
    assert {r["snapshot"] for r in rows.values()} == {"california"}
    for name, want in (("pagerank", nx.pagerank(g, alpha=0.85, tol=1e-12)),
                       ("cheirank", nx.pagerank(g.reverse(), alpha=0.85, tol=1e-12)),
                       ("trustrank", nx.pagerank(g, alpha=0.85, tol=1e-12, personalization={"www.ca.gov": 1.0}))):
        err = max(abs(rows[h][name] - v) for h, v in want.items())
        assert err < PAGERANK_ATOL, (name, err)
    for host in california["hosts"]:
        assert rows[host]["indegree"] == g.in_degree(host) and rows[host]["outdegree"] == g.out_degree(host)
    counts = california["stages"]["hostgraph"]["counts"]
    assert counts["nodes"] == 5832 and counts["edges"] == len(california["edges"]) == 14075
    assert counts["self_links"] == 0 and not any(k.startswith("bad_") for k in counts)


@pytest.mark.slow
def test_supporters_at_distance_two_to_four_equal_breadth_first_search(california):
    g = nx.DiGraph()
    g.add_nodes_from(california["hosts"])
    g.add_edges_from(california["edges"])
    reverse = g.reverse()
    rows = california["rows"]
    checked = 0
    for host in sorted(reverse.nodes)[::7]:  # every 7th host: 834 searches
        dist = nx.single_source_shortest_path_length(reverse, host, cutoff=4)
        for k in (2, 3, 4):
            assert rows[host][f"neighbors_{k}"] == sum(1 for d in dist.values() if d == k), (host, k)
        checked += 1
    assert checked > 800


@pytest.mark.slow
def test_export_of_a_host_graph_run_writes_host_rows_only(california, tmp_path):
    from spamflow.export.commands import export_run
    from spamflow.plugins import build_plugins

    manifest = json.loads((california["folder"] / "run" / "run.json").read_text())
    counts = export_run(manifest, tmp_path / "out", "parquet", plugins=build_plugins())
    assert counts == {"hosts": 5832} and not (tmp_path / "out" / "urls.parquet").exists()
    rows = pq.read_table(tmp_path / "out" / "hosts.parquet").to_pylist()
    assert {r["host"] for r in rows} == set(california["hosts"])
    assert all(r["links_hostgraph__indegree"] == california["rows"][r["host"]]["indegree"] and r["score"] is None
               for r in rows)
    with pytest.raises(SpamflowError, match="no page table"):
        export_run(manifest, tmp_path / "dolma", "dolma", plugins=build_plugins())


@pytest.mark.slow
def test_the_plain_format_gives_the_same_features(california, tmp_path):
    write_plain(california["hosts"], california["edges"], tmp_path)
    out = _run(tmp_path, {"vertices": "hosts.txt", "edges": "links.txt", "format": "plain", "snapshot": "california"},
               {"trust_seeds": ["www.ca.gov"], "exact_max_nodes": 10000})
    assert out.returncode == 0, out.stdout + out.stderr
    table = pq.read_table(_stages(tmp_path)["links_hostgraph"]["outputs"]["hosts"]).to_pylist()
    assert len(table) == len(california["rows"])
    for row in table:
        want = california["rows"][row["host"]]
        for name in ("pagerank", "trustrank", "neighbors_3", "L_indegree"):
            assert row[name] == pytest.approx(want[name], abs=1e-12), name


@pytest.mark.slow
def test_nodes_domain_groups_hosts_by_registered_domain(california, tmp_path):
    out = _run(california["folder"], {"vertices": "vertices.txt.gz", "edges": "edges.txt.gz", "snapshot": "california"},
               {"nodes": "domain"})
    assert out.returncode == 0, out.stdout + out.stderr
    record = _stages(california["folder"])["links_hostgraph"]
    rows = {r["host"]: r for r in pq.read_table(record["outputs"]["hosts"]).to_pylist()}
    domain_edges = {(registered_domain(a), registered_domain(b)) for a, b in california["edges"]}
    inside = {e for e in domain_edges if e[0] == e[1]}
    g = nx.DiGraph()
    g.add_nodes_from({registered_domain(h) for h in california["hosts"]})
    g.add_edges_from(domain_edges - inside)
    assert set(rows) == set(g.nodes)
    assert record["counts"]["edges"] == g.number_of_edges()
    want = nx.pagerank(g, alpha=0.85, tol=1e-12)
    assert max(abs(rows[d]["pagerank"] - v) for d, v in want.items()) < PAGERANK_ATOL


def test_bad_lines_are_counted_with_file_and_line(tmp_path):
    vertices, edges = tmp_path / "v.txt", tmp_path / "e.txt.gz"
    vertices.write_text("0\tcom.example.www\n1\tuk.co.bbc.news\nnot-a-number\tcom.x\n2\n1\tcom.again\n3\torg.wiki\n")
    with gzip.open(edges, "wt") as fh:
        fh.write("0\t1\n1\t0\n0\t9\n1\t2\t3\nx\t1\n3\t0\n3\t3\n0\t1\n")
    graph = read_text_graph(str(vertices), str(edges))
    assert graph.hosts == ["www.example.com", "news.bbc.co.uk", "wiki.org"]
    assert graph.bad.counts == {"vertex_id": 1, "vertex_fields": 1, "vertex_duplicate": 1, "edge_unknown_vertex": 1,
                                "edge_fields": 1, "edge_id": 1}
    where = {(e["kind"], e["file"], e["line"]) for e in graph.bad.examples}
    assert where == {("vertex_id", str(vertices), 3), ("vertex_fields", str(vertices), 4),
                     ("vertex_duplicate", str(vertices), 5), ("edge_unknown_vertex", str(edges), 3),
                     ("edge_fields", str(edges), 4), ("edge_id", str(edges), 5)}
    assert sorted(zip(graph.sources.tolist(), graph.targets.tolist())) == [(0, 1), (0, 1), (1, 0), (2, 0), (2, 2)]


@pytest.mark.slow
def test_bad_lines_through_the_dag_are_in_run_json(tmp_path):
    vertices, edges = tmp_path / "v.txt", tmp_path / "e.txt.gz"
    vertices.write_text("0\tcom.example.www\n1\tuk.co.bbc.news\nnot-a-number\tcom.x\n2\n1\tcom.again\n3\torg.wiki\n")
    with gzip.open(edges, "wt") as fh:
        fh.write("0\t1\n1\t0\n0\t9\n1\t2\t3\nx\t1\n3\t0\n3\t3\n0\t1\n")
    out = _run(tmp_path, {"vertices": "v.txt", "edges": "e.txt.gz"})
    assert out.returncode == 0, out.stdout + out.stderr
    record = _stages(tmp_path)["hostgraph"]
    assert record["counts"]["bad_edge_unknown_vertex"] == 1 and record["counts"]["self_links"] == 1
    assert record["counts"]["repeated_edges"] == 1 and record["counts"]["edges"] == 3
    assert {b["record"] for b in record["bad_records"]} >= {f"{vertices}:3", f"{edges}:3"}


def _graph_with_edges_cut_short(tmp_path: Path) -> tuple[Path, Path]:
    """A gzip vertex file and a gzip edge file cut in the middle of its stream."""
    vertices, edges = tmp_path / "v.txt.gz", tmp_path / "e.txt.gz"
    with gzip.open(vertices, "wt") as fh:
        fh.writelines(f"{i}\tcom.host{i}.www\n" for i in range(2000))
    with gzip.open(edges, "wt") as fh:
        fh.writelines(f"{i}\t{(i * 7) % 2000}\n" for i in range(2000))
    whole = edges.read_bytes()
    edges.write_bytes(whole[: len(whole) // 2])
    return vertices, edges


def test_a_gzip_file_cut_short_is_refused_with_a_message(tmp_path):
    vertices, edges = _graph_with_edges_cut_short(tmp_path)
    with pytest.raises(BadInputError, match=r"e\.txt\.gz: the gzip stream ends or breaks after line \d+.*incomplete"):
        read_text_graph(str(vertices), str(edges))


@pytest.mark.slow
def test_a_gzip_file_cut_short_fails_the_run_with_the_message(tmp_path):
    vertices, edges = _graph_with_edges_cut_short(tmp_path)
    out = _run(tmp_path, {"vertices": "v.txt.gz", "edges": "e.txt.gz"})
    assert out.returncode != 0
    assert "incomplete" in json.dumps(_stages(tmp_path)["hostgraph"]) + out.stderr


@pytest.mark.slow
def test_the_mapreduce_engine_equals_the_in_memory_engine(tmp_path):
    hosts, edges = pajek_host_edges(shared_data("web-graphs-small", "kleinberg-epa.net.gz"))
    assert len(hosts) > 1000
    write_cc_webgraph(hosts, edges, tmp_path)
    results = {}
    for engine in ("memory", "mapreduce"):
        folder = tmp_path / engine
        folder.mkdir()
        for name in ("vertices.txt.gz", "edges.txt.gz"):
            (folder / name).write_bytes((tmp_path / name).read_bytes())
        # alpha 0.5: ~30 power iterations (one job each) instead of ~140; the engines are compared, not alpha
        out = _run(folder, {"vertices": "vertices.txt.gz", "edges": "edges.txt.gz"},
                   {"engine": engine, "alpha": 0.5, "tol": 0.0001})
        assert out.returncode == 0, out.stdout + out.stderr
        record = _stages(folder)["links_hostgraph"]
        assert (record["counts"]["mapreduce_jobs"] > 0) == (engine == "mapreduce")
        results[engine] = pq.read_table(record["outputs"]["hosts"]).to_pydict()
    assert results["memory"]["host"] == results["mapreduce"]["host"]
    for name in ("pagerank", "cheirank", "truncatedpagerank_2", "neighbors_2", "neighbors_4"):
        a, b = np.array(results["memory"][name], float), np.array(results["mapreduce"][name], float)
        assert np.allclose(a, b, rtol=0, atol=1e-9, equal_nan=True), name


@pytest.mark.slow
def test_the_graph_over_http_and_s3_gives_the_local_features(tmp_path, s3):
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    hosts, edges = pajek_host_edges(shared_data("web-graphs-small", "kleinberg-epa.net.gz"))
    served = tmp_path / "served"
    served.mkdir()
    write_cc_webgraph(hosts, edges, served)
    client, env = s3
    for name in ("vertices.txt.gz", "edges.txt.gz"):
        client.put_object(Bucket="crawl", Key=f"graph/{name}", Body=(served / name).read_bytes())
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(SimpleHTTPRequestHandler, directory=str(served)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    http = f"http://127.0.0.1:{server.server_address[1]}"
    tables = {}
    try:
        for where, base, extra in (("local", str(served), None), ("http", http, None), ("s3", "s3://crawl/graph", env)):
            folder = tmp_path / where
            folder.mkdir()
            out = _run(folder, {"vertices": f"{base}/vertices.txt.gz", "edges": f"{base}/edges.txt.gz"}, env=extra)
            assert out.returncode == 0, out.stdout + out.stderr
            stages = _stages(folder)
            tables[where] = pq.read_table(stages["links_hostgraph"]["outputs"]["hosts"])
            if where != "local":
                assert stages["hostgraph"]["params"]["edges"]["path"] == f"{base}/edges.txt.gz"
                assert stages["hostgraph"]["params"]["edges"]["bytes"] == (served / "edges.txt.gz").stat().st_size
    finally:
        server.shutdown()
        server.server_close()
    assert tables["local"].num_rows == len(hosts)
    assert tables["http"].equals(tables["local"]) and tables["s3"].equals(tables["local"])


@pytest.mark.slow
def test_bad_records_total_counts_every_bad_line_not_only_the_kept_examples(tmp_path):
    from spamflow.hostgraph_files import KEPT_EXAMPLES

    bad_ids, bad_fields = 3 * KEPT_EXAMPLES, KEPT_EXAMPLES + 5  # more of each kind than are kept
    (tmp_path / "v.txt").write_text("".join(f"{i}\tcom.host{i}.www\n" for i in range(10)))
    lines = ["0\t1", "1\t2"] + [f"x{i}\t1" for i in range(bad_ids)] + ["1\t2\t3"] * bad_fields + ["2\t0"]
    (tmp_path / "e.txt").write_text("\n".join(lines) + "\n")
    out = _run(tmp_path, {"vertices": "v.txt", "edges": "e.txt"})
    assert out.returncode == 0, out.stdout + out.stderr
    record = _stages(tmp_path)["hostgraph"]
    assert record["counts"]["bad_edge_id"] == bad_ids and record["counts"]["bad_edge_fields"] == bad_fields
    assert record["bad_records_total"] == bad_ids + bad_fields
    examples = [json.loads(x) for x in Path(record["outputs"]["bad_lines"]).read_text().splitlines()]
    assert len(examples) == 2 * KEPT_EXAMPLES  # the examples file keeps a bounded number, with file and line
    assert {e["line"] for e in examples if e["kind"] == "edge_id"} == set(range(3, 3 + KEPT_EXAMPLES))
    assert all(e["file"] == str(tmp_path / "e.txt") for e in examples)
    assert record["counts"]["edges"] == 3
