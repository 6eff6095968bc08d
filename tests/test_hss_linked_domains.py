"""HSS's firing feature, ``linked_cluster_domains`` (plugins/spamflow_hss/linked_domains.py): a
hand-worked snapshot, random ones against networkx on the definition, and the stage with either
engine on a link network and an honest shared theme made from one template each."""

from __future__ import annotations

import json
import random

import networkx as nx
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spamflow_hss.detector import ASSIGNMENT_SCHEMA, host_features
from spamflow_hss.linked_domains import cluster_links, linked_domains
from spamflow_hss.params import HSSParams

LINK = pa.struct([pa.field("url", pa.string()), pa.field("anchor", pa.string()), pa.field("nofollow", pa.bool_())])


def _links(targets: list[str]) -> list[dict]:
    return [{"url": f"http://www.{t}/page", "anchor": "a", "nofollow": False} for t in targets]


def _write(tmp_path, pages: list[tuple[int, str, str, str, int | None, list[str]]]):
    """pages: (doc_id, snapshot, host, domain, cluster_id, link target domains) -> the page-table
    part (two parts, to check streaming across parts) and HSS's assignment table."""
    parts = []
    for n, chunk in enumerate((pages[::2], pages[1::2])):
        parts.append(tmp_path / f"part-{n:05d}.parquet")
        pq.write_table(pa.table({
            "doc_id": pa.array([p[0] for p in chunk], pa.int64()), "snapshot": [p[1] for p in chunk],
            "domain": [p[3] for p in chunk], "links": pa.array([_links(p[5]) for p in chunk], pa.list_(LINK))}),
            parts[-1])
    sizes: dict[int, int] = {}
    domains: dict[int, set[str]] = {}
    for p in pages:
        if p[4] is not None:
            sizes[p[4]] = sizes.get(p[4], 0) + 1
            domains.setdefault(p[4], set()).add(p[3])
    assignment = pa.Table.from_pylist([{
        "doc_id": p[0], "snapshot": p[1], "url": f"http://{p[2]}/{p[0]}", "host": p[2], "domain": p[3],
        "cluster_id": p[4], "cluster_size": sizes.get(p[4], 1), "cluster_domains": len(domains.get(p[4], {p[3]})),
        "similarity_to_centroid": None if p[4] is None else 1.0} for p in pages], schema=ASSIGNMENT_SCHEMA)
    return parts, assignment


def test_a_hand_worked_snapshot(tmp_path):
    """Cluster 0 on a, b, c, d, e (one page each; b.com has two hosts):
    a -> b, c, x: 2 of 3 targets inside, insular;  b -> a: insular;  c -> d, y, z: 1 of 3, not;
    d -> e: insular;  e links nowhere: not insular (0 of 0).  Insular a, b, d; the links between
    them: a-b.  So a and b: 2, d: 1, c and e: 0.  Cluster 1 (a, f, g; a's page there links f and
    g, f links a: insular; g links a and x: half, not more, inside: not insular): a and f 2, g 0,
    whatever a does in cluster 0.  The
    page outside any cluster (links to a, b, c) counts nowhere; a link to its own domain or an
    unparsable URL counts neither inside nor outside."""
    pages = [
        (1, "s1", "www.a.com", "a.com", 0, ["b.com", "c.com", "x.com", "a.com"]),
        (2, "s1", "www.b.com", "b.com", 0, ["a.com"]),
        (3, "s1", "blog.b.com", "b.com", None, ["c.com", "d.com", "e.com", "q.com"]),
        (4, "s1", "www.c.com", "c.com", 0, ["d.com", "y.com", "z.com"]),
        (5, "s1", "www.d.com", "d.com", 0, ["e.com"]),
        (6, "s1", "www.e.com", "e.com", 0, []),
        (7, "s1", "shop.a.com", "a.com", 1, ["f.com", "g.com"]),
        (8, "s1", "www.f.com", "f.com", 1, ["a.com"]),
        (9, "s1", "www.g.com", "g.com", 1, ["a.com", "x.com"]),
        (10, "s1", "www.h.com", "h.com", None, ["a.com", "b.com", "c.com"]),
    ]
    parts, assignment = _write(tmp_path, pages)
    found = cluster_links(parts, assignment)
    assert found[0]["a.com"].inside == {"b.com", "c.com"} and found[0]["a.com"].outside == {"x.com"}
    assert linked_domains(found) == {(0, "a.com"): 2, (0, "b.com"): 2, (0, "d.com"): 1,
                                     (1, "a.com"): 2, (1, "f.com"): 2}
    rows = {r["host"]: r for r in host_features(assignment, linked_domains(found)).to_pylist()}
    assert rows["www.a.com"]["linked_cluster_domains"] == 2 and rows["shop.a.com"]["linked_cluster_domains"] == 2
    assert rows["www.b.com"]["linked_cluster_domains"] == 2 and rows["blog.b.com"]["linked_cluster_domains"] == 0
    assert [rows[f"www.{d}.com"]["linked_cluster_domains"] for d in "cdefgh"] == [0, 1, 0, 2, 0, 0]


def test_outside_targets_are_counted_only_as_far_as_they_can_matter(tmp_path):
    """Three domains: a links both others and five outside domains: not insular (2 of 7), and
    at most 2 outside targets are kept."""
    pages = [(1, "s", "a.com", "a.com", 0, ["b.com", "c.com", "o1.com", "o2.com", "o3.com", "o4.com", "o5.com"]),
             (2, "s", "b.com", "b.com", 0, ["a.com"]), (3, "s", "c.com", "c.com", 0, ["b.com"])]
    parts, assignment = _write(tmp_path, pages)
    found = cluster_links(parts, assignment)
    assert len(found[0]["a.com"].outside) == 2 and not found[0]["a.com"].insular
    assert linked_domains(found) == {(0, "b.com"): 2, (0, "c.com"): 2}


def _by_definition(pages) -> dict[tuple[int, str], int]:
    """The definition read literally, with networkx: per cluster, each domain's distinct target
    domains (own left out), insular when more than half are the cluster's; the weakly connected
    components of the cluster's links restricted to insular domains."""
    out = {}
    for cid in {p[4] for p in pages if p[4] is not None}:
        members = [p for p in pages if p[4] == cid]
        domains = {p[3] for p in members}
        targets: dict[str, set[str]] = {d: set() for d in domains}
        graph = nx.DiGraph()
        for p in members:
            targets[p[3]] |= set(p[5]) - {p[3]}
            graph.add_edges_from((p[3], t) for t in p[5] if t in domains and t != p[3])
        insular = {d for d, t in targets.items() if len(t & domains) * 2 > len(t)}
        for component in nx.weakly_connected_components(graph.subgraph(insular)):
            out.update({(cid, d): len(component) for d in component})
        out.update({(cid, d): 1 for d in insular if d not in graph})
    return out


@pytest.mark.parametrize("seed", range(6))
def test_random_snapshots_agree_with_networkx(tmp_path, seed):
    rng = random.Random(seed)
    domains = [f"d{i}.org" for i in range(14)]
    pages = []
    for doc in range(60):
        domain = rng.choice(domains)
        cid = rng.choice([None, 0, 1, 2])
        pages.append((doc * 7 + 3, "s", "www." + domain, domain, cid,
                      rng.sample(domains, rng.randint(0, 5)) + [f"out{rng.randrange(8)}.net"] * rng.randint(0, 1)))
    parts, assignment = _write(tmp_path, pages)
    assert linked_domains(cluster_links(parts, assignment)) == _by_definition(pages)


def _template_network_pages(folder) -> None:
    """test_hss_stage's three templates on 5 domains each (10 pages), plus 10 unrelated pages,
    with links: template 0 is a link network (each page links the next two domains of its
    template and one money site), template 1 an honest shared theme (its pages link outside
    sites only), template 2 a chain whose pages link one sister domain and three outside sites."""
    from test_hss_stage import _template_pages

    _template_pages(folder, np.random.default_rng(6))
    table = pq.read_table(folder / "part-00000.parquet")
    links = []
    for host in table.column("host").to_pylist():
        if host.startswith("t0-"):
            h = int(host[4])
            links.append(_links([f"t0-h{(h + 1) % 5}.example", f"t0-h{(h + 2) % 5}.example", "money.example"]))
        elif host.startswith("t1-"):
            links.append(_links(["wikipedia.org", "theme-author.example", "news.example"]))
        elif host.startswith("t2-"):
            h = int(host[4])
            links.append(_links([f"t2-h{(h + 1) % 5}.example", "wikipedia.org", "a.example", "b.example"]))
        else:
            links.append(_links(["t0-h0.example", "t0-h1.example"]))
    pq.write_table(table.append_column("links", pa.array(links, pa.list_(LINK))), folder / "part-00000.parquet")


def test_the_stage_fires_on_the_link_network_only_with_either_engine(tmp_path):
    from spamflow.detector import StageContext, StageOutputs
    from spamflow_hss.detector import HSSDetector

    _template_network_pages(tmp_path / "pages")
    parse = StageOutputs("parse", tmp_path, {"pages": tmp_path / "pages"}, {})
    hosts = {}
    for engine in ("memory", "mapreduce"):
        outdir = tmp_path / engine
        outdir.mkdir()
        result = HSSDetector().run(StageContext(HSSParams(engine=engine, max_representatives=3),
                                                {"parse": parse}, outdir))
        hosts[engine] = pq.read_table(outdir / result.outputs["hosts"])
        assert json.loads((outdir / "summary.json").read_text())["params"]["engine"] == engine
    assert hosts["memory"].equals(hosts["mapreduce"])
    rows = {r["host"]: r for r in hosts["memory"].to_pylist()}
    for h in range(5):
        # each template spans 5 domains: the old rule fired on all three
        assert [rows[f"t{t}-h{h}.example"]["largest_cluster_domains"] for t in range(3)] == [5, 5, 5]
        # t0: 2 of 3 targets inside, all joined; t1: no link inside; t2: 1 of 4 inside
        assert [rows[f"t{t}-h{h}.example"]["linked_cluster_domains"] for t in range(3)] == [5, 0, 0]
    assert all(rows[f"other{i}.example"]["linked_cluster_domains"] == 0 for i in range(10))
