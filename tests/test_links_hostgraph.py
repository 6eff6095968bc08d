"""Host graphs from page rows: weights, self-links, uncrawled targets, nofollow, domains, and one
node index shared by the snapshots."""

from __future__ import annotations

import pyarrow as pa

from spamflow.domains import registered_domain
from spamflow_links.hostgraph import build_host_graph, node_index

LINK = pa.struct([("url", pa.string()), ("anchor", pa.string()), ("nofollow", pa.bool_())])


def _pages(rows: list[tuple[str, str, list[str], list[tuple[str, bool]]]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict({
        "host": [r[0] for r in rows],
        "domain": [r[1] for r in rows],
        "words": [r[2] for r in rows],
        "links": pa.array([[{"url": u, "anchor": "", "nofollow": nf} for u, nf in r[3]] for r in rows],
                          type=pa.list_(LINK)),
    })


T0 = _pages([
    ("www.a.co.uk", "a.co.uk", ["x", "y"], [("http://www.a.co.uk/p", False), ("http://blog.a.co.uk/", False),
                                           ("https://b.com:8080/q?x=1", False), ("http://b.com/", True)]),
    ("blog.a.co.uk", "a.co.uk", ["z"], [("http://www.a.co.uk/", False), ("http://user@nowhere.org/", False)]),
    ("b.com", "b.com", [], [("http://b.com./self", False)]),
])
T1 = _pages([("b.com", "b.com", ["w"] * 5, [("http://blog.a.co.uk/", False)])])


def test_edges_weights_and_counts():
    index = node_index([pa.array(["www.a.co.uk", "blog.a.co.uk", "b.com"]), pa.array(["b.com"])])
    assert index.tolist() == ["b.com", "blog.a.co.uk", "www.a.co.uk"]
    g0 = build_host_graph("t0", [T0], index)
    dense = g0.adjacency.toarray()
    b, blog, www = 0, 1, 2
    assert dense[www, b] == 2 and dense[www, blog] == 1 and dense[blog, www] == 1  # port, query, nofollow all count
    assert dense.trace() == 0 and dense.sum() == 4
    assert g0.counts == {"pages": 3, "links": 7, "self_links": 2, "links_to_uncrawled": 1, "links_without_host": 0,
                         "pages_without_host": 0, "edges": 3, "hosts": 3}
    assert g0.words.tolist() == [0, 1, 2]
    g1 = build_host_graph("t1", [T1], index)
    assert g1.crawled.tolist() == [True, False, False] and g1.adjacency[b, blog] == 1 and g1.words[b] == 5
    no_follow = build_host_graph("t0", [T0], index, nofollow=False)
    assert no_follow.adjacency[www, b] == 1


def test_registered_domains_as_nodes():
    index = node_index([pa.array(["a.co.uk", "b.com"])])
    g = build_host_graph("t0", [T0], index, nodes="domain", to_domain=registered_domain)
    assert g.adjacency.toarray().tolist() == [[0, 2], [0, 0]]  # a.co.uk -> b.com twice; www <-> blog are self-links
    assert g.counts["self_links"] == 4
