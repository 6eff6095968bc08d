"""Temporal link features on a hand-worked two-snapshot graph, XJaccard against brute-force
sets and its min-hash estimate against the exact value, PSimRank where the answer is known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spamflow_links.hostgraph import graph_from_edges
from spamflow_links.psimrank import psimrank
from spamflow_links.temporal_features import temporal_features
from spamflow_links.xjaccard import jaccard_layers_exact, jaccard_layers_minhash, xjaccard

A, B, C, D, E = range(5)
T0 = [(B, A), (C, A), (D, A), (A, B), (A, C), (B, C), (C, A), (D, A)]
T1 = [(B, A), (E, A), (A, B), (A, D), (B, C), (C, D), (B, A)]


def _hand_worked():
    g0, g1 = graph_from_edges(5, T0), graph_from_edges(5, T1)
    crawled0 = np.array([True, True, True, True, False])  # E appears only in t1
    words0 = np.array([100, 10, 10, 10, 0])
    words1 = np.array([50, 10, 10, 10, 7])
    return temporal_features(g0.adjacency, g1.adjacency, crawled0, g1.crawled, words0, words1, fingerprints=8)


def test_growth_and_death_rates_by_hand():
    f = _hand_worked()
    # I0(a) = {b,c,d}, I1(a) = {b,e}: IDR = (3-1)/3, IGR = (2-1)/3; out {b,c} -> {b,d}
    assert (f["IDR"][A], f["IGR"][A], f["ODR"][A], f["OGR"][A]) == pytest.approx((2 / 3, 1 / 3, 1 / 2, 1 / 2))
    assert (f["IDR"][B], f["IGR"][B], f["ODR"][B], f["OGR"][B]) == (0, 0, 0, 0)
    # I0(c) = {a,b}, I1(c) = {b}; out {a} -> {d}
    assert (f["IDR"][C], f["IGR"][C], f["ODR"][C], f["OGR"][C]) == pytest.approx((1 / 2, 0, 1, 1))
    # d has no in-links at t0 (rates undefined); out {a} -> {}
    assert np.isnan(f["IDR"][D]) and np.isnan(f["IGR"][D]) and (f["ODR"][D], f["OGR"][D]) == (1, 0)
    assert all(np.isnan(v[E]) for v in f.values())  # e is seen in one snapshot only: missing


def test_means_variances_and_derived_features_by_hand():
    f = _hand_worked()
    # in-neighbours of a at t1 are b and e; e has no rates, b has IDR 0
    assert (f["IDRMean"][A], f["IDRVar"][A]) == (0, 0)
    # in-neighbours of d at t1 are a and c: IGR 1/3 and 0, ODR 1/2 and 1
    assert (f["IGRMean"][D], f["IGRVar"][D]) == pytest.approx((1 / 6, 1 / 36))
    assert (f["ODRMean"][D], f["ODRVar"][D]) == pytest.approx((3 / 4, 1 / 16))
    assert f["IGR*IDR"][A] == pytest.approx(2 / 9) and f["IGR/IDR"][A] == pytest.approx(1 / 2)
    assert f["OGR/ODR"][C] == 1 and np.isnan(f["OGR/ODR"][B])  # 0 / 0 is missing
    assert f["OGRMean*ODRMean"][D] == pytest.approx(f["OGRMean"][D] * 3 / 4)


def test_crcc_and_change_by_hand():
    f = _hand_worked()
    # Gamma0(a) = {b,c} with b->c: CC = 1/2; Gamma1(a) = {b,d}, no link among them: CC = 0
    assert f["CRCC"][A] == pytest.approx(-1.0)
    # Gamma0(b) = {a,c} with a->c and c->a: CC = 2/2; Gamma1(b) = {a,c}, neither link left
    assert f["CRCC"][B] == pytest.approx(-1.0)
    assert np.isnan(f["CRCC"][C])  # CC(c, t0) = 0
    # a: in-degree 3 -> 2, out-degree 2 -> 2, words 100 -> 50
    assert f["change"][A] == pytest.approx(math.log(3 / 2) + math.log(2))
    # d: in 0 -> 2 and out 1 -> 0 use add-one smoothing
    assert f["change"][D] == pytest.approx(math.log(3) + math.log(2))


def _walk_sets(edges, n, k):
    out = {v: {b for a, b in edges if a == v} for v in range(n)}
    sets = {v: {v} for v in range(n)}
    for _ in range(k):
        sets = {v: set().union(*(out[w] for w in sets[v])) for v in range(n)}
    return sets


def test_xjaccard_exact_matches_brute_force_sets():
    rng = np.random.default_rng(3)
    n = 30
    e0 = {(int(a), int(b)) for a, b in rng.integers(0, n, (50, 2)) if a != b}
    e1 = set(list(e0)[:35]) | {(int(a), int(b)) for a, b in rng.integers(0, n, (15, 2)) if a != b}
    layers = jaccard_layers_exact(graph_from_edges(n, e0).adjacency, graph_from_edges(n, e1).adjacency, 4)
    for k in range(1, 5):
        s0, s1 = _walk_sets(e0, n, k), _walk_sets(e1, n, k)
        for v in range(n):
            union = s0[v] | s1[v]
            assert layers[k - 1][v] == pytest.approx(len(s0[v] & s1[v]) / len(union) if union else 0.0)
    x = xjaccard(layers, 0.1)
    assert x[2] == pytest.approx(layers[0] * 0.1 * 0.9 + layers[1] * 0.01 * 0.9)


def test_xjaccard_minhash_is_within_tolerance_of_exact():
    rng = np.random.default_rng(5)
    n = 400
    e0 = [(int(a), int(b)) for a, b in rng.integers(0, n, (1600, 2))]
    e1 = e0[:1200] + [(int(a), int(b)) for a, b in rng.integers(0, n, (400, 2))]
    a0, a1 = graph_from_edges(n, e0).adjacency, graph_from_edges(n, e1).adjacency
    exact = jaccard_layers_exact(a0, a1, 4)
    approx = jaccard_layers_minhash(a0, a1, 4, fingerprints=256, seed=9)
    for k in range(4):
        err = np.abs(approx[k] - exact[k])
        # each estimate is a mean of 256 Bernoulli(J): standard error <= 0.5 / 16 = 0.031
        assert err.mean() < 0.03 and err.max() < 0.2, k
    same = jaccard_layers_minhash(a0, a0, 4, fingerprints=16)
    nonempty = jaccard_layers_exact(a0, a0, 4)
    assert all(np.array_equal(s, e) for s, e in zip(same, nonempty))  # no change: exactly 1 (or 0 if empty)


def _temporal_simrank(in0, in1, c, steps):
    """SimRank of a node with itself across snapshots (section 3.1.2, eq. 1 with u' from t0 and
    v' from t1); nodes of different snapshots are never identical."""
    n = len(in0)
    sim = np.zeros((n, n))
    for _ in range(steps):
        new = np.zeros((n, n))
        for u in range(n):
            for v in range(n):
                if in0[u] and in1[v]:
                    new[u, v] = c / (len(in0[u]) * len(in1[v])) * sum(
                        1.0 if x == y else sim[x, y] for x in in0[u] for y in in1[v])
        sim = new
    return sim


@pytest.mark.parametrize("k", [1, 3, 8])
def test_psimrank_is_maximal_without_change_where_simrank_decays(k):
    # k nodes point to node 0, nothing changes between the snapshots
    edges = [(i, 0) for i in range(1, k + 1)]
    a = graph_from_edges(k + 1, edges).adjacency
    psim = psimrank(a.T, a.T, 4, c=0.15, fingerprints=32)
    assert all(psim[ell][0] == pytest.approx(0.15) for ell in range(1, 5))
    in_sets = [{i for i, j in edges if j == v} for v in range(k + 1)]
    assert _temporal_simrank(in_sets, in_sets, 0.15, 2)[0, 0] == pytest.approx(0.15 / k)  # the deficiency


def test_psimrank_first_step_meets_with_the_jaccard_probability():
    # I0(0) = {1,2,3,4}, I1(0) = {3,4,5,6}: Jaccard 2/6
    a0 = graph_from_edges(7, [(1, 0), (2, 0), (3, 0), (4, 0)]).adjacency
    a1 = graph_from_edges(7, [(3, 0), (4, 0), (5, 0), (6, 0)]).adjacency
    psim = psimrank(a0.T, a1.T, 2, c=0.5, fingerprints=4000, seed=2)
    assert psim[1][0] == pytest.approx(0.5 * 2 / 6, abs=0.025)  # 4 sigma of a 4000-sample mean
    assert psim[2][0] == psim[1][0]  # nodes 1..6 have no in-links: no second step
