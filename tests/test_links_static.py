"""Per-host static link features against brute force over Python sets and networkx BFS."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from spamflow_links.hostgraph import graph_from_edges
from spamflow_links.neighbourhood import hll_estimate, hll_init, supporters_exact, supporters_hll
from spamflow_links.ranks import pagerank
from spamflow_links.static_features import static_features


def _graph(n: int, m: int, seed: int):
    rng = np.random.default_rng(seed)
    edges = {(int(a), int(b)) for a, b in rng.integers(0, n, (m, 2)) if a != b}
    return edges, graph_from_edges(n, edges).adjacency


def test_degree_features_match_brute_force():
    n = 40
    edges, a = _graph(n, 120, 4)
    out = {v: {b for a_, b in edges if a_ == v} for v in range(n)}
    inn = {v: {a_ for a_, b in edges if b == v} for v in range(n)}
    f = static_features(a)
    pr = pagerank(a)
    for v in range(n):
        assert f["indegree"][v] == len(inn[v]) and f["outdegree"][v] == len(out[v])
        if out[v]:
            assert f["reciprocity"][v] == pytest.approx(len(out[v] & inn[v]) / len(out[v]))
            assert f["avgin_of_out"][v] == pytest.approx(np.mean([len(inn[w]) for w in out[v]]))
        else:
            assert np.isnan(f["reciprocity"][v]) and np.isnan(f["avgin_of_out"][v])
        if inn[v]:
            assert f["avgout_of_in"][v] == pytest.approx(np.mean([len(out[w]) for w in inn[v]]))
            assert f["prsigma"][v] == pytest.approx(np.std([pr[w] for w in inn[v]]), abs=1e-15)
        deg = len(inn[v]) + len(out[v])
        if deg:
            neighbour_degrees = [len(inn[w]) + len(out[w]) for w in [*inn[v], *out[v]]]
            assert f["assortativity"][v] == pytest.approx(deg / np.mean(neighbour_degrees))
    assert np.isnan(f["trustrank"]).all()  # no seeds given


def test_supporters_at_exact_distance_match_networkx_bfs():
    n = 80
    edges, a = _graph(n, 160, 8)
    g = nx.DiGraph(list(edges))
    g.add_nodes_from(range(n))
    got = supporters_exact(a, 4)
    for v in range(n):
        dist = nx.single_source_shortest_path_length(g.reverse(), v, cutoff=4)
        for k in range(1, 5):
            assert got[k][v] == sum(1 for d in dist.values() if d == k), (v, k)


def test_hyperloglog_counts_within_its_error():
    regs = hll_init(1, 7)
    assert hll_estimate(regs)[0] == pytest.approx(1.0, abs=0.05)
    n = 3000
    _, a = _graph(n, 9000, 2)
    exact = supporters_exact(a, 4)
    approx = supporters_hll(a, 4, log2m=8, seed=1)
    for k in (3, 4):
        ball = 1 + sum(exact[j] for j in range(1, k + 1))
        approx_ball = 1 + sum(approx[j] for j in range(1, k + 1))
        big = ball > 50
        rel = np.abs(approx_ball[big] - ball[big]) / ball[big]
        assert big.sum() > 500 and np.median(rel) < 0.065 and rel.max() < 0.4, k  # 1.04/sqrt(256) = 6.5 %
        layer_rel = np.abs(approx[k][big] - exact[k][big]) / exact[k][big]
        assert np.median(layer_rel) < 0.15, k  # a layer is a difference of two balls


def test_a_neighbour_variance_within_rounding_is_zero_whichever_way_the_squares_are_summed():
    """Neighbours that all rank alike have variance 0 whether the sums come from a sparse product
    or from math.fsum (the MapReduce jobs); a real spread is numpy's population variance."""
    import math

    from spamflow_links.static_features import mean_var_of_sums

    tied = np.full(7, 1 / 3218)
    spread = np.array([1e-4, 3e-4, 2e-4, 7e-4])
    for values in (tied, spread):
        for sums, squares in ((values.sum(), (values * values).sum()),
                              (math.fsum(values), math.fsum(values * values))):
            mean, var = mean_var_of_sums(np.array([sums]), np.array([squares]), np.array([float(len(values))]))
            assert mean[0] == pytest.approx(values.mean(), rel=1e-12)
            assert var[0] == (0.0 if values is tied else pytest.approx(values.var(), rel=1e-9))
    mean, var = mean_var_of_sums(np.array([0.0]), np.array([0.0]), np.array([0.0]))
    assert np.isnan(mean[0]) and np.isnan(var[0])  # no neighbour: missing
