"""HSS clustering quality on real pages, per setting: recall inside real one-template sites
and joins across unrelated sites.  The figures of docs/hss.md ("Real template sites").

Run from the repository root (about a minute per seed and noise)::

    PYTHONPATH=.:plugins .venv/bin/python benchmarks/eval_hss_real.py [--seeds 0 1 2] [--noise paper markup markup-urls]

Pages (../shared/data; the script stops with a message when it is absent):

* template sites, from the real one-site crawls of warc-samples: data.gov.uk 2014 (35 pages:
  28 made by Drupal 7, 7 by CKAN's Genshi templates, as each page says), the same site
  re-crawled minutes later (7 Drupal pages), and a Japanese shop in ClueWeb09 (29 pages);
* background: 1,213 pages of 1,142 sites (trafilatura evaluation corpus and the
  article-extraction benchmark; tests/hss_real_pages.py says how a page's site is found).

Every setting clusters all pages at once (the crawl file's stray pages of other hosts too),
so a page of another site joining a template site's clusters is counted.  Columns:

* ``recall``: pairs of one site's pages in one cluster, over the site's pairs (data.gov.uk
  also by generating software: Drupal / CKAN);
* ``foreign``: pages of other sites in the clusters holding the site's pages;
* ``same-site``: the same recall over the background's 77 same-site pairs;
* ``cross-site``: pairs of pages of different background sites in one cluster, and the
  number of clusters spanning several sites (mostly shared templates: WordPress themes,
  newspaper-chain CMSs; docs/hss.md lists them).

Settings: the default, which is the paper's (whole noise, n = 32, m = 128, k = 1, p = 20,
t = 35), other check thresholds t and ``noise_window`` values; ``graph`` rows take the
connected components of the full thresholded Sim_b graph (all pairs) instead of the
probing, to show what the probing misses.  Then, for data.gov.uk, the similarity between
its Drupal and its CKAN pages (the most matched dimensions, the highest exact Jaccard of
the n-gram sets), and with ``--clusters`` the background's multi-site clusters of a
setting (the default's, or those a window adds).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import numpy as np
from scipy.sparse.csgraph import connected_components

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "plugins"), str(REPO / "tests")]

import hss_real_pages  # noqa: E402

from spamflow_hss.fingerprint import EMPTY, fingerprint_hashes, orderings  # noqa: E402
from spamflow_hss.markup_noise import NOISE_MODES, page_noise  # noqa: E402
from spamflow_hss.noise_window import window_ngram_hashes  # noqa: E402
from spamflow_hss.probing import cluster_fingerprints  # noqa: E402

N, M, K, P = 32, 128, 1, 20
SETTINGS = [  # (label, noise_window, t, procedure)
    ("default = paper", 0, 35, "probe"),
    ("paper, full graph", 0, 35, "graph"),
    ("t=25", 0, 25, "probe"),
    ("t=45", 0, 45, "probe"),
    ("t=3, full graph", 0, 3, "graph"),  # the highest t that joins data.gov.uk's Drupal and CKAN pages
    ("noise_window 4000", 4000, 35, "probe"),
    ("noise_window 4000 graph", 4000, 35, "graph"),
    ("noise_window 8000", 8000, 35, "probe"),
    ("noise_window 16000", 16000, 35, "probe"),
]


def load() -> tuple[list[hss_real_pages.RealPage], dict[str, list[int]], list[int]]:
    """All pages; the rows of each template site (by crawl file); the background rows."""
    pages: list[hss_real_pages.RealPage] = []
    sites: dict[str, list[int]] = {}
    for name, site in hss_real_pages.TEMPLATE_SITES.items():
        crawl = hss_real_pages.warc_pages(name)
        sites[f"{site} ({name.split('.warc')[0]})"] = [len(pages) + i for i, p in enumerate(crawl) if p.site == site]
        pages += crawl
    background = list(range(len(pages), len(pages) + len(hss_real_pages.real_pages())))
    pages += hss_real_pages.real_pages()
    return pages, sites, background


def fingerprints(pages: list[hss_real_pages.RealPage], window: int, seed: int, mode: str = "paper") -> np.ndarray:
    order = orderings(M, seed)
    return np.stack([fingerprint_hashes(window_ngram_hashes(page_noise(p.noise, mode), N, window), order)
                     for p in pages])


def graph_components(fps: np.ndarray, t: int) -> np.ndarray:
    """Connected components of the full graph {(x, y): more than t matched dimensions}."""
    edges = np.zeros((len(fps), len(fps)), bool)
    for start in range(0, len(fps), 64):
        block = fps[start:start + 64, None, :]
        edges[start:start + 64] = np.count_nonzero((block == fps[None]) & (block != EMPTY), axis=2) > t
    return connected_components(edges, directed=False)[1]


def pair_recall(labels: np.ndarray, rows: list[int]) -> float:
    pairs = list(combinations(rows, 2))
    return sum(labels[a] == labels[b] for a, b in pairs) / len(pairs) if pairs else float("nan")


def evaluate(labels: np.ndarray, pages, sites: dict[str, list[int]], background: list[int]) -> dict:
    out: dict = {}
    for name, rows in sites.items():
        own = set(labels[rows].tolist())
        foreign = sum(1 for i, label in enumerate(labels) if label in own and pages[i].site != pages[rows[0]].site
                      and np.count_nonzero(labels == label) > 1)
        by_template = defaultdict(list)
        for i in rows:
            by_template[pages[i].template].append(i)
        out[name] = (pair_recall(labels, rows), foreign,
                     {t: pair_recall(labels, r) for t, r in sorted(by_template.items()) if len(by_template) > 1})
    members: dict[int, list[int]] = defaultdict(list)
    for i in background:
        members[int(labels[i])].append(i)
    cross = sum(pages[a].site != pages[b].site for c in members.values() for a, b in combinations(c, 2))
    multi = [c for c in members.values() if len({pages[i].site for i in c}) > 1]
    by_site: dict[str, list[int]] = defaultdict(list)
    for i in background:
        by_site[pages[i].site].append(i)
    same = [(a, b) for rows in by_site.values() for a, b in combinations(rows, 2)]
    out["background"] = (sum(labels[a] == labels[b] for a, b in same), len(same), cross,
                         len(background) * (len(background) - 1) // 2 - len(same), len(multi), sum(map(len, multi)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0], help="seeds of the orderings and probes")
    ap.add_argument("--noise", nargs="+", default=["paper"], metavar="MODE",
                    help=f"run every setting with each of these noises ({', '.join(NOISE_MODES)}; default: paper)")
    ap.add_argument("--settings", type=int, nargs="+", help="only these settings (0-based indexes of SETTINGS)")
    ap.add_argument("--clusters", type=int, default=None, metavar="WINDOW",
                    help="list the background's multi-site clusters at the first seed: with 0, the default's; "
                         "with a window, those it makes that the default does not")
    args = ap.parse_args()
    if not (hss_real_pages.available() and hss_real_pages.template_sites_available()):
        sys.exit(f"needs the real pages under {hss_real_pages.SHARED_DATA}; it is absent")
    started = time.perf_counter()
    pages, sites, background = load()
    over = {w: sum(len(p.noise) - N + 1 > 2 * w for p in pages) for w in (4000, 16000)}
    print(f"{len(pages)} pages loaded in {time.perf_counter() - started:.0f} s; pages with more than 2 x 4,000 / "
          f"2 x 16,000 n-grams of noise (the ones a window changes): {over[4000]} / {over[16000]}")
    settings = [SETTINGS[i] for i in args.settings] if args.settings else SETTINGS
    for seed, mode in ((seed, mode) for seed in args.seeds for mode in args.noise):
        print(f"\nseed {seed}, {mode} noise")
        cache: dict[int, np.ndarray] = {}
        for label, window, t, procedure in settings:
            if window not in cache:
                cache[window] = fingerprints(pages, window, seed, mode)
            fps = cache[window]
            labels = (graph_components(fps, t) if procedure == "graph"
                      else cluster_fingerprints(fps, K, P, t, seed))
            result = evaluate(labels, pages, sites, background)
            parts = []
            for name, (recall, foreign, by_template) in ((k, v) for k, v in result.items() if k != "background"):
                split = " ".join(f"{t} {r:.2f}" for t, r in by_template.items())
                parts.append(f"{name.split(' (')[0]} {recall:.2f}{f' [{split}]' if split else ''} foreign {foreign}")
            hits, same, cross, cross_total, multi, multi_pages = result["background"]
            print(f"{label:24s} | " + " | ".join(parts) + f" | same-site {hits}/{same} = {hits / same:.2f} | "
                  f"cross-site {cross}/{cross_total} = {100 * cross / cross_total:.3f} %, {multi} multi-site "
                  f"clusters ({multi_pages} pages)", flush=True)
    software_split(pages, sites, args.seeds[0])
    if args.clusters is not None:
        list_clusters(pages, background, args.clusters, args.seeds[0])


def software_split(pages, sites: dict[str, list[int]], seed: int) -> None:
    """For each pair of generating programs of one site: the most dimensions a page of one
    matches a page of the other on, and the highest exact Jaccard of their n-gram sets."""
    fps = fingerprints(pages, 0, seed)
    for name, rows in sites.items():
        by_template = defaultdict(list)
        for i in rows:
            by_template[pages[i].template].append(i)
        sets = {i: np.unique(window_ngram_hashes(pages[i].noise, N, 0)) for i in rows}
        for (ta, ra), (tb, rb) in combinations(sorted(by_template.items()), 2):
            matched = max(int(np.count_nonzero((fps[a] == fps[b]) & (fps[a] != EMPTY))) for a in ra for b in rb)
            jaccard = max(len(np.intersect1d(sets[a], sets[b])) / len(np.union1d(sets[a], sets[b]))
                          for a in ra for b in rb)
            print(f"{name}: {ta} ({len(ra)} pages) against {tb} ({len(rb)} pages): at most {matched}/{M} matched "
                  f"dimensions, exact Jaccard at most {jaccard:.3f}")


def list_clusters(pages, background: list[int], window: int, seed: int) -> None:
    def multi_site(w: int) -> set[frozenset[str]]:
        labels = cluster_fingerprints(fingerprints(pages, w, seed), K, P, 35, seed)
        members: dict[int, set[str]] = defaultdict(set)
        for i in background:
            members[int(labels[i])].add(pages[i].site)
        return {frozenset(s) for s in members.values() if len(s) > 1}

    shown = multi_site(window) - (multi_site(0) if window else set())
    print(f"\nmulti-site clusters of the background at seed {seed}"
          + (f" that noise_window {window} makes and the default does not" if window else "") + f": {len(shown)}")
    for sites in sorted(shown, key=lambda s: (-len(s), sorted(s))):
        print(f"  {len(sites):3d} sites: {', '.join(sorted(sites))}")


if __name__ == "__main__":
    main()
