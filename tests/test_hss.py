"""HSS (Urvoy et al. 2006): n-gram hashes, Procedure 1 and Sim_b against hand-worked
examples and a brute-force Python reference; Procedure 2 against the full thresholded
similarity graph; the measured miss rate of the probing against P_miss."""

from __future__ import annotations

import math
import unicodedata

import numpy as np
import pytest

from spamflow_hss.cluster_table import centroid
from spamflow_hss.fingerprint import (
    EMPTY,
    Orderings,
    fingerprint,
    fingerprint_hashes,
    matched_dimensions,
    orderings,
    sim_b,
)
from spamflow_hss.ngram_hash import MASK64, ngram_hashes, reference_ngram_hash
from spamflow_hss.probing import ProbeStats, cluster_fingerprints, components, p_miss, probe_check_edges, probe_subsets

E = int(EMPTY)


def _hand_orderings() -> Orderings:
    return Orderings(m=4, seed=-1, masks=np.array([0, 0xFF, 0, 1], np.uint64),
                     rotations=np.array([1, 2, 3, 4], np.uint64))


def test_procedure_1_hand_worked():
    # hashes 5, 9, 13 fall in dimension 1 (h mod 4), 6 and 2 in dimension 2; 0 and 3 stay empty.
    # sigma_1(x) = rotate_left(x ^ 0xFF, 2): 5 -> 250 -> 1000, 9 -> 246 -> 984, 13 -> 242 -> 968
    # sigma_2(x) = rotate_left(x ^ 0, 3):    6 -> 48, 2 -> 16
    hashes = np.array([5, 9, 6, 13, 2], np.uint64)
    assert fingerprint_hashes(hashes, _hand_orderings()).tolist() == [E, 968, 16, E]
    assert fingerprint_hashes(np.array([], np.uint64), _hand_orderings()).tolist() == [E] * 4


def test_bit_shuffle_wraps_around():
    # 2**63 + 1 is in dimension 1: XOR 0xFF gives 2**63 + 254; rotating left by 2 sends bit 63 to bit 1
    order = _hand_orderings()
    x = np.array([(1 << 63) + 1], np.uint64)
    assert order.permute(x, np.array([1])).tolist() == [254 * 4 + 2]
    assert order.shuffle(1)[63] == 1 and sorted(order.shuffle(1)) == list(range(64))


def test_sim_b_hand_worked_and_empty_dimensions_never_match():
    a = np.array([1, 2, E, 4], np.uint64)
    b = np.array([1, 3, E, 4], np.uint64)
    assert matched_dimensions(a, b) == 2 and sim_b(a, b) == 0.5  # dimension 2 is empty in both: no match
    assert sim_b(np.full(4, EMPTY), np.full(4, EMPTY)) == 0.0
    stack = np.stack([a, b, np.array([9, 9, 9, 9], np.uint64)])
    assert matched_dimensions(stack, a).tolist() == [3, 2, 0]  # a against itself: its 3 non-empty dimensions


@pytest.mark.parametrize("text", ["<a href=\"\">-- </a>\n\t" * 5, "«» — \u00a0<>" * 9 + "😀<<>>", "short"])
def test_ngram_hashes_match_the_definition(text):
    n = 8
    expected = [reference_ngram_hash(text[j:j + n], n) for j in range(len(text) - n + 1)]
    assert ngram_hashes(text, n).tolist() == expected


def test_procedure_1_matches_a_brute_force_reference():
    rng = np.random.default_rng(3)
    text = "".join(rng.choice(list('<>="/ \n\t-.;:&#_')) for _ in range(3000))
    n, m, seed = 32, 128, 7
    order = orderings(m, seed)
    reference: list[int | None] = [None] * m
    for j in range(len(text) - n + 1):
        h = reference_ngram_hash(text[j:j + n], n)          # preHash(s)
        i = h % m                                            # i := h mod m
        x, shuffled = h ^ int(order.masks[i]), 0             # sigma_i = bit shuffle o XOR mask
        for bit, target in enumerate(order.shuffle(i)):
            shuffled |= (x >> bit & 1) << target
        if reference[i] is None or shuffled < reference[i]:  # if h' < V[i] then V[i] := h'
            reference[i] = shuffled
    got = fingerprint(text, n, m, seed).tolist()
    assert got == [E if r is None else r for r in reference]
    assert all(0 <= v <= MASK64 for v in got)


def test_orderings_depend_on_the_seed_only():
    assert orderings(16, 1) is orderings(16, 1)
    assert not np.array_equal(orderings(16, 1).masks, orderings(16, 2).masks)
    assert (orderings(128, 0).rotations >= 1).all() and (orderings(128, 0).rotations <= 63).all()


def test_p_miss_is_the_papers_formula_and_p_t_512_keeps_it_under_1_percent():
    for p, t in ((20, 35), (16, 32), (10, 52), (8, 64), (32, 16)):
        paper = math.comb(128 - p, t) / math.comb(128, t)
        product = math.prod((128 - t - i) / (128 - i) for i in range(p))  # C(m-t, p) / C(m, p)
        assert p_miss(128, 1, p, t) == pytest.approx(paper, rel=1e-12) == pytest.approx(product, rel=1e-12)
        assert p * t >= 512 and p_miss(128, 1, p, t) < 0.01
    assert p_miss(128, 1, 5, 35) > 0.01
    with pytest.raises(ValueError):
        p_miss(4, 1, 5, 2)


def _planted_pairs(rng: np.random.Generator, pairs: int, m: int, matched: int) -> np.ndarray:
    """2 * pairs random fingerprints; pair q (rows 2q, 2q+1) agrees on ``matched`` random dimensions."""
    fps = rng.integers(0, 1 << 62, size=(2 * pairs, m), dtype=np.uint64)
    for q in range(pairs):
        dims = rng.choice(m, matched, replace=False)
        fps[2 * q + 1, dims] = fps[2 * q, dims]
    return fps


@pytest.mark.parametrize("k,p", [(1, 10), (2, 60)])
def test_measured_miss_rate_agrees_with_p_miss(k, p):
    m, matched, pairs, trials = 128, 20, 3000, 3
    rng = np.random.default_rng(11 + k)
    missed = 0
    for trial in range(trials):
        fps = _planted_pairs(rng, pairs, m, matched)
        edges = probe_check_edges(fps, probe_subsets(m, k, p, seed=trial), t=matched - 1)
        found = {(min(a, b), max(a, b)) for a, b in edges.tolist()}
        missed += sum((2 * q, 2 * q + 1) not in found for q in range(pairs))
    expected = p_miss(m, k, p, matched)
    sd = math.sqrt(expected * (1 - expected) / (pairs * trials))
    assert abs(missed / (pairs * trials) - expected) < 4 * sd, (missed / (pairs * trials), expected)


def _templates(rng: np.random.Generator, sizes: list[int], m: int, shared: int) -> tuple[np.ndarray, list[int]]:
    """Pages of templates (each agrees with its template on ``shared`` random dimensions) and
    unrelated pages (size 1 entries); returns the fingerprints and the template of each page."""
    rows, truth = [], []
    for label, size in enumerate(sizes):
        base = rng.integers(0, 1 << 62, size=m, dtype=np.uint64)
        for _ in range(size):
            page = rng.integers(0, 1 << 62, size=m, dtype=np.uint64)
            dims = rng.choice(m, shared, replace=False)
            page[dims] = base[dims]
            rows.append(page)
            truth.append(label)
    return np.stack(rows), truth


def _brute_force_components(fps: np.ndarray, t: int) -> np.ndarray:
    """Connected components of the full graph {(x, y): Sim_b(x, y) > t/m}."""
    matched = matched_dimensions(fps[:, None, :], fps[None, :, :])
    x, y = np.nonzero(np.triu(matched > t, 1))
    return components(len(fps), np.stack([x, y], axis=1))


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    return len(set(zip(a.tolist(), b.tolist()))) == len(set(a.tolist())) == len(set(b.tolist()))


def test_procedure_2_finds_the_components_of_the_full_similarity_graph():
    rng = np.random.default_rng(5)
    fps, truth = _templates(rng, [40, 25, 10, 3, 2] + [1] * 60, 128, shared=100)
    stats = ProbeStats()
    labels = cluster_fingerprints(fps, k=1, p=20, t=35, seed=1, stats=stats)
    assert _same_partition(labels, _brute_force_components(fps, 35))
    assert _same_partition(labels, np.array(truth))
    for a, b in probe_check_edges(fps, probe_subsets(128, 1, 20, 1), 35):
        assert matched_dimensions(fps[a], fps[b]) > 35  # every edge passed the check
    # buckets of at most max_representatives pages are checked pair by pair, as Procedure 2 says
    assert stats.checks <= 20 * sum(size * (size - 1) // 2 for size in (40, 25, 10, 3, 2))


@pytest.mark.parametrize("block", [1, 7, 1 << 16])
def test_pairs_are_checked_a_block_at_a_time_with_the_same_edges(monkeypatch, block):
    """probing.matches copies CHECK_PAIRS pairs' rows at a time (memory at 10^6 pages); the
    edges and labels are those of checking every pair at once, and of the brute force."""
    import spamflow_hss.probing as probing

    rng = np.random.default_rng(9)
    fps, _ = _templates(rng, [30, 12, 5, 2] + [1] * 20, 128, shared=100)
    subsets = probe_subsets(128, 1, 20, 2)
    expected = probe_check_edges(fps, subsets, 35)
    monkeypatch.setattr(probing, "CHECK_PAIRS", block)
    a, b = rng.integers(0, len(fps), 500), rng.integers(0, len(fps), 500)
    assert probing.matches(fps, a, b, 35).tolist() == [matched_dimensions(fps[i], fps[j]) > 35
                                                       for i, j in zip(a.tolist(), b.tolist())]
    assert np.array_equal(probe_check_edges(fps, subsets, 35), expected)
    assert _same_partition(cluster_fingerprints(fps, 1, 20, 35, seed=2), _brute_force_components(fps, 35))


def test_small_buckets_are_checked_pair_by_pair_and_catch_worms():
    """A chain (a "worm", Figure 3): each page is similar to its neighbours only.  Every
    page shares one probe value, so one bucket holds the chain; checked pair by pair (the
    bucket is under max_representatives) it is one cluster, with the representative check
    alone it would break."""
    rng = np.random.default_rng(4)
    chain = [rng.integers(0, 1 << 62, size=128, dtype=np.uint64)]
    for _ in range(9):
        page = rng.integers(0, 1 << 62, size=128, dtype=np.uint64)
        keep = rng.choice(128, 60, replace=False)
        page[keep] = chain[-1][keep]
        chain.append(page)
    fps = np.stack(chain)
    fps[:, 0] = 7
    assert _same_partition(_brute_force_components(fps, 35), np.zeros(10, np.int64))
    labels = components(10, probe_check_edges(fps, np.array([[0]]), t=35, max_representatives=64))
    assert len(set(labels.tolist())) == 1
    split = components(10, probe_check_edges(fps, np.array([[0]]), t=35, max_representatives=2))
    assert len(set(split.tolist())) > 1


def test_a_big_bucket_costs_linear_checks_thanks_to_quasi_transitivity():
    rng = np.random.default_rng(8)
    fps, _ = _templates(rng, [3000], 128, shared=110)
    stats = ProbeStats()
    labels = cluster_fingerprints(fps, k=1, p=20, t=35, stats=stats)
    assert len(set(labels.tolist())) == 1
    assert stats.max_rounds <= 2 and stats.checks <= 20 * 3000  # all pairs would be 20 * 4.5 million


def test_max_representatives_caps_a_bucket_of_unrelated_pages():
    rng = np.random.default_rng(9)
    fps = rng.integers(0, 1 << 62, size=(500, 128), dtype=np.uint64)
    fps[:, 0] = 42  # one shared value: every probe on dimension 0 gives one bucket of unrelated pages
    stats = ProbeStats()
    edges = probe_check_edges(fps, np.array([[0]]), t=35, stats=stats, max_representatives=10)
    assert len(edges) == 0
    assert stats.max_rounds == 10 and stats.checks == sum(499 - r for r in range(10))
    assert stats.unchecked == 500 - 10 - 1


def test_k_subsets_are_distinct_and_p_cannot_exceed_them():
    subsets = probe_subsets(10, 2, 45, seed=0)
    assert len({tuple(s) for s in subsets.tolist()}) == 45 and (subsets[:, 0] < subsets[:, 1]).all()
    with pytest.raises(ValueError):
        probe_subsets(10, 2, 46, seed=0)


def test_centroid_is_the_member_most_similar_to_the_others():
    rng = np.random.default_rng(2)
    fps, _ = _templates(rng, [12], 64, shared=40)
    got = centroid(fps, rng)
    totals = [sum(int(matched_dimensions(fps[i], fps[j])) for j in range(12) if j != i) for i in range(12)]
    assert got.index == int(np.argmax(totals))
    expected_mean = np.mean([int(matched_dimensions(fps[got.index], fps[j])) / 64 for j in range(12) if j != got.index])
    assert got.mean_similarity == pytest.approx(expected_mean)
    assert got.similarities[got.index] == 1.0


@pytest.mark.parametrize("html", ['<p class="x">Hi 2 you, Zoë</p>\n', "«Cafe\u0301\u00a0— 日本_x» ½ ² ٣", "a😀\U00010000b𑀅𑁄_x", "plain"])
def test_html_noise_drops_exactly_the_alphanumeric_characters(html):
    """Section 3.1: every alphanumeric character goes (with the combining marks of letters), all else stays."""
    from spamflow.words import html_noise

    expected = "".join(c for c in html if not (c.isalnum() or unicodedata.category(c).startswith("M")))
    assert html_noise(html) == expected
