"""PageRank, CheiRank, TrustRank, truncated PageRank, 2DRank and kappa against dense linear
algebra (the Google matrix of Eom et al. written out), networkx, and hand-worked examples."""

from __future__ import annotations

import gzip
import io
import tracemalloc
import zipfile
from collections.abc import Iterable

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from spamflow_links.hostgraph import graph_from_edges
from spamflow_links.ranks import (
    Walk,
    cheirank,
    kappa,
    pagerank,
    power_iteration,
    rank_index,
    truncated_pagerank,
    trustrank,
    two_d_rank,
)
from spamflow_links.static_features import static_features

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


def _read_pajek_lines(lines: Iterable[str]) -> tuple[int, list[tuple[int, int]]]:
    n, edges, arcs = 0, [], False
    for line in lines:
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


def _read_pajek(path) -> tuple[int, list[tuple[int, int]]]:
    with gzip.open(path, "rt", encoding="latin-1") as fh:
        return _read_pajek_lines(fh)


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
    f = static_features(a, exact_max_nodes=10000)
    assert np.array_equal(f["indegree"], np.array([g.in_degree(i) for i in range(n)]))
    assert all(np.isfinite(f[c]).any() for c in f if "trustrank" not in c)  # no seeds: every TrustRank one missing


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


# --- Link counts: the ranks walk the 0/1 host graph unless rank_weights: counts ---

ALPHA = 0.85
HAND_LINKS = {(0, 1): 3, (0, 2): 1, (1, 0): 1, (2, 0): 1}
"""Page links between hosts 0..3: host 0 links to host 1 from three pages and to host 2 from one;
1 and 2 link back; host 3 has no links at all (a dangling node)."""


def hand_graph() -> sp.csr_matrix:
    rows, cols = zip(*HAND_LINKS)
    return sp.csr_matrix((list(HAND_LINKS.values()), (rows, cols)), shape=(4, 4), dtype=np.float64)


def hand_ranks(share_of_1: float) -> dict[str, np.ndarray]:
    """PageRank, CheiRank and TrustRank (seed: host 1) of the hand graph worked out on paper, for
    alpha = 0.85, when host 0's walk goes to host 1 with probability ``share_of_1`` (0/1 graph:
    1/2; link counts: 3/4) and to host 2 otherwise.

    PageRank: the dangling host 3 spreads its mass uniformly, so every host gets the same base
    c = (1 - a)/4 + a p3/4, and host 3 gets nothing else: p3 = c, hence c = (1 - a)/(4 - a).
    Then p0 = c + a (p1 + p2) and p1 + p2 = 2c + a p0, so p0 = c (1 + 2a)/(1 - a^2),
    p1 = c + a s p0, p2 = c + a (1 - s) p0.
    CheiRank (the reversed graph): 1 and 2 each link only to 0, 0 links once to each, and 3 is
    still dangling, so it is the PageRank above with s = 1/2 whatever the link counts.
    TrustRank: jumps and dangling mass go to host 1, which host 3 never reaches: t3 = 0,
    t0 = a (t1 + t2) = a (1 - t0), so t0 = a/(1 + a), t1 = (1 - a) + a s t0, t2 = a (1 - s) t0."""
    a = ALPHA

    def pagerank_of(s: float) -> np.ndarray:
        c = (1 - a) / (4 - a)
        p0 = c * (1 + 2 * a) / (1 - a * a)
        return np.array([p0, c + a * s * p0, c + a * (1 - s) * p0, c])

    t0 = a / (1 + a)
    trust = np.array([t0, (1 - a) + a * share_of_1 * t0, a * (1 - share_of_1) * t0, 0.0])
    return {"pagerank": pagerank_of(share_of_1), "cheirank": pagerank_of(0.5), "trustrank": trust}


RANK_COLUMNS = ("pagerank", "cheirank", "trustrank")
HAND_SEEDS = np.array([False, True, False, False])


def test_ranks_ignore_link_counts_by_default_on_a_hand_built_graph():
    binary, counts = hand_ranks(1 / 2), hand_ranks(3 / 4)
    for expected in (binary, counts):
        assert all(v.sum() == pytest.approx(1.0, abs=1e-12) for v in expected.values())
    default = static_features(hand_graph(), trust_seeds=HAND_SEEDS, tol=1e-14)
    for name in RANK_COLUMNS:
        assert np.allclose(default[name], binary[name], rtol=0, atol=1e-12), name
    weighted = static_features(hand_graph(), trust_seeds=HAND_SEEDS, tol=1e-14, rank_weights="counts")
    for name in RANK_COLUMNS:
        assert np.allclose(weighted[name], counts[name], rtol=0, atol=1e-12), name
    assert abs(default["pagerank"][1] - weighted["pagerank"][1]) > 0.09  # the counts do move the walk
    # by default not one feature depends on how many page links a host edge stands for
    pattern = hand_graph()
    pattern.data[:] = 1.0
    same = static_features(pattern, trust_seeds=HAND_SEEDS, tol=1e-14)
    for name, values in default.items():
        assert np.array_equal(values, same[name], equal_nan=True), name
    with pytest.raises(ValueError, match="rank_weights"):
        static_features(hand_graph(), rank_weights="pages")  # type: ignore[arg-type]


def test_the_links_stage_ranks_the_host_graph_as_configured(tmp_path):
    """The hand graph as a page table (host a = 0 ... d = 3) through the links detector."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pydantic import ValidationError

    from spamflow.detector import RunSettings, StageContext, StageOutputs
    from spamflow_links.detector import LinkFeatures
    from spamflow_links.params import LinksParams

    hosts = ["a.example", "b.example", "c.example", "d.example"]
    pages = []  # host 0's three links to host 1 are on three different pages
    for (src, dst), count in HAND_LINKS.items():
        for page in range(count):
            pages.append((f"{hosts[src]}", f"http://{hosts[src]}/{dst}-{page}", [f"http://{hosts[dst]}/x"]))
    pages.append(("d.example", "http://d.example/", []))
    link = pa.struct([("url", pa.string()), ("anchor", pa.string()), ("nofollow", pa.bool_())])
    folder = tmp_path / "pages"
    folder.mkdir()
    pq.write_table(pa.table({
        "snapshot": ["2026-01"] * len(pages), "url": [p[1] for p in pages], "host": [p[0] for p in pages],
        "domain": [p[0] for p in pages], "words": pa.array([["w"]] * len(pages), pa.list_(pa.string())),
        "links": pa.array([[{"url": u, "anchor": "", "nofollow": False} for u in p[2]] for p in pages],
                          pa.list_(link))}), folder / "part-00000.parquet")
    parse = StageOutputs("parse", tmp_path, {"pages": folder}, {})
    settings = RunSettings(progress=False)
    for rank_weights, share in ((None, 1 / 2), ("counts", 3 / 4)):  # None: the default, binary
        chosen = {} if rank_weights is None else {"rank_weights": rank_weights}
        params = LinksParams(tol=1e-14, trust_seeds=["b.example"], **chosen)
        outdir = tmp_path / str(rank_weights)
        outdir.mkdir()
        LinkFeatures().run(StageContext(params, {"parse": parse}, outdir, settings))
        table = pq.read_table(outdir / "hosts.parquet").to_pydict()
        assert table["host"] == hosts
        for name, expected in hand_ranks(share).items():
            assert np.allclose(table[name], expected, rtol=0, atol=1e-12), (rank_weights, name)
    with pytest.raises(ValidationError, match="rank_weights"):
        LinksParams(rank_weights="pages")


def _read_polblogs() -> tuple[int, list[tuple[int, int]]]:
    """Adamic & Glance's political blogs (Pajek, 1-based arcs; the file's partition section
    after the arcs is skipped)."""
    path = shared_data("web-graphs-small", "polblogs-2005.paj.zip")
    with zipfile.ZipFile(path) as archive, archive.open("polBlogs.paj") as raw:
        return _read_pajek_lines(io.TextIOWrapper(raw, encoding="latin-1"))


def test_real_blog_graph_with_repeated_links_ranks_like_networkx():
    """polblogs-2005 (1,490 blogs, 19,090 arcs; 65 blog pairs already linked twice) with more
    links added between every tenth pair: by default PageRank, CheiRank and TrustRank equal
    networkx on the simple DiGraph (multiplicity ignored); with rank_weights: counts they equal
    networkx with weight = link count. Dangling blogs (no out-links) spread their mass
    uniformly, and to the seeds for TrustRank, in both: networkx's dangling=None."""
    n, arcs = _read_polblogs()
    assert n == 1490 and len(arcs) == 19090
    arcs = [(u, v) for u, v in arcs if u != v]  # the host graph has no self-links
    pairs = sorted(set(arcs))
    extra = [pair for i, pair in enumerate(pairs) if i % 10 == 0 for _ in range(1 + (i // 10) % 5)]
    multi = arcs + extra
    src, dst = np.array(multi).T
    a = sp.csr_matrix((np.ones(len(multi)), (src, dst)), shape=(n, n))
    a.sum_duplicates()  # entry = number of links, as the host graph stores it
    assert a.nnz == len(pairs) and a.data.sum() == len(multi) and (a.data > 1).sum() > 1900  # 2 to 7 links

    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    coo = a.tocoo()
    g.add_weighted_edges_from(zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()), weight="count")
    assert g.number_of_edges() == len(pairs)
    dangling = sum(1 for v in g if g.out_degree(v) == 0)
    assert dangling > 400  # the dangling convention matters here
    seeds = np.zeros(n, dtype=bool)
    seeds[::75] = True
    features = {}
    for label, weight in (("default", None), ("counts", "count")):
        features[label] = (static_features(a, trust_seeds=seeds, tol=1e-12) if label == "default" else
                           static_features(a, trust_seeds=seeds, tol=1e-12, rank_weights="counts"))
        theirs = {
            "pagerank": nx.pagerank(g, alpha=0.85, tol=1e-13, max_iter=1000, weight=weight),
            "cheirank": nx.pagerank(g.reverse(), alpha=0.85, tol=1e-13, max_iter=1000, weight=weight),
            "trustrank": nx.pagerank(g, alpha=0.85, tol=1e-13, max_iter=1000, weight=weight,
                                     personalization={int(i): 1.0 for i in np.flatnonzero(seeds)}),
        }
        for name in RANK_COLUMNS:
            # networkx stops when its L1 step is below n * tol = 1.5e-10, so it is within
            # about alpha / (1 - alpha) times that (~1e-9) of the fixed point; ours is closer
            distance = np.abs(features[label][name] - np.array([theirs[name][i] for i in range(n)])).sum()
            assert distance < 1e-8, (label, name, distance)
    for name in RANK_COLUMNS:  # the two variants really differ on this graph
        assert np.abs(features["default"][name] - features["counts"][name]).sum() > 1e-3, name


# --- Speed: the ranks walk the edges as given, with no copy of them ---

def dense_power_iteration(a: np.ndarray, alpha: float, v: np.ndarray, tol: float) -> tuple[np.ndarray, int]:
    """The power iteration p <- G p on the dense Google matrix, stopping at the same L1 rule."""
    g = google_dense(a, alpha, v)
    p, iterations, err = v.copy(), 0, np.inf
    while err >= tol and iterations < 1000:
        new = g @ p
        err = np.abs(new - p).sum()
        p, iterations = new, iterations + 1
    return p / p.sum(), iterations


def test_power_iteration_takes_the_dense_iterations_to_the_same_vector():
    a = random_graph(200, 500, 7)
    dense = a.toarray()
    assert (dense.sum(axis=1) == 0).any()
    seeds = np.zeros(200)
    seeds[[3, 50, 120]] = 1.0
    for v, teleport in ((np.full(200, 1 / 200), None), (seeds / 3, seeds)):
        expected, expected_iterations = dense_power_iteration(dense, 0.85, v, 1e-10)
        got, iterations = power_iteration(Walk.of(a), 0.85, teleport, 1e-10, 1000)
        assert iterations == expected_iterations and 20 < iterations < 200
        assert np.abs(got - expected).sum() < 1e-13


def test_a_walk_steps_along_or_against_the_weighted_links_by_hand():
    """A: 0 -> 1 (weight 3), 0 -> 2 (1), 1 -> 0 (1); node 2 has no out-link. x = (0.2, 0.3, 0.5).
    Forward, out-weights (4, 1, 0): node 0 gets 0.3 from 1; node 1 gets 3/4 of 0.2, node 2 1/4 of
    it; node 2's 0.5 is dangling mass. Reversed, in-weights (1, 3, 1): node 0 gets all of 1's 0.3
    (3 of 3) and of 2's 0.5; node 1 gets all of 0's 0.2; nothing is dangling."""
    a = sp.csr_matrix(np.array([[0, 3, 1], [1, 0, 0], [0, 0, 0]], dtype=np.float64))
    x = np.array([0.2, 0.3, 0.5])
    forward, backward = Walk.of(a), Walk.of(a, reverse=True)
    assert np.allclose(forward.step(x, np.empty(3)), [0.3, 0.15, 0.05], rtol=0, atol=1e-15)
    assert forward.dangling.tolist() == [2] and forward.dangling_mass(x) == 0.5
    assert np.allclose(backward.step(x, np.empty(3)), [0.8, 0.2, 0.0], rtol=0, atol=1e-15)
    assert backward.dangling.tolist() == [] and backward.dangling_mass(x) == 0.0


def test_ranks_allocate_nothing_the_size_of_the_edges():
    """The walk uses the adjacency's own CSR arrays: no normalised or transposed copy of the m
    edges (on 10^7 edges each copy cost ~0.2 s and 120 MB). Peak allocations stay at a few
    n-vectors, far below the edges' 8 bytes each."""
    a = random_graph(1000, 300_000, 0)
    assert a.nnz > 250_000 and a.dtype == np.float64
    seeds = np.arange(1000) < 10
    runs = {"pagerank": lambda: pagerank(a), "cheirank": lambda: cheirank(a),
            "trustrank": lambda: trustrank(a, seeds), "truncated_pagerank": lambda: truncated_pagerank(a)}
    for name, run in runs.items():
        tracemalloc.start()
        try:
            run()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < a.data.nbytes / 4, (name, peak)
    walk = Walk.of(a)
    assert np.shares_memory(walk.matrix.data, a.data)
    # one shared walk gives exactly what the matrix gives
    pr = pagerank(walk)
    assert np.array_equal(pr, pagerank(a))
    assert np.array_equal(trustrank(walk, seeds), trustrank(a, seeds))
    shared, own = truncated_pagerank(walk, pr=pr), truncated_pagerank(a)
    assert all(np.array_equal(shared[t], own[t]) for t in range(1, 5))


@pytest.mark.parametrize("bad", [-1.0, np.nan, np.inf])
def test_a_bad_link_weight_is_named_with_its_edge(bad):
    a = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 2], [1, 0, 0]], dtype=np.float64))
    a.data[2] = bad  # the edge 1 -> 2
    for run in (lambda: pagerank(a), lambda: cheirank(a), lambda: trustrank(a, np.array([True, False, False])),
                lambda: truncated_pagerank(a), lambda: static_features(a, rank_weights="counts")):
        with pytest.raises(ValueError, match=r"finite and >= 0: 1 are not, the first is .* on the edge 1 -> 2"):
            run()


def test_a_non_square_matrix_is_refused():
    with pytest.raises(ValueError, match=r"must be square .*\(3, 4\)"):
        pagerank(sp.csr_matrix((3, 4)))
