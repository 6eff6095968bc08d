"""Incremental scoring (docs/classify.md, "Incremental scoring"): how fast new hosts are
featurised against a model's frozen statistics, and how far their features are from a full
recomputation.

    # accuracy on the demo (a finished `spamflow demo` run): its second snapshot's hosts split
    # into known (3/4) and new (1/4); content and links run on the known hosts, then on the new
    # ones with the known run's statistics, then on all of them (the full recomputation)
    python benchmarks/bench_incremental.py --demo RUN_DIR

    # speed: new hosts against a model of --known hosts (synthetic pages and host graph)
    python benchmarks/bench_incremental.py --known 100000 --new 1000

Prints one JSON object per measurement.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "plugins", ROOT / "workflows", ROOT / "benchmarks"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from spamflow.detector import RunSettings, StageContext, StageOutputs  # noqa: E402
from spamflow_content.detector import ContentDetector  # noqa: E402
from spamflow_content.params import ContentParams  # noqa: E402
from spamflow_links.detector import LinksDetector  # noqa: E402
from spamflow_links.params import LinksParams  # noqa: E402

SNAPSHOT = "2026-02"
FAMILIES = {"content": (ContentDetector, ContentParams, "corpus_stats", "corpus_stats"),
            "links": (LinksDetector, LinksParams, "frozen", "frozen_links")}


def split_hosts(hosts: list[str], every: int = 4) -> tuple[list[str], list[str]]:
    """(known, new): every ``every``-th host in sorted order is new (no hash, no set order)."""
    ordered = sorted(hosts)
    new = ordered[every - 1::every]
    return [h for h in ordered if h not in set(new)], new


def write_part(pages: ds.Dataset, hosts: list[str], folder: Path, snapshot: str = SNAPSHOT) -> Path:
    """The pages of ``hosts`` at ``snapshot`` as one Parquet page table."""
    folder.mkdir(parents=True, exist_ok=True)
    table = pages.to_table(filter=(pc.field("snapshot") == snapshot) & pc.field("host").isin(hosts))
    pq.write_table(table, folder / "part-00000.parquet")
    return folder


def run_detector(family: str, pages: Path, out: Path, settings: dict[str, Any], frozen: Path | None = None) -> Path:
    """One detector over a page table (in this process); its output directory."""
    cls, params_cls, _, param = FAMILIES[family]
    out.mkdir(parents=True)
    params = params_cls(**settings, **({param: str(frozen)} if frozen else {}))
    parse = StageOutputs("parse", pages.parent, {"pages": pages}, {})
    result = cls().run(StageContext(params, {"parse": parse}, out, RunSettings(progress=False)))
    (out / "outputs.json").write_text(json.dumps(result.outputs))
    return out


def host_rows(out: Path, hosts: list[str]) -> dict[str, dict[str, float | None]]:
    """Feature values by host (of ``hosts``) from a detector's hosts.parquet."""
    table = pq.read_table(out / "hosts.parquet").to_pylist()
    keep = set(hosts)
    return {r["host"]: {k: v for k, v in r.items() if k not in ("snapshot", "host")} for r in table if r["host"] in keep}


def compare(a: dict[str, dict], b: dict[str, dict]) -> dict[str, dict[str, float]]:
    """Per feature: mean and max absolute difference and max relative difference (to max(|b|,
    1e-12)) over the hosts of both; NaN/null on both sides counts as equal, on one as a mismatch."""
    out: dict[str, dict[str, float]] = {}
    hosts = sorted(set(a) & set(b))
    for feature in sorted(next(iter(b.values()))):
        x = np.array([np.nan if a[h][feature] is None else a[h][feature] for h in hosts], dtype=np.float64)
        y = np.array([np.nan if b[h][feature] is None else b[h][feature] for h in hosts], dtype=np.float64)
        both = np.isfinite(x) & np.isfinite(y)
        mismatch = int((np.isfinite(x) != np.isfinite(y)).sum())
        diff = np.abs(x[both] - y[both])
        rel = diff / np.maximum(np.abs(y[both]), 1e-12)
        out[feature] = {"mean_abs": float(diff.mean()) if diff.size else 0.0,
                        "max_abs": float(diff.max()) if diff.size else 0.0,
                        "max_rel": float(rel.max()) if rel.size else 0.0, "missing_mismatch": mismatch}
    return out


def demo_runs(pages_dir: Path, work: Path, settings: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Known, incremental and full runs of content and links on the demo's second snapshot:
    ``{"known": [...], "new": [...], family: {"incremental": rows, "full": rows, "seconds": ...}}``."""
    pages = ds.dataset(pages_dir, format="parquet")
    hosts = sorted(set(pages.to_table(columns=["host"], filter=pc.field("snapshot") == SNAPSHOT)["host"].to_pylist()))
    known, new = split_hosts(hosts)
    known_pages = write_part(pages, known, work / "pages-known" / "pages")
    new_pages = write_part(pages, new, work / "pages-new" / "pages")
    all_pages = write_part(pages, hosts, work / "pages-all" / "pages")
    result: dict[str, Any] = {"known": known, "new": new}
    for family, (_, _, output, _) in FAMILIES.items():
        base = run_detector(family, known_pages, work / family / "known", settings.get(family, {}))
        frozen = base / json.loads((base / "outputs.json").read_text())[output]
        started = time.perf_counter()
        inc = run_detector(family, new_pages, work / family / "incremental", settings.get(family, {}), frozen)
        seconds = time.perf_counter() - started
        full = run_detector(family, all_pages, work / family / "full", settings.get(family, {}))
        result[family] = {"incremental": host_rows(inc, new), "full": host_rows(full, new),
                          "frozen_full": host_rows(run_detector(family, all_pages, work / family / "frozen-full",
                                                                settings.get(family, {}), frozen), new),
                          "seconds": seconds}
    return result


def summarise(errors: dict[str, dict[str, float]]) -> dict[str, Any]:
    """The features that differ, worst first, and how many are equal (max_abs 0, no mismatch)."""
    differing = {k: v for k, v in errors.items() if v["max_abs"] > 0 or v["missing_mismatch"]}
    worst = sorted(differing.items(), key=lambda kv: (-kv[1]["max_rel"], kv[0]))
    return {"features": len(errors), "equal": len(errors) - len(differing),
            "differing": {k: {m: float(f"{x:.3g}") for m, x in v.items()} for k, v in worst}}


def demo_scores(run: Path, result: dict[str, Any]) -> dict[str, Any]:
    """The demo classify model's scores of the new hosts from the full run's features, and
    with the content and links columns replaced by the incremental ones: mean and max score
    difference and both AUCs against the generator's labels."""
    from spamflow_ensemble.model import score
    from spamflow_ensemble.persist import load_model
    from spamflow_ensemble.tables import detector_host_tables, join_host_tables

    manifest = json.loads((run / "run.json").read_text())["stages"]
    bundle = load_model(Path(manifest["classify"]["outputs"]["model"]))
    detectors = {n: {k: Path(v) for k, v in s["outputs"].items()} for n, s in manifest.items()
                 if n not in ("classify", "parse", "demo", "ingest", "report", "crawl") and "outputs" in s}
    paths, _ = detector_host_tables(detectors, {n: manifest[n].get("host_tables", {}) for n in detectors})
    table = join_host_tables(paths)
    rows = [i for i, (s, h) in enumerate(zip(table.snapshot, table.host)) if s == SNAPSHOT and h in set(result["new"])]
    hosts = [table.host[i] for i in rows]
    column = {f: j for j, f in enumerate(table.features)}
    features = bundle["features"]

    def matrix(kind: str) -> np.ndarray:
        X = np.full((len(rows), len(features)), np.nan)
        for k, f in enumerate(features):
            family, _, name = f.partition(".")
            if family in FAMILIES and name in result[family][kind][hosts[0]]:
                X[:, k] = [np.nan if (v := result[family][kind][h][name]) is None else v for h in hosts]
            elif f in column:
                X[:, k] = table.X[rows, column[f]]
        return X

    full, inc = score(bundle, matrix("full")), score(bundle, matrix("incremental"))
    labels_file = Path(manifest["demo"]["outputs"]["labels"]) / "hosts.tsv"
    with open(labels_file, encoding="utf-8") as fh:
        spam = {r["host"]: r["label"] == "spam" for r in csv.DictReader(fh, delimiter="\t")}
    from sklearn.metrics import roc_auc_score

    y = [spam[h] for h in hosts]
    return {"hosts": len(hosts), "spam": int(sum(y)), "score_mean_abs_diff": float(np.abs(full - inc).mean()),
            "score_max_abs_diff": float(np.abs(full - inc).max()), "auc_full": float(roc_auc_score(y, full)),
            "auc_incremental": float(roc_auc_score(y, inc))}


def demo_settings(run: Path) -> dict[str, dict[str, Any]]:
    """The demo config's content and links parameters (its trust seeds)."""
    manifest = json.loads((run / "run.json").read_text())["stages"]
    return {f: {k: v for k, v in manifest[f]["params"].items() if k in FAMILIES[f][1].model_fields
                and k not in ("engine", "corpus_stats", "frozen_links")} for f in FAMILIES}


def main_demo(run: Path, work: Path) -> None:
    manifest = json.loads((run / "run.json").read_text())["stages"]
    result = demo_runs(Path(manifest["parse"]["outputs"]["pages"]), work, demo_settings(run))
    print(json.dumps({"known_hosts": len(result["known"]), "new_hosts": len(result["new"])}))
    for family in FAMILIES:
        r = result[family]
        print(json.dumps({"family": family, "seconds": round(r["seconds"], 2),
                          "vs_full": summarise(compare(r["incremental"], r["full"])),
                          "vs_full_with_frozen_statistics": summarise(compare(r["incremental"], r["frozen_full"]))}))
    print(json.dumps({"scores": demo_scores(run, result)}))


# --- speed against a large model ---


def synthetic_links(known: int, new: int, seed: int = 0) -> tuple[Any, Any, np.ndarray]:
    """A frozen power-law host graph of ``known`` hosts (10 links each), and the graph of a
    crawl of ``new`` hosts: 10 links each to known hosts (power law), 3 to other new hosts,
    and 3 in-links each from known hosts (the links the known crawl made to them)."""
    from bench_links import power_law_graph

    from spamflow_links.hostgraph import HostGraph
    from spamflow_links.incremental import freeze
    from spamflow_links.ranks import pagerank, trustrank

    rng = np.random.default_rng(seed)
    a = power_law_graph(known, 10 * known, seed)
    names = np.array([f"k{i:07d}.example" for i in range(known)] + [f"n{i:07d}.example" for i in range(new)],
                     dtype=object)
    src = rng.integers(0, known, size=3 * new)
    targets = np.repeat(np.arange(new), 3)
    uncrawled = pa.table({"source": pa.array(src, pa.int64()),
                          "target": pa.array(names[known + targets].tolist(), pa.string()),
                          "links": pa.array(np.ones(3 * new, np.int64))})
    graph = HostGraph("t", a, np.ones(known, dtype=bool), np.zeros(known, dtype=np.int64), {}, uncrawled)
    seeds = np.zeros(known, dtype=bool)
    seeds[:10] = True
    features = {"pagerank": pagerank(a), "cheirank": pagerank(sp.csr_matrix(a.T)), "trustrank": trustrank(a, seeds)}
    frozen = freeze(graph, names[:known], features, seeds, 0.85, "binary")
    n = known + new
    w = rng.pareto(1.1, known) + 1.0
    rows = np.repeat(np.arange(known, n), 13)
    cols = np.concatenate([rng.choice(known, size=(new, 10), p=w / w.sum()),
                           known + rng.integers(0, new, size=(new, 3))], axis=1).ravel()
    keep = rows != cols
    adjacency = sp.csr_matrix((np.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=(n, n))
    adjacency.sum_duplicates()
    crawled = np.zeros(n, dtype=bool)
    crawled[known:] = True
    new_graph = HostGraph("t", adjacency, crawled, np.zeros(n, dtype=np.int64))
    return frozen, new_graph, names


def full_ranks(union: sp.csr_matrix, seeds: np.ndarray, known: int) -> dict[str, np.ndarray]:
    """PageRank, CheiRank, TrustRank and truncated PageRank recomputed on the whole union graph
    (the binary walk, as the links stage's default), for the error of the incremental ones."""
    from spamflow_links.ranks import Walk, pagerank, truncated_pagerank
    from spamflow_links.static_features import rank_matrix

    w = rank_matrix(union, "binary")
    walk = Walk.of(w)
    pr = pagerank(walk)
    all_seeds = np.zeros(union.shape[0])
    all_seeds[:known] = seeds
    out = {"pagerank": pr, "cheirank": pagerank(Walk.of(w, reverse=True)),
           "trustrank": pagerank(walk, teleport=all_seeds)}
    out.update({f"truncatedpagerank_{t}": v for t, v in truncated_pagerank(walk, 4, pr=pr).items()})
    return out


def rel_errors(got: np.ndarray, want: np.ndarray) -> dict[str, float]:
    """Mean and max relative error of ``got`` against ``want`` (where ``want`` > 0)."""
    ok = want > 0
    rel = np.abs(got[ok] - want[ok]) / want[ok]
    return {"mean_rel": float(f"{rel.mean():.3g}"), "max_rel": float(f"{rel.max():.3g}")}


def main_speed(known: int, new: int, pages_per_host: int, work: Path) -> None:
    from bench_content import make_corpus

    from spamflow_content.corpus import CorpusStats
    from spamflow_content.detector import featurise
    from spamflow_links.incremental import new_host_features, union_graph

    # links: the frozen graph is made once; the timed part is what `score` does per new crawl
    frozen, graph, names = synthetic_links(known, new)
    started = time.perf_counter()
    union, ids = union_graph(frozen, graph, names)
    f = new_host_features(frozen, union, ids, graph.crawled, np.isin(np.arange(len(names)), np.flatnonzero(
        frozen.seeds)), 1e-10)
    links_seconds = time.perf_counter() - started
    assert np.isfinite(f["pagerank"][graph.crawled]).all()
    started = time.perf_counter()
    full = full_ranks(union, frozen.seeds, len(frozen.nodes))
    full_seconds = time.perf_counter() - started
    from spamflow_links.static_features import static_features

    started = time.perf_counter()
    static_features(union, trust_seeds=np.isin(np.arange(len(names)), np.flatnonzero(frozen.seeds)))
    static_seconds = time.perf_counter() - started
    errors = {name: rel_errors(f[name][graph.crawled], full[name][graph.crawled]) for name in full}
    print(json.dumps({"family": "links", "known_hosts": known, "known_edges": int(frozen.adjacency.nnz),
                      "new_hosts": new, "seconds": round(links_seconds, 3),
                      "hosts_per_second": round(new / links_seconds, 1),
                      "full_ranks_seconds": round(full_seconds, 2),
                      "full_static_features_seconds": round(static_seconds, 2), "rank_errors_vs_full": errors}))
    # content: corpus statistics of the known hosts' pages, then the new hosts' pages against them
    corpus = work / "corpus"
    make_corpus(corpus, known + new, pages_per_host)
    everything = ds.dataset(corpus, format="parquet")
    new_names = [f"h{i}.example" for i in range(known, known + new)]
    write_part(everything, new_names, work / "new", snapshot="2026-01")
    started = time.perf_counter()
    known_set = ds.dataset(corpus, format="parquet").filter(~pc.field("host").isin(new_names))
    (work / "known-out").mkdir(parents=True)
    featurise(known_set, work / "known-out", ContentParams(), None, Counter())
    full_seconds = time.perf_counter() - started
    stats = CorpusStats.load(work / "known-out" / "corpus_stats.json")
    (work / "new-out").mkdir()
    started = time.perf_counter()
    featurise(ds.dataset(work / "new", format="parquet"), work / "new-out", ContentParams(), stats, Counter())
    content_seconds = time.perf_counter() - started
    print(json.dumps({"family": "content", "known_hosts": known, "pages_per_host": pages_per_host, "new_hosts": new,
                      "seconds": round(content_seconds, 3), "hosts_per_second": round(new / content_seconds, 1),
                      "known_hosts_full_run_seconds": round(full_seconds, 1)}))
    total = links_seconds + content_seconds
    print(json.dumps({"content_and_links": {"new_hosts": new, "seconds": round(total, 3),
                                            "hosts_per_second": round(new / total, 1)}}))


def main(argv: list[str] | None = None) -> int:
    import tempfile

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--demo", type=Path, help="a finished demo run's workdir: accuracy against a full recomputation")
    p.add_argument("--known", type=int, default=100_000, help="hosts of the model (default 100000)")
    p.add_argument("--new", type=int, default=1000, help="new hosts to score (default 1000)")
    p.add_argument("--pages-per-host", type=int, default=3)
    p.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-incremental-") as tmp:
        work = args.work or Path(tmp)
        if args.demo:
            main_demo(args.demo, work)
        else:
            main_speed(args.known, args.new, args.pages_per_host, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
