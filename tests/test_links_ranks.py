"""PageRank, CheiRank, TrustRank, truncated PageRank, 2DRank and kappa against dense linear
algebra (the Google matrix of Eom et al. written out), networkx, and hand-worked examples."""

from __future__ import annotations

import gzip

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from spamflow_links.hostgraph import graph_from_edges
from spamflow_links.ranks import cheirank, kappa, pagerank, rank_index, truncated_pagerank, trustrank, two_d_rank

from conftest import shared_data


def random_graph(n: int, m: int, seed: int) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    return graph_from_edges(n, map(tuple, rng.integers(0, n, (m, 2)))).adjacency


def google_dense(a: np.ndarray, alpha: float, v: np.ndarray) -> np.ndarray:
    """G_ij = alpha S_ij + (1 - alpha) v_i with S column-stochastic (column j = links of j),
    dangling columns replaced by v: the paper's eq. (1) for uniform v."""
    n = len(a)
    s = np.zeros((n, n))
    for j in range(n):
        out = a[j].sum()
        s[:, j] = a[j] / out if out else v
    return alpha * s + (1 - alpha) * np.outer(v, np.ones(n))


def eigvec_at_one(g: np.ndarray) -> np.ndarray:
    vals, vecs = np.linalg.eig(g)
    p = np.real(vecs[:, np.argmin(np.abs(vals - 1))])
    return p / p.sum()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pagerank_and_cheirank_are_the_google_matrix_eigenvectors(seed):
    a = random_graph(40, 90, seed)  # sparse enough to have dangling nodes
    dense = a.toarray()
    assert (dense.sum(axis=1) == 0).any()
    uniform = np.full(40, 1 / 40)
    assert np.allclose(pagerank(a), eigvec_at_one(google_dense(dense, 0.85, uniform)), atol=1e-10)
    assert np.allclose(cheirank(a), eigvec_at_one(google_dense(dense.T, 0.85, uniform)), atol=1e-10)
    assert np.allclose(pagerank(a, 0.5), eigvec_at_one(google_dense(dense, 0.5, uniform)), atol=1e-10)


def test_trustrank_jumps_to_the_seeds_only():
    a = random_graph(30, 70, 5)
    seeds = np.zeros(30, dtype=bool)
    seeds[[0, 3, 7]] = True
    v = seeds / seeds.sum()
    expected = eigvec_at_one(google_dense(a.toarray(), 0.85, v))
    assert np.allclose(trustrank(a, seeds), expected, atol=1e-10)
    with pytest.raises(ValueError, match="seed"):
        trustrank(a, np.zeros(30, dtype=bool))


def test_weighted_edges_split_the_walk_by_weight():
    a = sp.csr_matrix(np.array([[0, 3, 1], [1, 0, 0], [1, 0, 0]], dtype=float))
    expected = eigvec_at_one(google_dense(a.toarray(), 0.85, np.full(3, 1 / 3)))
    assert np.allclose(pagerank(a), expected, atol=1e-12)


def test_agrees_with_networkx_on_a_medium_graph():
    a = random_graph(3000, 15000, 11)
    g = nx.from_scipy_sparse_array(a, create_using=nx.DiGraph)
    nx_pr = nx.pagerank(g, alpha=0.85, tol=1e-12)
    assert np.abs(pagerank(a) - np.array([nx_pr[i] for i in range(3000)])).sum() < 1e-8
    nx_chei = nx.pagerank(g.reverse(), alpha=0.85, tol=1e-12)
    assert np.abs(cheirank(a) - np.array([nx_chei[i] for i in range(3000)])).sum() < 1e-8
    seeds = np.arange(3000) < 30
    nx_tr = nx.pagerank(g, alpha=0.85, tol=1e-12, personalization={i: 1.0 for i in range(30)})
    assert np.abs(trustrank(a, seeds) - np.array([nx_tr[i] for i in range(3000)])).sum() < 1e-8


def test_truncated_pagerank_is_the_series_without_its_first_terms():
    a = random_graph(25, 60, 3)
    n = 25
    s = google_dense(a.toarray(), 1.0, np.full(n, 1 / n))  # alpha = 1: the walk only, dangling -> uniform
    x = np.full(n, 1 / n)
    terms = []
    for t in range(400):
        terms.append(0.15 * 0.85 ** t * x)
        x = s @ x
    got = truncated_pagerank(a, 4)
    for t_max in range(1, 5):
        assert np.allclose(got[t_max], sum(terms[t_max + 1:]), atol=1e-12), t_max
    assert np.allclose(sum(terms), pagerank(a), atol=1e-12)


def test_rank_index_and_two_d_rank_by_hand():
    p = np.array([0.1, 0.4, 0.2, 0.3])        # K = 4, 1, 3, 2
    p_star = np.array([0.5, 0.1, 0.3, 0.1])   # K* = 1, 3, 2, 4 (tie 1 vs 3 broken by id)
    k, k_star = rank_index(p), rank_index(p_star)
    assert k.tolist() == [4, 1, 3, 2] and k_star.tolist() == [1, 3, 2, 4]
    # squares: s=1 none; s=2: none (node1 (1,3) max 3); s=3: node1 (1,3) and node2 (3,2): other 1 < 2;
    # s=4: node0 (4,1) and node3 (2,4): other 1 < 2
    assert two_d_rank(k, k_star).tolist() == [3, 1, 2, 4]


def test_kappa_is_zero_for_uniform_and_positive_when_correlated():
    n = 50
    assert kappa(np.full(n, 1 / n), np.full(n, 1 / n)) == pytest.approx(0.0)
    p = np.arange(1, n + 1, dtype=float)
    p /= p.sum()
    assert kappa(p, p) == pytest.approx(n * (p * p).sum() - 1) and kappa(p, p) > 0


def _read_pajek(path) -> tuple[int, list[tuple[int, int]]]:
    n, edges, arcs = 0, [], False
    with gzip.open(path, "rt", encoding="latin-1") as fh:
        for line in fh:
            low = line.strip().lower()
            if low.startswith("*vertices"):
                n = int(low.split()[1])
            elif low.startswith("*arcs"):
                arcs = True
            elif low.startswith("*"):
                arcs = False
            elif arcs and low:
                u, v = low.split()[:2]
                edges.append((int(u) - 1, int(v) - 1))
    return n, edges


def test_real_web_graph_ranks_agree_with_networkx():
    """Kleinberg's EPA graph (4,772 pages linking to www.epa.gov) from ../shared/data."""
    n, edges = _read_pajek(shared_data("web-graphs-small", "kleinberg-epa.net.gz"))
    assert n == 4772 and len(edges) > 8000
    a = graph_from_edges(n, edges).adjacency
    g = nx.from_scipy_sparse_array(a, create_using=nx.DiGraph)
    for ours, g_nx in ((pagerank(a), g), (cheirank(a), g.reverse())):
        theirs = nx.pagerank(g_nx, alpha=0.85, tol=1e-12)
        # networkx stops when its L1 step is below n * tol; its remaining error is of that order
        assert np.abs(ours - np.array([theirs[i] for i in range(n)])).sum() < 1e-7
    from spamflow_links.static_features import static_features
    f = static_features(a, exact_max_nodes=10000)
    assert np.array_equal(f["indegree"], np.array([g.in_degree(i) for i in range(n)]))
    assert all(np.isfinite(f[c]).any() for c in f if c not in ("trustrank", "trustrank_over_pagerank"))


def test_rank_density_counts_nodes_in_log_cells():
    from spamflow_links.ranks import rank_density

    n = 1000
    k = np.arange(1, n + 1)
    density, edges = rank_density(k, k[::-1], cells=10)
    assert density.sum() == pytest.approx(1.0) and len(edges) == 11 and edges[0] == 1
    # brute force: find each node's cell by searching the cell edges
    expected = np.zeros((10, 10))
    for a, b in zip(k, k[::-1]):
        i = min(int(np.searchsorted(edges, a, side="right")) - 1, 9)
        j = min(int(np.searchsorted(edges, b, side="right")) - 1, 9)
        expected[i, j] += 1 / n
    assert np.allclose(density, expected)
