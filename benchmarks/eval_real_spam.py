"""A host-level benchmark on real pages (issue 35 item 3): build a labelled crawl from real pages
only, write it as WARC, run the whole DAG with every detector, and measure per detector and for
the ensemble how well hosts are told apart.

The crawl (``build_corpus``; every choice drawn from ``random.Random(seed)``):

* **spam, the real kit**: the 800 real doorway pages of ``doorway-spam-gambling`` (PROVENANCE.md)
  on their one host ``umsid16.github.io``, as published;
* **spam, stitched doorway families**: :mod:`doorway_families` (real skeletons, bodies stitched
  from 20-60-word snippets of real text), each family on ``--family-domains`` registered domains
  of its own, renamed to plausible host names (no "doorway" in them, ordinary TLDs);
* **spam, an affiliate network**: ``--network`` hosts on as many registered domains, like lapsed
  business domains turned casino-affiliate pages.  Each host's pages are a real page's skeleton
  (a page of ``html-trafilatura-eval`` whose host is then left out of the honest set; two hosts
  per skeleton, so no template spans three domains) with a body stitched from real text as
  above, a block of casino-affiliate links ``https://<brand>/visit/?bta=<BTA>&nci=<n>`` and the
  operator's ids in the head: the same ``bta`` on every host, the AdSense publisher id
  ``ca-pub-…`` on two thirds of them, a ``GTM-…`` container on the others and a ``UA-…`` id on
  every third (:data:`NETWORK_IDS`);
* **honest**: the pages of ``html-trafilatura-eval`` (990 with a URL), ``html-article-extraction-
  benchmark`` (181) and the real pages of ``html-mozilla-readability`` whose source names its
  URL (``rel=canonical`` / ``og:url``: 70 of 130) under their original URLs and hosts.

Labels: a host is spam if it carries a spam page (no host carries both).  Outputs in ``--out``:
``corpus/real-spam.warc.gz`` (WARC/1.1 responses with HTTP headers, one IP per host),
``labels.csv`` (host,label), ``truth.json`` (host -> label, kind, family), ``spamflow.yaml``, the
run's workdir, and ``results.json`` (every figure printed).

Run (from the repository root; a few minutes on 2 cores)::

    export PYTHONPATH=$PWD:$PWD/plugins:$PWD/workflows
    python benchmarks/eval_real_spam.py --out out/eval-real

``--detectors`` picks the detectors (default: every one ``spamflow detectors`` lists but
``classify``: once the ``ids`` plugin is installed it is included by itself).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import html as html_lib
import io
import json
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import doorway_families as dwf  # noqa: E402

SHARED = dwf.SHARED_DATA
TRAF = SHARED / "html-trafilatura-eval"
ARTICLE = SHARED / "html-article-extraction-benchmark"
READABILITY = dwf.READABILITY
KIT_IP = "185.199.108.153"  # GitHub Pages
SNAPSHOT_DATE = "2026-01-15T10:00:00Z"

# the network operator's identifiers (made up for the benchmark; forms as affiliate programs use them)
NETWORK_IDS = {"bta": "41237", "adsense": "ca-pub-7364519082736451", "gtm": "GTM-K7Q3ZP4", "ua": "UA-83920417-1"}
CASINO_BRANDS = ("www.spinpalace-casino.example", "www.royalreels-casino.example", "www.jackpotcity-play.example",
                 "www.luckynugget-casino.example")
NETWORK_KEYWORDS = ("best online casino bonus", "no deposit casino bonus", "free spins no deposit",
                    "online slots real money", "casino welcome bonus", "live roulette online", "blackjack online",
                    "new online casinos")
# plausible names for spam hosts (lapsed business domains, generated sites)
NAME_WORDS = ("harbour", "oak", "valley", "bright", "north", "stone", "river", "maple", "summit", "cedar", "lake",
              "green", "silver", "meadow", "park", "bridge", "hill", "crown", "forest", "coast", "field", "mill",
              "garden", "west", "sun", "rose", "pine", "bay", "brook", "vista")
NAME_TRADES = ("dental", "joinery", "bakery", "motors", "plumbing", "studio", "consulting", "florist", "builders",
               "law", "travel", "print", "fitness", "kitchens", "roofing", "cafe", "media", "design")
TLDS = ("com", "net", "org", "co.uk", "de", "info", "com.au", "fr")
READABILITY_UNIT_CASES = re.compile(r"^(\d{3}|base-url|basic-tags|clean-links|comment-inside|data-url|hidden-nodes|"
                                    r"invalid-attr|js-link|keep-|lazy-image|links-in-tables|metadata-content|"
                                    r"missing-paragraphs|normalize-spaces|ol$|parsely|remove-|reordering|replace-|"
                                    r"rtl-|schema-org|social-buttons|style-tags|svg-parsing|table-style|title-|"
                                    r"toc-missing|visibility-hidden)")
_WAYBACK = re.compile(r"^https?://web\.archive\.org/web/\d+[a-z_]*/")
_CANONICAL = (re.compile(r"<link[^>]+rel=[\"']canonical[\"'][^>]*href=[\"'](https?://[^\"']+)", re.I),
              re.compile(r"<link[^>]+href=[\"'](https?://[^\"']+)[\"'][^>]*rel=[\"']canonical", re.I),
              re.compile(r"<meta[^>]+property=[\"']og:url[\"'][^>]*content=[\"'](https?://[^\"']+)", re.I))


@dataclass(frozen=True)
class Page:
    host: str
    url: str
    label: str  # spam | nonspam
    kind: str  # kit | family | network | trafilatura | article | readability
    family: str
    html: bytes


def available() -> bool:
    return dwf.available() and (TRAF / "trafilatura-tests-html.tar.xz").exists() and (ARTICLE / "html.tar").exists()


def _host(url: str) -> str:
    from spamflow.domains import host_of

    return host_of(url)


def ip_of(host: str) -> str:
    """One stable IP per host (the kit's is GitHub Pages')."""
    if host == dwf.KIT_HOST:
        return KIT_IP
    d = hashlib.sha1(host.encode()).digest()
    return f"10.{d[0]}.{d[1]}.{d[2] or 1}"


# ---------------------------------------------------------------------------------------------- honest pages
def trafilatura_rows() -> list[tuple[str, str, str]]:
    """(url, host, member) of the trafilatura pages with a URL, by URL (37 rows name none:
    ``hard::<file>``; 21 are Wayback Machine copies: their original URL is used)."""
    rows = []
    for line in (TRAF / "index.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        url, _listed, folder, name, _ = line.split("\t")
        url = _WAYBACK.sub("", url)
        if url.startswith(("http://", "https://")) and _host(url):
            rows.append((url, _host(url), f"{folder}/{name}"))
    return sorted(rows)


def honest_pages(limit: int | None = None, skeletons: list[tuple[str, str, str]] = ()) -> tuple[list[Page], list[Page]]:
    """The honest corpora under their own URLs (``limit``: at most that many pages of each),
    leaving out the hosts of ``skeletons`` (trafilatura rows), and those rows' pages."""
    pages: list[Page] = []
    skip_hosts = frozenset(h for _, h, _ in skeletons)
    rows = [r for r in trafilatura_rows() if r[1] not in skip_hosts][:limit]
    wanted = {m for _, _, m in [*rows, *skeletons]}
    bodies = dwf.archive_members(TRAF / "trafilatura-tests-html.tar.xz", wanted.__contains__, len(wanted))
    pages += [Page(h, u, "nonspam", "trafilatura", "", bodies[m]) for u, h, m in rows if m in bodies]
    skeleton_pages = [Page(h, u, "nonspam", "skeleton", "", bodies[m]) for u, h, m in skeletons]
    art = []
    for line in (ARTICLE / "index.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        ident, url, host, *_ = line.split("\t")
        if host.lower() not in skip_hosts:
            art.append((url, host.lower(), f"html/{ident}.html.gz"))
    art = sorted(art)[:limit]
    wanted = {m for _, _, m in art}
    bodies = dwf.archive_members(ARTICLE / "html.tar", wanted.__contains__, len(wanted))
    pages += [Page(h, u, "nonspam", "article", "", gzip.decompress(bodies[m])) for u, h, m in art if m in bodies]
    found = 0
    sources = dwf.archive_members(READABILITY, lambda name: name.endswith("/source.html"))
    for name in sorted(sources):
        parts = name.split("/")
        if len(parts) != 3 or READABILITY_UNIT_CASES.match(parts[1]):
            continue
        body = sources[name]
        text = body.decode("utf-8", "replace")
        url = next((m.group(1) for rx in _CANONICAL for m in [rx.search(text)] if m), None)
        if url is None or _host(html_lib.unescape(url)) in skip_hosts or (limit is not None and found >= limit):
            continue
        url = html_lib.unescape(url)
        found += 1
        pages.append(Page(_host(url), url, "nonspam", "readability", parts[1], body))
    return pages, skeleton_pages


# ------------------------------------------------------------------------------------------------ spam pages
def _names(rng: random.Random, count: int, taken: set[str]) -> list[str]:
    out = []
    while len(out) < count:
        name = f"www.{rng.choice(NAME_WORDS)}{rng.choice(NAME_WORDS)}-{rng.choice(NAME_TRADES)}.{rng.choice(TLDS)}"
        if name not in taken:
            taken.add(name)
            out.append(name)
    return out


def family_pages(rng: random.Random, pages_per_family: int, domains: int, seed: int, taken: set[str]) -> list[Page]:
    """:func:`doorway_families.stitched_families`, hosts renamed (same path)."""
    pages = dwf.stitched_families(pages_per_family, domains=domains, seed=seed)
    rename = dict(zip(sorted({p.host for p in pages}), _names(rng, len({p.host for p in pages}), taken)))
    return [Page(rename[p.host], p.url.replace(f"//{p.host}/", f"//{rename[p.host]}/", 1), "spam", "family",
                 p.family, p.html.encode("utf-8")) for p in pages]


def network_ids_of(i: int) -> dict[str, str]:
    """The ids network host ``i`` carries: ``bta`` always, AdSense on two thirds, GTM on the
    others, UA on every third (so every id spans several domains and each host has 2-3)."""
    ids = {"bta": NETWORK_IDS["bta"]}
    ids["adsense" if i % 3 else "gtm"] = NETWORK_IDS["adsense" if i % 3 else "gtm"]
    if i % 3 == 1:
        ids["ua"] = NETWORK_IDS["ua"]
    return ids


def _network_head(ids: dict[str, str]) -> str:
    out = []
    if "adsense" in ids:
        out.append('<script async src="https://pagead2.googlesyndication.com/pagead/js/adsbygoogle.js?client='
                   f'{ids["adsense"]}" crossorigin="anonymous"></script>')
    if "gtm" in ids:
        out.append("<script>(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':new Date().getTime(),"
                   "event:'gtm.js'});var f=d.getElementsByTagName(s)[0],j=d.createElement(s);j.async=true;"
                   "j.src='https://www.googletagmanager.com/gtm.js?id='+i;f.parentNode.insertBefore(j,f);"
                   f"}})(window,document,'script','dataLayer','{ids['gtm']}');</script>")
    if "ua" in ids:
        out.append(f"<script>ga('create', '{ids['ua']}', 'auto'); ga('send', 'pageview');</script>")
    return "\n".join(out)


def _affiliate_block(rng: random.Random, bta: str) -> str:
    items = []
    for brand in rng.sample(CASINO_BRANDS, 3):
        nci = rng.randint(5000, 5999)
        name = brand.split(".")[1].split("-")[0].capitalize()
        items.append(f'<li><a href="https://{brand}/visit/?bta={bta}&amp;nci={nci}" rel="nofollow sponsored">'
                     f"{name} casino: claim the welcome bonus</a></li>")
    return '<div class="top-casinos"><h3>Top rated casinos</h3><ul>' + "".join(items) + "</ul></div>"


def network_pages(rng: random.Random, skeleton_pages: list[Page], hosts: int, taken: set[str]) -> list[Page]:
    """``hosts`` network hosts, two per skeleton, 3-6 pages each (module docstring)."""
    names = _names(rng, hosts, taken)
    out = []
    for i, host in enumerate(names):
        skeleton = skeleton_pages[(i // 2) % len(skeleton_pages)]
        ids = network_ids_of(i)
        markup = skeleton.html.decode("utf-8", "replace")
        head = _network_head(ids) + "\n</head>"
        for j in range(rng.randint(3, 6)):
            keyword = rng.choice(NETWORK_KEYWORDS)
            body = _affiliate_block(rng, ids["bta"]) + "\n" + dwf._body(rng, rng.randint(10, 30))
            page = dwf.stitch(markup, body, keyword.title())
            page = re.sub(r"</head>", lambda _m, head=head: head, page, count=1, flags=re.I)
            slug = keyword.replace(" ", "-")
            path = "" if j == 0 else f"{slug}-{j}/"
            out.append(Page(host, f"https://{host}/{path}", "spam", "network", f"net-{skeleton.host}",
                            page.encode("utf-8")))
    return out


def network_skeletons(rng: random.Random, count: int) -> list[tuple[str, str, str]]:
    """Trafilatura rows (url, host, member) whose pages serve as network skeletons: 20-200 KB
    pages, one per host, drawn at random."""
    sizes = {}
    for line in (TRAF / "index.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        url, host, folder, name, size = line.split("\t")
        sizes[f"{folder}/{name}"] = int(size)
    rows = trafilatura_rows()
    per_host: dict[str, list] = {}
    for r in rows:
        per_host.setdefault(r[1], []).append(r)
    pool = [rs[0] for rs in per_host.values() if len(rs) == 1 and 20_000 <= sizes.get(rs[0][2], 0) <= 200_000]
    return rng.sample(sorted(pool), count)


# ------------------------------------------------------------------------------------------------- the corpus
def build_corpus(out: Path, seed: int = 0, kit_pages: int | None = None, pages_per_family: int = 24,
                 family_domains: int = 4, network: int = 12, honest_limit: int | None = None,
                 max_pages_per_host: int | None = None) -> dict[str, Any]:
    """Write ``out/corpus/real-spam.warc.gz``, ``out/labels.csv`` and ``out/truth.json``; return
    the truth (host -> label, kind, family) with page counts.  ``max_pages_per_host`` keeps each
    host's first pages only (1: every host one page, so host size separates nothing)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    rng = random.Random(seed)
    skeleton_rows = network_skeletons(rng, max(1, (network + 1) // 2)) if network else []
    honest, skeletons = honest_pages(honest_limit, skeleton_rows)
    taken = {p.host for p in honest} | {dwf.KIT_HOST}
    kit = [Page(p.host, p.url, "spam", "kit", p.family, p.html.encode("utf-8"))
           for p in (dwf.kit_pages() if kit_pages is None else dwf.kit_pages()[::max(1, 800 // kit_pages)][:kit_pages])]
    families = family_pages(rng, pages_per_family, family_domains, seed, taken) if pages_per_family else []
    net = network_pages(rng, skeletons, network, taken) if network else []
    pages, seen, per_host = [], set(), Counter[str]()
    for p in [*kit, *families, *net, *honest]:
        if p.url not in seen and (max_pages_per_host is None or per_host[p.host] < max_pages_per_host):
            seen.add(p.url)  # a URL in two corpora is crawled once
            per_host[p.host] += 1
            pages.append(p)
    truth: dict[str, dict[str, Any]] = {}
    for p in pages:
        t = truth.setdefault(p.host, {"label": p.label, "kind": p.kind, "family": p.family, "pages": 0})
        if t["label"] != p.label:
            raise ValueError(f"host {p.host} has spam and honest pages")
        t["pages"] += 1
    (out / "corpus").mkdir(parents=True, exist_ok=True)
    with open(out / "corpus" / "real-spam.warc.gz", "wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="WARC/1.1")
        for n, p in enumerate(pages):
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(p.html)))],
                                    protocol="HTTP/1.1")
            record_id = f"<urn:uuid:{hashlib.sha1(f'{seed}/{n}/{p.url}'.encode()).hexdigest()[:32]}>"
            record = writer.create_warc_record(p.url, "response", payload=io.BytesIO(p.html), http_headers=http,
                                               warc_headers_dict={"WARC-Date": SNAPSHOT_DATE,
                                                                  "WARC-IP-Address": ip_of(p.host),
                                                                  "WARC-Record-ID": record_id})
            writer.write_record(record)
    with open(out / "labels.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["host", "label"])
        w.writerows((h, t["label"]) for h, t in sorted(truth.items()))
    (out / "truth.json").write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return truth


# -------------------------------------------------------------------------------------------------- the run
def default_detectors() -> list[str]:
    """Every detector the installed plugins offer for a crawl (``spamflow detectors``) but
    ``classify``: not those that read a published host graph (``requires: hostgraph``)."""
    from spamflow.plugins import get_plugins

    detectors = get_plugins().detectors
    return [n for n in detectors.names() if n != "classify" and "hostgraph" not in detectors[n].cls.requires]


DETECTOR_PARAMS: dict[str, dict[str, Any]] = {
    "quilt": {"foreign": "domain"},  # sources on another registered domain (docs/fired.md: for whole honest sites)
    "hss": {"t": "auto"},  # issue 35 item 1 (noise: the default, markup-urls)
    "spin": {"dictionary": ["package:spamflow.demo/texts/spin-dictionary.txt"]},
}


def write_config(out: Path, detectors: list[str], params: dict[str, dict[str, Any]]) -> Path:
    import yaml

    config = {"workdir": "run", "input": {"warc": ["corpus/*.warc.gz"]}, "mapreduce": {"runner": "inline"},
              "workers": 2,
              "detectors": {**{d: params.get(d, {}) for d in detectors},
                            "classify": {"labels": "labels.csv", "group_by": "domain", "library": "fast"}}}
    path = out / "spamflow.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def run_dag(config_path: Path) -> tuple[dict[str, Any], dict[str, float]]:
    from spamflow.config import load_config
    from spamflow.detector import RunSettings
    from spamflow.plugins import get_plugins
    from spamflow_workflows import run_pipeline

    plugins = get_plugins()
    config = load_config(config_path, plugins)
    outcome = run_pipeline(config, plugins, RunSettings(runner="inline", workers=2, progress=False))
    if not outcome.ok:
        raise SystemExit(f"the run failed: {outcome.summary}\n{outcome.errors}")
    manifest = json.loads(outcome.manifest.read_text())
    return manifest, {n: float(s.get("seconds", 0)) for n, s in manifest["stages"].items()}


# ------------------------------------------------------------------------------------------------- figures
def _prf(fired: set[str], truth: dict[str, dict[str, Any]]) -> dict[str, Any]:
    spam = {h for h, t in truth.items() if t["label"] == "spam"}
    tp = len(fired & spam)
    return {"fired": len(fired), "tp": tp, "precision": tp / len(fired) if fired else None,
            "recall": tp / len(spam) if spam else None,
            "false_positives": sorted(fired - spam)}


def detector_evidence(manifest: dict[str, Any], truth: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per detector: the hosts it fires on (the report's rule: docs/fired.md), precision and
    recall of that, and the AUC of its fired column as a score (hosts without a row: 0)."""
    import numpy as np
    import pyarrow.parquet as pq

    from spamflow.plugins import get_plugins
    from spamflow.report.host_columns import FiredRule, HostColumns, declared_columns, host_table_output
    from spamflow.report.render import answers
    from spamflow_ensemble.fastauc import auc

    plugins = get_plugins()
    stages = manifest["stages"]
    out = {}
    hosts = sorted(truth)
    y = np.array([truth[h]["label"] == "spam" for h in hosts], dtype=float)
    for name, record in stages.items():
        if name in ("ingest", "parse", "report", "classify") or "outputs" not in record:
            continue
        columns = [c for _, c in answers(plugins, "spamflow_report_host_columns", HostColumns, stage=name,
                                         record=record)] or [c for c in (declared_columns(record),) if c]
        rule: FiredRule | None = columns[0].fired if columns else None
        if rule is None:
            out[name] = {"rule": "never fires (features only, docs/fired.md)"}
            continue
        table = pq.read_table(record["outputs"][host_table_output(record)]).to_pydict()
        value = dict(zip(table["host"], table[rule.column]))
        fired = {h for h, v in value.items() if v is not None and v > rule.above and h in truth}
        score = np.array([float(value.get(h) or 0) for h in hosts])
        out[name] = {"rule": f"{rule.column} > {rule.above:g}", **_prf(fired, truth), "auc": float(auc(y, score))}
    return out


# content features that read the language or the words of a page (docs/content.md): measures 7-22
# (corpus/query precision and recall: English word lists) in every block, and the BM25 vectors
EASY_MEASURES = range(7, 23)


def easy_content_feature(name: str) -> bool:
    m = re.fullmatch(r"content\.(HST|HMG|AVG|STD)_(\d+)", name)
    if m:
        return (int(m.group(2)) - 1) % 24 + 1 in EASY_MEASURES
    return name.startswith("content.") and not re.fullmatch(r"content\.(pages|sampled_pages)", name)


def ensemble_variants(manifest: dict[str, Any], truth: dict[str, dict[str, Any]], labels: Path,
                      variants: list[str], seed: int, jobs: int = 1,
                      inner_folds: int = 5, done: Any = None) -> dict[str, dict[str, Any]]:
    """Out-of-fold ensemble scores per host (5 outer folds grouped by registered domain: the
    ``spamflow evaluate`` protocol; each fold's model is ``spamflow train``'s, with its default
    threshold, the best-F1 cut of its training hosts' out-of-fold scores) for each variant:
    ``all``, ``no-content`` (the content detector left out), ``content-lean`` (content's
    language/keyword features left out), ``no-content-obvious``."""
    import numpy as np

    from spamflow_ensemble.dataset import row_groups, row_labels, to_binary
    from spamflow_ensemble.fastauc import auc
    from spamflow_ensemble.labels import read_labels
    from spamflow_ensemble.model import train
    from spamflow_ensemble.selection import EnsembleSelection, make_folds
    from spamflow_ensemble.tables import detector_host_tables, join_host_tables

    stages = manifest["stages"]
    detectors = [n for n in stages if n not in ("ingest", "parse", "report", "classify") and "outputs" in stages[n]]
    paths, _ = detector_host_tables({n: {k: Path(v) for k, v in stages[n]["outputs"].items()} for n in detectors},
                                    {n: stages[n].get("host_tables", {}) for n in detectors})
    table = join_host_tables(paths)
    mask, y = to_binary(row_labels(table, read_labels(labels)))
    table = table.rows(mask)
    groups = row_groups(table.host, "domain")
    results = {}
    for variant in variants:
        keep = [j for j, f in enumerate(table.features)
                if not ((variant in ("no-content", "no-content-obvious") and f.startswith("content."))
                        or (variant == "no-content-obvious" and f.startswith("obvious."))
                        or (variant == "content-lean" and easy_content_feature(f)))]
        rows = table.columns(keep)
        started = time.time()
        score = np.zeros(len(y))
        above = np.zeros(len(y), dtype=bool)
        thresholds = []
        for train_idx, test_idx in make_folds(y, groups, 5, seed + 1):
            bundle = train(rows.rows(np.isin(np.arange(len(y)), train_idx)), y[train_idx], groups[train_idx],
                           EnsembleSelection(library="fast", n_folds=inner_folds, random_state=seed,
                                             n_jobs=jobs, progress=False))
            X = rows.X[test_idx][:, [rows.features.index(f) for f in bundle["features"]]]
            score[test_idx] = bundle["estimator"].predict_proba(X)[:, 1]
            above[test_idx] = score[test_idx] >= bundle["threshold"]
            thresholds.append(round(bundle["threshold"], 4))
        fired = {h for h, a in zip(rows.host, above) if a}
        fp = sorted((h for h in fired if truth[h]["label"] == "nonspam"), key=lambda h: -score[rows.host.index(h)])
        top_honest = sorted(((float(s), h) for s, h, lab in zip(score, rows.host, y) if not lab), reverse=True)[:5]
        results[variant] = {"auc": float(auc(y, score)), **_prf(fired, truth), "thresholds": thresholds,
                            "features": len(rows.features), "false_positives": [
                                {"host": h, "score": round(float(score[rows.host.index(h)]), 4),
                                 "kind": truth[h]["kind"]} for h in fp],
                            "top_honest": [{"host": h, "score": round(s, 4)} for s, h in top_honest],
                            "missed": sorted(h for h, a, lab in zip(rows.host, above, y) if lab and not a),
                            "seconds": round(time.time() - started, 1)}
        if done is not None:
            done(results)
        print(f"  ensemble {variant}: AUC {results[variant]['auc']:.4f}, {time.time() - started:.0f} s", flush=True)
    return results


def _fmt(v: Any) -> str:
    return "—" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def print_table(results: dict[str, Any]) -> None:
    print(f"\n{'what':28} {'fires on':>8} {'precision':>9} {'recall':>7} {'AUC':>6}  false positives")
    for name, r in results["detectors"].items():
        if "fired" not in r:
            print(f"{name:28} {r['rule']}")
            continue
        print(f"{name:28} {r['fired']:>8} {_fmt(r['precision']):>9} {_fmt(r['recall']):>7} {_fmt(r['auc']):>6}  "
              f"{', '.join(r['false_positives'][:6])}{' …' if len(r['false_positives']) > 6 else ''}")
    for name, r in results["ensemble"].items():
        fps = ", ".join(f"{f['host']} ({f['score']})" for f in r["false_positives"][:6])
        print(f"{'ensemble ' + name:28} {r['fired']:>8} {_fmt(r['precision']):>9} {_fmt(r['recall']):>7} "
              f"{_fmt(r['auc']):>6}  {fps}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("out/eval-real"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--detectors", nargs="+", help="detectors to run (default: every installed one but classify)")
    ap.add_argument("--params", type=json.loads, default={},
                    help='JSON {detector: {param: value}} merged over the defaults (e.g. \'{"hss": {"t": 35}}\')')
    ap.add_argument("--kit-pages", type=int, help="real kit pages (default all 800)")
    ap.add_argument("--pages-per-family", type=int, default=24)
    ap.add_argument("--family-domains", type=int, default=4)
    ap.add_argument("--network", type=int, default=12)
    ap.add_argument("--honest-limit", type=int, help="at most this many pages of each honest corpus")
    ap.add_argument("--max-pages-per-host", type=int,
                    help="keep each host's first N pages (1: host size carries no signal; default all)")
    ap.add_argument("--variants", nargs="+", default=["all", "content-lean", "no-content"],
                    choices=["all", "content-lean", "no-content", "no-content-obvious"])
    ap.add_argument("--jobs", type=int, default=1, help="processes for the ensemble's model fits")
    ap.add_argument("--inner-folds", type=int, default=3,
                    help="the ensemble's embedded folds inside each outer fold (classify's default is 5; 3 keeps "
                         "the three variants' 5 outer folds to minutes)")
    args = ap.parse_args(argv)
    if not available():
        raise SystemExit(f"needs the real corpora under {SHARED}")
    times: dict[str, float] = {}
    t0 = time.time()
    args.out.mkdir(parents=True, exist_ok=True)
    truth = build_corpus(args.out, args.seed, args.kit_pages, args.pages_per_family, args.family_domains,
                         args.network, args.honest_limit, args.max_pages_per_host)
    times["build corpus"] = time.time() - t0
    kinds: dict[str, list[int]] = {}
    for t in truth.values():
        kinds.setdefault(t["kind"], [0, 0])[0] += 1
        kinds[t["kind"]][1] += t["pages"]
    print("corpus: " + "; ".join(f"{k} {h} hosts / {p} pages" for k, (h, p) in sorted(kinds.items())), flush=True)
    detectors = args.detectors or default_detectors()
    params = {d: {**DETECTOR_PARAMS.get(d, {}), **args.params.get(d, {})} for d in detectors}
    config = write_config(args.out, detectors, params)
    print(f"detectors: {', '.join(detectors)}; config {config}", flush=True)
    t1 = time.time()
    manifest, stage_seconds = run_dag(config)
    times["DAG"] = time.time() - t1
    for name, s in stage_seconds.items():
        print(f"  stage {name}: {s:.1f} s", flush=True)
    t2 = time.time()
    evidence = detector_evidence(manifest, truth)
    partial: dict[str, Any] = {"corpus": {k: {"hosts": h, "pages": p} for k, (h, p) in sorted(kinds.items())},
                               "detectors": evidence, "stage_seconds": stage_seconds}

    def write(more: dict[str, Any]) -> None:
        partial.update(more)
        (args.out / "results.json").write_text(json.dumps(partial, indent=1) + "\n", encoding="utf-8")

    ensemble = ensemble_variants(manifest, truth, args.out / "labels.csv", args.variants, args.seed, args.jobs,
                                 args.inner_folds, lambda r: write({"ensemble": r}))
    times["evaluation"] = time.time() - t2
    classify = json.loads(Path(manifest["stages"]["classify"]["outputs"]["evaluation"]).read_text()) \
        if "evaluation" in manifest["stages"]["classify"]["outputs"] else {}
    results = {"seed": args.seed, "detectors_run": detectors, "params": params,
               "corpus": {k: {"hosts": h, "pages": p} for k, (h, p) in sorted(kinds.items())},
               "hosts": len(truth), "spam_hosts": sum(t["label"] == "spam" for t in truth.values()),
               "detectors": evidence, "ensemble": ensemble,
               "classify_stage": {k: classify.get(k) for k in ("threshold", "auc", "baseline_auc") if k in classify},
               "stage_seconds": stage_seconds, "seconds": {k: round(v, 1) for k, v in times.items()}}
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print_table(results)
    print("\ntime: " + ", ".join(f"{k} {v:.0f} s" for k, v in times.items()) + f"; results {args.out / 'results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
