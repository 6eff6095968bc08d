"""Personalized HITS with a supersource (Göbölös-Szabó & Benczúr, section 2.5): a hand-solved
4-node fixed point, a dense numpy iteration of eqs. (7)-(8) on random graphs, the change
personalization of eq. (2), and the HitsAuth / HitsHub columns of the temporal features."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hits_reference import dense_hits, dense_ppr

from spamflow_links.hits import change_pagerank, change_personalization, personalized_hits
from spamflow_links.hostgraph import graph_from_edges
from spamflow_links.temporal_features import temporal_features


def test_hand_worked_fixed_point():
    """Hubs 0, 1 and authorities 2, 3; edges 0->2, 0->3, 1->3; p = (0, 0, 1/2, 1/2), c = 2.
    â = (0, 0, h0 + 1, h0 + h1 + 1): a3 = 1. ĥ = (a2 + 1, 1, 1, 1): h0 = 1, the rest 1/(a2 + 1).
    So a2 = 2 / (2 + 1/(a2 + 1)), i.e. 2 a2^2 + a2 - 2 = 0: a2 = (sqrt(17) - 1) / 4."""
    adjacency = sp.csr_matrix(([1.0, 1.0, 1.0], ([0, 0, 1], [2, 3, 3])), shape=(4, 4))
    a, h, iterations = personalized_hits(adjacency, np.array([0, 0, 0.5, 0.5]), 2.0, tol=1e-13)
    a2 = (math.sqrt(17) - 1) / 4
    assert a == pytest.approx([0, 0, a2, 1], abs=1e-12)
    assert h == pytest.approx([1, 1 / (a2 + 1), 1 / (a2 + 1), 1 / (a2 + 1)], abs=1e-12)
    assert 1 < iterations < 1000


def test_path_with_the_supersource_on_its_end():
    """0 -> 1 -> 2, all personalization on 2, c = 1: a1 = h0 / (h1 + 1) with h0 = a1 and h1 = 1,
    so a1 = a1 / 2 = 0: a = (0, 0, 1), h = (0, 1, 1); a1 halves per iteration."""
    adjacency = sp.csr_matrix(([1.0, 1.0], ([0, 1], [1, 2])), shape=(3, 3))
    a, h, iterations = personalized_hits(adjacency, np.array([0.0, 0.0, 1.0]), 1.0, tol=1e-12)
    assert a == pytest.approx([0, 0, 1], abs=1e-11) and h == pytest.approx([0, 1, 1], abs=1e-11)
    assert 35 <= iterations <= 45  # 2^-40 ~ 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_equals_the_dense_iteration_on_random_graphs(seed):
    """Random weighted graphs with dangling nodes, sources and zero-personalization nodes:
    the sparse code equals the dense Jacobi iteration within 1e-9, and the result satisfies
    eqs. (7)-(8) (it is their fixed point) within 1e-9."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 25))
    w = (rng.random((n, n)) < 0.2) * rng.integers(1, 4, (n, n)).astype(float)
    np.fill_diagonal(w, 0)
    w[rng.integers(n)] = 0  # a node without out-links
    p = rng.random(n) * (rng.random(n) < 0.6)
    p /= p.sum()
    c = [200.0, 2.0, 0.5][seed % 3]
    a, h, _ = personalized_hits(sp.csr_matrix(w), p, c, tol=1e-13)
    want_a, want_h = dense_hits(w, p, c)
    assert np.abs(a - want_a).max() < 1e-9 and np.abs(h - want_h).max() < 1e-9
    a_hat, h_hat = w.T @ h + c * p, w @ a + c * p
    assert np.abs(a - a_hat / a_hat.max()).max() < 1e-9 and np.abs(h - h_hat / h_hat.max()).max() < 1e-9
    assert a.max() == pytest.approx(1.0) and h.max() == pytest.approx(1.0)


def test_without_personalization_it_is_kleinbergs_hits():
    """p = 0: a is the principal eigenvector of W^T W (numpy's eigh), scaled to max 1."""
    rng = np.random.default_rng(3)
    w = (rng.random((12, 12)) < 0.4).astype(float)
    np.fill_diagonal(w, 0)
    a, h, _ = personalized_hits(sp.csr_matrix(w), np.zeros(12), 200.0, tol=1e-13)
    values, vectors = np.linalg.eigh(w.T @ w)
    top = np.abs(vectors[:, np.argmax(values)])
    assert np.abs(a - top / top.max()).max() < 1e-9
    assert np.abs(h - (w @ a) / (w @ a).max()).max() < 1e-9


def test_change_personalization_saturates_and_sums_to_one():
    """s = change / (change + T), NaN (host not in both snapshots) -> 0, then divided by sum s."""
    p = change_personalization(np.array([0.0, 10.0, 30.0, np.nan]), 10.0)
    s = np.array([0.0, 0.5, 0.75, 0.0])
    assert p == pytest.approx(s / s.sum(), abs=1e-15)
    assert np.array_equal(change_personalization(np.array([0.0, np.nan]), 10.0), [0.0, 0.0])
    with pytest.raises(ValueError, match="change scores must be >= 0"):
        change_personalization(np.array([-1.0]), 10.0)


def test_bad_input_is_refused_naming_it():
    adjacency = sp.csr_matrix(([-1.0], ([0], [1])), shape=(2, 2))
    with pytest.raises(ValueError, match=r"link weights must be finite and >= 0: 1 are not, .* on the edge 0 -> 1"):
        personalized_hits(adjacency, np.zeros(2))
    with pytest.raises(ValueError, match="personalization must be 2 finite values"):
        personalized_hits(sp.csr_matrix((2, 2)), np.array([np.nan, 1.0]))
    a, h, _ = personalized_hits(sp.csr_matrix((2, 2)), np.zeros(2))  # no links, no change: zeros, no 0/0
    assert np.array_equal(a, [0, 0]) and np.array_equal(h, [0, 0])


def test_temporal_columns_walk_t1_personalized_on_change():
    """In ``temporal_features``: HitsAuth / HitsHub are eqs. (7)-(8) on t1's 0/1 graph (or its
    link counts with rank_weights: counts), p = the host's saturated change(u) / sum, and
    missing for a host crawled in one snapshot only."""
    a0 = graph_from_edges(5, [(0, 1), (1, 2), (2, 0), (3, 0)]).adjacency
    a1 = np.zeros((5, 5))
    for (u, v), links in {(0, 1): 3, (1, 2): 1, (2, 0): 1, (2, 3): 2, (4, 0): 1, (3, 1): 1}.items():
        a1[u, v] = links  # page links per host edge
    crawled0, crawled1 = np.array([True, True, True, True, False]), np.ones(5, dtype=bool)
    words0, words1 = np.array([10, 20, 30, 40, 0]), np.array([10, 25, 30, 80, 5])
    got = {}
    for weights in ("binary", "counts"):
        f = temporal_features(a0, sp.csr_matrix(a1), crawled0, crawled1, words0, words1,
                              fingerprints=4, hits_c=3.0, change_T=1.0, rank_weights=weights)
        change = f["change"]
        assert np.isnan(change[4]) and np.all(np.isfinite(change[:4]))
        s = np.where(np.isnan(change), 0.0, change / (change + 1.0))
        want_a, want_h = dense_hits(a1 if weights == "counts" else (a1 > 0).astype(float), s / s.sum(), 3.0)
        assert np.abs(f["HitsAuth"][:4] - want_a[:4]).max() < 1e-9
        assert np.abs(f["HitsHub"][:4] - want_h[:4]).max() < 1e-9
        assert np.isnan(f["HitsAuth"][4]) and np.isnan(f["HitsHub"][4])
        want_ppr = dense_ppr(a1 if weights == "counts" else (a1 > 0).astype(float), s / s.sum(), 0.9)
        assert np.abs(f["ChangePPR"][:4] - want_ppr[:4]).max() < 1e-9 and np.isnan(f["ChangePPR"][4])
        got[weights] = f["HitsHub"][:4]
    assert np.abs(got["binary"] - got["counts"]).max() > 1e-3  # the link counts did count


def test_stopping_before_convergence_is_logged(caplog):
    adjacency = sp.csr_matrix(([1.0, 1.0], ([0, 1], [1, 2])), shape=(3, 3))
    with caplog.at_level("WARNING", logger="spamflow_links.hits"):
        _, _, iterations = personalized_hits(adjacency, np.array([0.0, 0.0, 1.0]), 1.0, max_iter=3)
    assert iterations == 3
    assert "personalized HITS stopped after 3 iterations on 3 nodes with a last change of" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="spamflow_links.hits"):
        personalized_hits(adjacency, np.array([0.0, 0.0, 1.0]), 1.0)
    assert caplog.text == ""


@pytest.mark.parametrize("seed", range(4))
def test_change_pagerank_solves_eq_3(seed):
    """PPR_p (section 2.4, eq. 3) on random weighted graphs with dangling nodes equals the dense
    linear solution, at the paper's c = 0.9 and a weak c = 0.15; p = 0 is PageRank with damping
    1 - c (networkx's, on the same graph)."""
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(seed)
    n = 30
    w = np.where(rng.random((n, n)) < 0.1, rng.integers(1, 4, (n, n)), 0).astype(float)
    w[rng.choice(n, 4, replace=False)] = 0.0  # dangling nodes
    np.fill_diagonal(w, 0.0)
    p = np.where(rng.random(n) < 0.3, rng.random(n), 0.0)
    p /= p.sum()
    for c in (0.9, 0.15):
        got = change_pagerank(sp.csr_matrix(w), p, c, tol=1e-14)
        assert np.abs(got - dense_ppr(w, p, c)).max() < 1e-9
        assert got.sum() == pytest.approx(1.0, abs=1e-12)
    plain = change_pagerank(sp.csr_matrix(w), np.zeros(n), 0.15, tol=1e-14)
    graph = nx.from_numpy_array(w, create_using=nx.DiGraph)
    want = nx.pagerank(graph, alpha=0.85, tol=1e-15, max_iter=10_000, weight="weight")
    assert np.abs(plain - np.array([want[i] for i in range(n)])).max() < 1e-9
    with pytest.raises(ValueError, match="c must be in"):
        change_pagerank(sp.csr_matrix(w), p, 0.0)
