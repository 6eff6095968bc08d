"""HSS's check threshold from the data (``t: auto``) and the markup noise (``noise: markup``)
against the paper's t = 35, on real pages.  The figures of docs/hss.md ("t: auto").

Run from the repository root (a minute or two)::

    PYTHONPATH=.:plugins .venv/bin/python benchmarks/eval_hss_threshold.py [--seeds 0 1 2] [--domains 1]

Two crawls, each clustered on its own as one snapshot (``t: auto`` chooses t per crawl, from
that crawl's own cross-domain null, as the stage does):

* **doorways**: the 800 real doorway pages (two real skeletons, one host) and the stitched
  families of ``benchmarks/doorway_families.py`` (real skeletons, bodies of real text
  snippets; ``--domains`` registered domains per family), among the 1,213 honest pages of the
  trafilatura and article-extraction corpora under their own hosts
  (``tests/hss_real_pages.py``).  Printed: within-family pair recall (the lowest family's, and
  over all families' pairs), honest pages in a doorway cluster (a cluster holding a doorway
  page), clusters mixing two families, and the honest pages' cross-site pair rate.
* **data.gov.uk**: the real one-site crawls of warc-samples (data.gov.uk 2014: Drupal and CKAN
  pages; its re-crawl; a ClueWeb09 shop) among the same honest pages, as
  ``benchmarks/eval_hss_real.py`` has them.  Printed: each template's pair recall (a site's
  pages made by one program), foreign pages in their clusters, and cross-site pairs (pairs of
  pages of different honest sites in one cluster, over all such pairs).

Settings (``--settings`` picks some by index): the paper's t = 35 (whole noise), t = 35 with
the markup noise (the default from issue 35 until `markup-urls`), t: auto with either noise (false_edge_rate
0.01, 10^6 null pairs, t in [8, 35]), and t: auto with a beta-binomial fitted to the null's
bulk (tried, not adopted; docs/hss.md) with either noise, and t = 35 with the ``markup-urls``
noise (the default: URL values cut to one mark; docs/hss.md, "Giant listing pages").  ``--families``: the stitched
families' crawl, the dilute families' crawl (``doorway_families.dilute_families``), or both.  Then, per
setting and crawl, what auto saw: the chosen t, K (cross-domain candidate pairs per page),
the null's tail and the expected false edges per page at the chosen t.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import numpy as np
import numpy.typing as npt
from scipy import optimize, stats

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "plugins"), str(REPO / "tests"), str(REPO / "benchmarks")]

import doorway_families  # noqa: E402
import hss_real_pages  # noqa: E402

from spamflow.domains import registered_domain  # noqa: E402
from spamflow.words import html_noise  # noqa: E402
from spamflow_hss.auto_threshold import auto_threshold  # noqa: E402
from spamflow_hss.fingerprint import EMPTY, fingerprint_hashes, orderings  # noqa: E402
from spamflow_hss.markup_noise import page_noise  # noqa: E402
from spamflow_hss.ngram_hash import ngram_hashes  # noqa: E402
from spamflow_hss.params import HSSParams  # noqa: E402
from spamflow_hss.probing import cluster_fingerprints  # noqa: E402

DEFAULTS = HSSParams(t="auto")
DILUTE_PAGES = 40  # pages per dilute family (each page is 0.1-0.4 MB)
N, M, K, P = DEFAULTS.n, DEFAULTS.m, DEFAULTS.k, DEFAULTS.p
SETTINGS = [("t=35, paper noise (the paper)", 35, "paper"), ("t=35, markup noise", 35, "markup"),
            ("t=auto, paper noise", "auto", "paper"), ("t=auto, markup noise", "auto", "markup"),
            ("t=auto with the bulk-fitted null, paper noise", "auto-bulk", "paper"),
            ("t=auto with the bulk-fitted null, markup noise", "auto-bulk", "markup"),
            ("t=35, markup-urls noise", 35, "markup-urls")]


class Page:
    __slots__ = ("domain", "family", "noise", "site", "template")

    def __init__(self, site: str, noise: str, family: str = "", template: str = "") -> None:
        self.site, self.noise, self.family, self.template = site, noise, family, template
        self.domain = registered_domain(site)


def doorway_crawl(domains: int, seed: int, dilute: bool = False) -> list[Page]:
    pages = [Page(p.site, p.noise) for p in hss_real_pages.real_pages()]
    pages += [Page(d.host, html_noise(d.html), d.family)
              for d in doorway_families.doorway_pages(domains=domains, seed=seed, dilute=dilute,
                                                      pages_per_family=DILUTE_PAGES if dilute else 60)]
    return pages


def template_crawl() -> tuple[list[Page], dict[str, list[int]]]:
    """data.gov.uk & co. among the honest pages; the rows of each (site, template)."""
    pages: list[Page] = []
    groups: dict[str, list[int]] = defaultdict(list)
    for name, site in hss_real_pages.TEMPLATE_SITES.items():
        for p in hss_real_pages.warc_pages(name):
            if p.site == site:
                groups[f"{site} {name.split('-20')[-1].split('.warc')[0]} {p.template or '-'}"].append(len(pages))
            pages.append(Page(p.site, p.noise, template=p.template))
    pages += [Page(p.site, p.noise, family="") for p in hss_real_pages.real_pages()]
    return pages, dict(groups)


def fingerprints(pages: list[Page], mode: str, seed: int) -> np.ndarray:
    order = orderings(M, seed)
    return np.stack([fingerprint_hashes(ngram_hashes(page_noise(p.noise, mode), N), order) for p in pages])


def choose(fps: np.ndarray, pages: list[Page], t: int | str, seed: int) -> tuple[int, str]:
    if t not in ("auto", "auto-bulk"):
        return int(t), ""
    a = auto_threshold([(fps, [p.domain for p in pages])], M, DEFAULTS.null_pairs, DEFAULTS.false_edge_rate,
                       DEFAULTS.t_min, DEFAULTS.t_max, seed)
    tail = {s: sum(a.histogram[s + 1:]) / a.pairs for s in (4, 8, 16, 35)}
    if t == "auto-bulk":  # the same sample; t from a beta-binomial fitted to its bulk
        model, fit = bulk_model_tail(a.histogram)
        expected = model * a.candidates_per_page
        chosen = next((s for s in range(DEFAULTS.t_min, DEFAULTS.t_max + 1) if expected[s] <= DEFAULTS.false_edge_rate),
                      DEFAULTS.t_max)
        return chosen, (f"bulk fit: t={chosen}, beta-binomial alpha={fit['alpha']:.3g} beta={fit['beta']:.3g} on "
                        f"matched <= {fit['bulk_max']:.0f}; modelled P(>4)={model[4]:.1e} P(>8)={model[8]:.1e} "
                        f"P(>16)={model[16]:.1e}, K={a.candidates_per_page:.0f}, modelled E(t)={expected[chosen]:.4f}; "
                        f"empirical P(>4)={tail[4]:.1e} P(>8)={tail[8]:.1e} P(>16)={tail[16]:.1e}")
    return a.t, (f"auto: t={a.t} ({a.reason}), K={a.candidates_per_page:.0f} cross-domain pairs/page, "
                 f"{a.pairs} null pairs, P(>4)={tail[4]:.1e} P(>8)={tail[8]:.1e} P(>16)={tail[16]:.1e} "
                 f"P(>35)={tail[35]:.1e}, E(t)={a.expected_false_edges:.4f}")


def bulk_model_tail(histogram: npt.ArrayLike, bulk: float = 0.99) -> tuple[npt.NDArray[np.float64], dict[str, float]]:
    """A robust null (tried for ``t: auto``, not adopted: docs/hss.md): a beta-binomial (m trials, the dimensions) fitted by maximum likelihood to
    the bulk of the histogram only (the pairs matching on at most c dimensions, c the ``bulk``
    quantile, at least 2: the truncated likelihood), and its modelled P(matched > t), t = 0..m.
    The heavy tail (shared templates, the families themselves) does not enter the fit; the
    model says how often unrelated pages match on more than t by chance."""
    counts = np.asarray(histogram, np.float64)
    m = len(counts) - 1
    if counts.sum() == 0:
        return np.zeros(m + 1), {}
    c = max(2, int(np.searchsorted(np.cumsum(counts) / counts.sum(), bulk)))
    s = np.arange(c + 1)
    kept = counts[:c + 1]

    def nll(x: npt.NDArray[np.float64]) -> float:
        a, b = np.exp(x)
        logp = stats.betabinom.logpmf(s, m, a, b)
        return -float((kept * (logp - np.log(stats.betabinom.cdf(c, m, a, b)))).sum())

    mean = float((kept * s).sum() / kept.sum()) / m
    start = np.log([max(mean, 1e-6), 1.0]) + np.log([1.0, 1.0 / max(mean, 1e-6)])
    fit = optimize.minimize(nll, start, method="Nelder-Mead", options={"xatol": 1e-6, "fatol": 1e-9, "maxiter": 2000})
    a, b = np.exp(fit.x)
    tail = stats.betabinom.sf(np.arange(m + 1), m, a, b)
    return tail, {"alpha": float(a), "beta": float(b), "bulk_max": float(c)}


def cross_site(labels: np.ndarray, pages: list[Page], rows: list[int]) -> tuple[int, int]:
    members: dict[int, list[int]] = defaultdict(list)
    for i in rows:
        members[int(labels[i])].append(i)
    merged = sum(pages[a].site != pages[b].site for c in members.values() for a, b in combinations(c, 2))
    by_site: dict[str, int] = defaultdict(int)
    for i in rows:
        by_site[pages[i].site] += 1
    total = len(rows) * (len(rows) - 1) // 2 - sum(n * (n - 1) // 2 for n in by_site.values())
    return merged, total


def family_sims(fps: np.ndarray, pages: list[Page]) -> str:
    """Matched dimensions within a family (median, 5th percentile) and the most across families."""
    rng = np.random.default_rng(0)
    by_family: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(pages):
        if p.family:
            by_family[p.family].append(i)
    within, across = [], []
    names = sorted(by_family)
    for name in names:
        rows = np.array(by_family[name])
        a, b = rng.choice(rows, 300), rng.choice(rows, 300)
        keep = a != b
        within.append(np.count_nonzero((fps[a[keep]] == fps[b[keep]]) & (fps[a[keep]] != EMPTY), axis=1))
    for x, y in combinations(names, 2):
        a, b = rng.choice(by_family[x], 300), rng.choice(by_family[y], 300)
        across.append(np.count_nonzero((fps[a] == fps[b]) & (fps[a] != EMPTY), axis=1).max())
    return " ".join(f"{n} {int(np.median(w))}/{int(np.percentile(w, 5))}" for n, w in zip(names, within)) + \
        f"; across families at most {max(across)}"


def evaluate_doorways(pages: list[Page], labels: np.ndarray) -> str:
    by_family: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(pages):
        if p.family:
            by_family[p.family].append(i)
    recalls, hits, total = {}, 0, 0
    for name, rows in sorted(by_family.items()):
        same = sum(int(labels[a] == labels[b]) for a, b in combinations(rows, 2))
        pairs = len(rows) * (len(rows) - 1) // 2
        recalls[name], hits, total = same / pairs, hits + same, total + pairs
    sizes = np.bincount(labels)
    clusters: dict[int, set[str]] = defaultdict(set)
    for i, p in enumerate(pages):
        if sizes[labels[i]] > 1:
            clusters[int(labels[i])].add(p.family)
    doorway_clusters = {c for c, fams in clusters.items() if fams - {""}}
    honest_in = sum(1 for i, p in enumerate(pages) if not p.family and int(labels[i]) in doorway_clusters)
    mixing = sum(1 for fams in clusters.values() if len(fams - {""}) > 1)
    honest = [i for i, p in enumerate(pages) if not p.family]
    merged, cross = cross_site(labels, pages, honest)
    worst = min(recalls, key=recalls.get)  # type: ignore[arg-type]
    return (f"within-family recall {hits / total:.3f} (lowest {worst} {recalls[worst]:.3f}) | honest pages in "
            f"doorway clusters {honest_in} | clusters mixing families {mixing} | honest cross-site pairs "
            f"{merged}/{cross} = {100 * merged / cross:.3f} %\n      per family: "
            + " ".join(f"{n} {r:.2f}" for n, r in recalls.items()))


def evaluate_templates(pages: list[Page], groups: dict[str, list[int]], labels: np.ndarray) -> str:
    sizes = np.bincount(labels)
    parts = []
    for name, rows in groups.items():
        if len(rows) < 2:
            continue
        same = sum(int(labels[a] == labels[b]) for a, b in combinations(rows, 2)) / (len(rows) * (len(rows) - 1) // 2)
        own = {int(labels[i]) for i in rows if sizes[labels[i]] > 1}
        foreign = sum(1 for i, p in enumerate(pages) if int(labels[i]) in own and p.site != pages[rows[0]].site)
        parts.append(f"{name} ({len(rows)}) {same:.2f}{f' foreign {foreign}' if foreign else ''}")
    honest = [i for i, p in enumerate(pages) if not p.template and p.site not in
              {pages[r[0]].site for r in groups.values()}]
    merged, cross = cross_site(labels, pages, honest)
    return " | ".join(parts) + f" | cross-site pairs {merged}/{cross} = {100 * merged / cross:.3f} %"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0], help="HSS seeds (orderings, probes, null sample)")
    ap.add_argument("--domains", type=int, default=1, help="registered domains per stitched family")
    ap.add_argument("--family-seed", type=int, default=0, help="seed of the stitched families")
    ap.add_argument("--families", nargs="+", default=["stitched", "dilute"], choices=["stitched", "dilute"],
                    help="doorway crawls: the stitched families, the dilute ones (each with the real kit)")
    ap.add_argument("--settings", type=int, nargs="+", help="only these settings (0-based indexes of SETTINGS)")
    args = ap.parse_args()
    if not (doorway_families.available() and hss_real_pages.available() and hss_real_pages.template_sites_available()):
        sys.exit(f"needs the real pages under {hss_real_pages.SHARED_DATA}; it is absent")
    started = time.perf_counter()
    crawls = {kind: doorway_crawl(args.domains, args.family_seed, dilute=kind == "dilute") for kind in args.families}
    templates, groups = template_crawl()
    for kind, doorways in crawls.items():
        print(f"{kind} doorway crawl: {len(doorways)} pages ({sum(bool(p.family) for p in doorways)} doorway pages "
              f"in {len({p.family for p in doorways if p.family})} families, {args.domains} domain(s) per family)")
    print(f"template crawl: {len(templates)} pages; loaded in {time.perf_counter() - started:.0f} s")
    settings = [SETTINGS[i] for i in args.settings] if args.settings else SETTINGS
    for seed in args.seeds:
        for mode in dict.fromkeys(m for _, _, m in settings):
            fds = {kind: fingerprints(doorways, mode, seed) for kind, doorways in crawls.items()}
            ft = fingerprints(templates, mode, seed)
            for kind, fd in fds.items():
                print(f"\nseed {seed}, {mode} noise, {kind} families: matched dimensions within a family "
                      f"(median/5th pct): {family_sims(fd, crawls[kind])}")
            for label, t, setting_mode in settings:
                if setting_mode != mode:
                    continue
                print(f"  {label}")
                for kind, fd in fds.items():
                    td, why_d = choose(fd, crawls[kind], t, seed)
                    print(f"    {kind:<8} t={td}: " + evaluate_doorways(crawls[kind],
                                                                      cluster_fingerprints(fd, K, P, td, seed)))
                    if why_d:
                        print(f"      {why_d}")
                tt, why_t = choose(ft, templates, t, seed)
                print(f"    data.gov.uk t={tt}: " + evaluate_templates(templates, groups,
                                                                       cluster_fingerprints(ft, K, P, tt, seed)))
                if why_t:
                    print(f"      {why_t}")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
