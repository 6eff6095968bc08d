"""HSS on ~1,200 real pages from ../shared/data (trafilatura evaluation corpus and the
article-extraction benchmark): Sim_b against the exact resemblance of the n-gram sets (the
paper's Figure 1), and clustering by site.  Skips when the shared data is absent."""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations

import hss_real_pages
import numpy as np
import pytest

from spamflow_hss.fingerprint import fingerprint_hashes, matched_dimensions, orderings
from spamflow_hss.ngram_hash import ngram_hashes
from spamflow_hss.probing import ProbeStats, cluster_fingerprints

N, M = 32, 128


@pytest.fixture(scope="module")
def corpus():
    if not hss_real_pages.available():
        pytest.skip(f"needs the real pages under {hss_real_pages.SHARED_DATA} (the shared data folder beside "
                    "the repo); it is absent here")
    pages = hss_real_pages.real_pages()
    order = orderings(M, 0)
    hashes = [ngram_hashes(p.noise, N) for p in pages]
    fingerprints = np.stack([fingerprint_hashes(h, order) for h in hashes])
    return pages, hashes, fingerprints


def _distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values (np.unique is 8x slower on uint64 in numpy 2.4)."""
    ordered = np.sort(values)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered


def _by_site(pages) -> dict[str, list[int]]:
    sites: dict[str, list[int]] = defaultdict(list)
    for i, page in enumerate(pages):
        sites[page.site].append(i)
    return sites


def test_sim_b_estimates_the_exact_resemblance_of_the_ngram_sets(corpus):
    """Per dimension, the two minima agree with probability |A n B n C_i| / |(A u B) n C_i|,
    so Sim_b estimates the Jaccard resemblance J of the n-gram sets, with binomial standard
    deviation sqrt(J (1 - J) / m); the paper's Dice is 2J / (1 + J), estimated by 2S / (1 + S).
    Stated tolerance: every pair within 4 standard deviations + 2/m, bias under 0.005."""
    pages, hashes, fingerprints = corpus
    rng = np.random.default_rng(0)
    pairs = [tuple(idx[:2]) for idx in _by_site(pages).values() if len(idx) >= 2]
    pairs += [tuple(rng.choice(len(pages), 2, replace=False)) for _ in range(300)]
    sets = {i: _distinct(hashes[i]) for pair in pairs for i in pair}
    jaccard, dice, estimate = [], [], []
    for a, b in pairs:
        inter = len(np.intersect1d(sets[a], sets[b], assume_unique=True))
        jaccard.append(inter / (len(sets[a]) + len(sets[b]) - inter))
        dice.append(2 * inter / (len(sets[a]) + len(sets[b])))
        estimate.append(int(matched_dimensions(fingerprints[a], fingerprints[b])) / M)
    j, d, s = map(np.array, (jaccard, dice, estimate))
    assert (j > 0.3).sum() >= 40  # a real range of similarities, not only unrelated pairs
    assert np.all(np.abs(s - j) <= 4 * np.sqrt(j * (1 - j) / M) + 2 / M)
    assert abs(np.mean(s - j)) < 0.005
    assert abs(np.mean(2 * s / (1 + s) - d)) < 0.005
    assert np.quantile(np.abs(2 * s / (1 + s) - d), 0.9) < 0.03
    print(f"{len(pairs)} pairs: mean |Sim_b - J| {np.mean(np.abs(s - j)):.4f}, bias {np.mean(s - j):+.4f}; "
          f"mean |2S/(1+S) - Dice| {np.mean(np.abs(2 * s / (1 + s) - d)):.4f}; mean Sim_b - Dice {np.mean(s - d):+.4f}")


def test_pages_of_one_site_cluster_together_and_unrelated_sites_do_not(corpus):
    pages, _, fingerprints = corpus
    stats = ProbeStats()
    labels = cluster_fingerprints(fingerprints, k=1, p=20, t=35, stats=stats)
    sites = [p.site for p in pages]
    same_site = [(a, b) for idx in _by_site(pages).values() for a, b in combinations(idx, 2)]
    recall = sum(labels[a] == labels[b] for a, b in same_site) / len(same_site)
    members: dict[int, list[int]] = defaultdict(list)
    for i, label in enumerate(labels):
        members[int(label)].append(i)
    clusters = [c for c in members.values() if len(c) > 1]
    clustered = sum(len(c) for c in clusters)
    purity = sum(max(sum(sites[i] == s for i in c) for s in {sites[i] for i in c}) for c in clusters) / clustered
    cross_pairs_merged = sum(sites[a] != sites[b] for c in clusters for a, b in combinations(c, 2))
    cross_pairs = math.comb(len(pages), 2) - len(same_site)
    print(f"{len(pages)} pages, {len(set(sites))} sites, {len(same_site)} same-site pairs: pairwise recall {recall:.3f}; "
          f"{len(clusters)} clusters of {clustered} pages, purity by site {purity:.3f}; "
          f"cross-site pairs merged {cross_pairs_merged}/{cross_pairs} = {cross_pairs_merged / cross_pairs:.5f}")
    assert recall >= 0.75
    assert cross_pairs_merged / cross_pairs < 0.002
