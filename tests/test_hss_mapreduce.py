"""HSS probe/check as a MapReduce job (mr_probe_check): the same component labels and the
same probe statistics as the in-memory Procedure 2, on synthetic fingerprints that reach
every branch (small and capped buckets, empty dimensions, k = 1 and 2, two snapshots) on
the inline, local and Spark runners; the same stage outputs; the demo's clusters as the
demo run wrote them; and the real pages of ../shared/data."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from spamflow_hss.bucket_check import probe_keys, spanning_pairs
from spamflow_hss.cluster_mapreduce import cluster_snapshots_mapreduce
from spamflow_hss.fingerprint import EMPTY
from spamflow_hss.params import HSSParams
from spamflow_hss.probing import ProbeStats, cluster_fingerprints, projection_keys

M = 32


def _snapshot(rng: np.random.Generator, templates: int, per_template: int, decoys: int) -> np.ndarray:
    """Pages of ``templates`` templates (each page a copy with 5 of M dimensions redrawn, so
    two copies match on about 22), decoys that copy 16 dimensions of a template (they share
    its buckets but fail the check: more of them than a bucket's representatives) and a few pages with empty dimensions, shuffled."""
    bases = rng.integers(0, 1 << 20, (templates, M), dtype=np.uint64)  # small values: k = 2 keys collide too
    pages = []
    for base in bases:
        for _ in range(per_template):
            page = base.copy()
            page[rng.choice(M, 5, replace=False)] = rng.integers(0, 1 << 20, 5, dtype=np.uint64)
            pages.append(page)
        for _ in range(decoys):
            page = rng.integers(0, 1 << 20, M, dtype=np.uint64)
            kept = rng.choice(M, 16, replace=False)
            page[kept] = base[kept]
            pages.append(page)
    fingerprints = np.stack(pages)
    sparse = rng.choice(len(fingerprints), len(fingerprints) // 5, replace=False)
    for row in sparse:
        fingerprints[row, rng.choice(M, int(rng.integers(1, M)), replace=False)] = EMPTY
    return fingerprints[rng.permutation(len(fingerprints))]


def _in_memory(snapshots: dict[str, np.ndarray], params: HSSParams) -> dict[str, tuple[np.ndarray, ProbeStats]]:
    result = {}
    for name, fingerprints in snapshots.items():
        stats = ProbeStats()
        labels = cluster_fingerprints(fingerprints, params.k, params.p, params.t, params.seed, stats,
                                      params.max_representatives)
        result[name] = (labels, stats)
    return result


def _assert_same(found: dict, expected: dict) -> None:
    assert sorted(found) == sorted(expected)
    for name, (labels, stats) in expected.items():
        assert np.array_equal(found[name][0], labels), name  # same labels, so same clusters as sets
        assert vars(found[name][1]) == vars(stats), name


def test_probe_keys_are_the_buckets_of_the_in_memory_pass():
    rng = np.random.default_rng(0)
    fingerprints = _snapshot(rng, 2, 5, 2)
    subsets = np.array([[0, 3], [5, 7], [1, 2], [30, 31]])
    for row, fingerprint in enumerate(fingerprints):
        probes, keys = probe_keys(fingerprint, subsets)
        for probe, subset in enumerate(subsets):
            rows, expected = projection_keys(fingerprints, subset)
            if row in rows:
                assert keys[list(probes).index(probe)] == expected[list(rows).index(row)]
            else:
                assert probe not in probes and EMPTY in fingerprint[subset]


def test_spanning_pairs_keep_the_components_from_fewer_pairs():
    # components {0, 2, 5, 6} and {1, 4}, node 3 alone: each node joined to its component's smallest
    edges = np.array([[5, 2], [6, 5], [2, 6], [4, 1], [0, 6]])
    assert sorted(spanning_pairs(7, edges)) == [(0, 2), (0, 5), (0, 6), (1, 4)]
    assert spanning_pairs(3, np.empty((0, 2), np.int64)) == []


@pytest.mark.parametrize(("runner", "k"), [("inline", 1), ("inline", 2), ("local", 1)])
def test_the_job_gives_the_in_memory_labels_and_statistics(tmp_path, runner, k):
    rng = np.random.default_rng(10 + k)
    snapshots = {"2026-01": _snapshot(rng, 3, 14, 12), "2026-02": _snapshot(rng, 2, 9, 2),
                 "2026-03": _snapshot(rng, 1, 1, 0)}  # one page: no probe has two pages
    params = HSSParams(m=M, k=k, p=6, t=18, seed=3, max_representatives=4)
    expected = _in_memory(snapshots, params)
    whole = expected["2026-01"][1]
    assert whole.unchecked > 0 and whole.max_rounds == 4 and whole.skipped_empty_keys > 0  # every branch ran
    assert len(set(expected["2026-01"][0].tolist())) < len(snapshots["2026-01"])  # and clusters formed
    found = cluster_snapshots_mapreduce(iter(snapshots.items()), params, tmp_path / "work", runner)
    _assert_same(found, expected)


@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None or not shutil.which("java"),
                    reason="needs pyspark (pip install -e '.[test]') and a Java runtime")
@pytest.mark.slow
def test_spark_local_mode_gives_the_in_memory_labels(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")  # keep Spark on loopback
    rng = np.random.default_rng(5)
    snapshots = {"2026-01": _snapshot(rng, 2, 8, 3)}
    params = HSSParams(m=M, k=1, p=4, t=18, seed=1, max_representatives=4)
    found = cluster_snapshots_mapreduce(iter(snapshots.items()), params, tmp_path / "work", "spark",
                                        ("--spark-master", "local[2]"))
    _assert_same(found, _in_memory(snapshots, params))


def test_the_job_module_imports_without_spamflow(monkeypatch):
    for name in [n for n in sys.modules if n == "spamflow" or n.startswith("spamflow.") or
                 n.startswith("spamflow_hss")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "spamflow", None)  # any import of spamflow fails
    monkeypatch.setitem(sys.modules, "scipy", None)  # and workers need NumPy only
    importlib.import_module("spamflow_hss.mr_probe_check")


def test_the_stage_writes_the_same_outputs_with_either_engine(tmp_path):
    from test_hss_stage import _template_pages

    from spamflow.detector import StageContext, StageOutputs
    from spamflow_hss.detector import HSSDetector

    _template_pages(tmp_path / "pages", np.random.default_rng(6))
    parse = StageOutputs("parse", tmp_path, {"pages": tmp_path / "pages"}, {})
    outputs = {}
    for engine in ("memory", "mapreduce"):
        outdir = tmp_path / engine
        outdir.mkdir()
        result = HSSDetector().run(StageContext(HSSParams(engine=engine, max_representatives=3),
                                                {"parse": parse}, outdir))
        summary = json.loads((outdir / "summary.json").read_text())
        assert summary["params"].pop("engine") == engine  # the summary says which engine ran
        outputs[engine] = (result.counts, (outdir / "clusters.jsonl").read_text(), summary,
                           pq.read_table(outdir / "page_clusters.parquet"), pq.read_table(outdir / "hosts.parquet"))
    assert (outdir / "work" / "probe_pairs.tsv").exists()  # the job ran
    memory, mapreduce = outputs["memory"], outputs["mapreduce"]
    assert memory[:3] == mapreduce[:3] and memory[3].equals(mapreduce[3]) and memory[4].equals(mapreduce[4])
    assert memory[0]["clusters"] == 3 and memory[0]["probe_unchecked"] == 0


def test_auto_runs_the_jobs_above_the_page_threshold(tmp_path):
    from test_hss_stage import _template_pages

    from spamflow.detector import RunSettings, StageContext, StageOutputs
    from spamflow_hss.detector import HSSDetector

    _template_pages(tmp_path / "pages", np.random.default_rng(6))
    parse = StageOutputs("parse", tmp_path, {"pages": tmp_path / "pages"}, {})
    for above, ran in ((40, False), (39, True)):  # 40 pages
        outdir = tmp_path / f"above-{above}"
        outdir.mkdir()
        HSSDetector().run(StageContext(HSSParams(mapreduce_above=above), {"parse": parse}, outdir,
                                       RunSettings(runner="inline")))
        assert (outdir / "work" / "probe_pairs.tsv").exists() == ran


def test_the_demo_clusters_are_the_ones_the_demo_run_wrote(demo_once, tmp_path):
    from collections import Counter

    from spamflow_hss.detector import blank_error_pages, cluster_snapshots, snapshot_rows
    from spamflow_hss.fingerprint_table import fingerprints_dataset, page_parts, read_fingerprints

    hss = demo_once["manifest"]["stages"]["hss"]
    params = HSSParams(**hss["params"])
    table = fingerprints_dataset(Path(hss["outputs"]["fingerprints"]), params.m).to_table()
    counts: Counter[str] = Counter()
    parts = page_parts(Path(demo_once["manifest"]["stages"]["parse"]["outputs"]["pages"]))
    matrix, _ = blank_error_pages(table, read_fingerprints(table, params.m), parts, params, counts)  # as the stage
    assert counts["error_pages_http_error"] == hss["counts"]["error_pages_http_error"]
    snapshots = ((name, matrix[rows]) for name, rows in snapshot_rows(table))
    labelled = cluster_snapshots_mapreduce(snapshots, params, tmp_path / "work", "inline")
    clusters, assignment, summary = cluster_snapshots(table, params, Counter(), labelled=labelled, fingerprints=matrix)
    written = [json.loads(line) for line in open(hss["outputs"]["clusters"])]
    assert len(written) >= 2 and clusters == written
    assert assignment.equals(pq.read_table(hss["outputs"]["page_clusters"]))
    assert summary["snapshots"] == json.loads(Path(hss["outputs"]["summary"]).read_text())["snapshots"]


@pytest.mark.slow
def test_real_pages_cluster_the_same(tmp_path):
    import hss_real_pages

    from spamflow_hss.fingerprint import fingerprint_hashes, orderings
    from spamflow_hss.noise_window import window_ngram_hashes

    if not (hss_real_pages.available() and hss_real_pages.template_sites_available()):
        pytest.skip(f"needs the real pages under {hss_real_pages.SHARED_DATA} (the shared data folder beside "
                    "the repo); they are absent here")
    pages = list(hss_real_pages.real_pages())
    for name in hss_real_pages.TEMPLATE_SITES:
        pages += hss_real_pages.warc_pages(name)
    params = HSSParams()
    order = orderings(params.m, params.seed)
    fingerprints = np.stack([fingerprint_hashes(window_ngram_hashes(p.noise, params.n, 0), order) for p in pages])
    snapshots = {"real": fingerprints}
    expected = _in_memory(snapshots, params)
    assert expected["real"][1].edges > 1000  # real templates and real near-duplicates
    _assert_same(cluster_snapshots_mapreduce(iter(snapshots.items()), params, tmp_path / "work", "inline"), expected)


def test_an_empty_page_table_gives_empty_outputs_with_the_jobs_too(tmp_path):
    from spamflow.detector import StageContext, StageOutputs
    from spamflow_hss.detector import HSSDetector

    (tmp_path / "pages").mkdir()
    (tmp_path / "out").mkdir()
    parse = StageOutputs("parse", tmp_path, {"pages": tmp_path / "pages"}, {})
    result = HSSDetector().run(StageContext(HSSParams(engine="mapreduce"), {"parse": parse}, tmp_path / "out"))
    assert result.counts["clusters"] == 0 and (tmp_path / "out" / "clusters.jsonl").read_text() == ""
    assert cluster_snapshots_mapreduce(iter([]), HSSParams(), tmp_path / "work", "inline") == {}
