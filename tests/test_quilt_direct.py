"""The in-process engine (``direct.py``) against the MapReduce jobs it replaces on one machine,
and against the brute-force reference, on the random corpora of the jobs' own tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from spamflow_quilt import direct
from spamflow_quilt.cover import greedy_cover
from spamflow_quilt.detector import QuiltDetector, find_quilts
from spamflow_quilt.direct import direct_quilts, page_quilts
from spamflow_quilt.lockstep import dense_ranks, lockstep_covers
from spamflow_quilt.params import QuiltParams
from spamflow_quilt.shingle import write_shingles
from test_quilt import PARAMS, _ref, _shingles, random_corpus
from test_quilt_copies import PARAMS as COPY_PARAMS
from test_quilt_copies import copies_corpus

from spamflow.detector import RunSettings, StageContext, StageOutputs

from content_pages import page_row, write_pages


def _both(pages, tmp_path, window, buckets, spill_bytes, **params):
    """The jobs' result (inline runner) and the direct engine's, on the same shingle file."""
    qp = QuiltParams(**params)
    work = tmp_path / f"w-{window}-{buckets}-{spill_bytes}-{abs(hash(json.dumps(params, sort_keys=True)))}"
    work.mkdir()
    shingles = _shingles(pages, qp.k, work / "shingles.tsv", window)
    jobs = find_quilts(shingles, work, qp, "inline")
    return jobs, direct_quilts(shingles, qp, buckets=buckets, spill_bytes=spill_bytes)


@pytest.mark.slow
@pytest.mark.parametrize("foreign", ["none", "domain", "ip"])
@pytest.mark.parametrize(("seed", "window", "buckets", "spill_bytes"),
                         [(1, None, 1, 1 << 28), (2, 7, 4, 64), (3, 1 << 20, None, 1 << 28)])
def test_direct_engine_equals_the_jobs_and_the_reference(tmp_path, seed, window, buckets, spill_bytes, foreign):
    """Copies within and across windows, several buckets and spilled covers: the same quilts,
    sources and counts as the jobs, record for record, and as the brute force."""
    quilted = 0
    for pages, grid in ((random_corpus(seed), PARAMS), (copies_corpus(seed), COPY_PARAMS)):
        for params in grid:
            jobs, direct = _both(pages, tmp_path, window, buckets, spill_bytes, foreign=foreign, **params)
            assert direct == jobs, params
            expected = _ref(pages, foreign=foreign, **params)
            assert [{"doc_id": d, "n_grams": c["n_grams"], "n_patch_grams": c["n_patch_grams"],
                     "sources": [tuple(s) for s in c["sources"]]} for d, c in direct] == expected
            quilted += len(direct)
    assert quilted > 0


@pytest.mark.slow
@pytest.mark.parametrize("foreign", ["none", "domain", "ip"])
def test_direct_engine_without_packed_triples_equals_the_jobs(tmp_path, monkeypatch, foreign):
    """The fallback for corpora whose triple indexes do not fit 64 bits (row_covers: the jobs'
    own triples and covers on rows of doc ids), forced here: the jobs' result too."""
    monkeypatch.setattr(direct, "KEY_BITS", 0)
    for pages, grid in ((random_corpus(4), PARAMS), (copies_corpus(4), COPY_PARAMS)):
        for params in grid:
            jobs, rows = _both(pages, tmp_path, 7, 4, 64, foreign=foreign, **params)
            assert rows == jobs, params


def test_lockstep_covers_equal_the_greedy_cover_of_each_unit():
    """Many units covered together: each unit's sources and gains are the set version's, in
    its greedy order (ties to the smallest source), on random triples with repeated pairs."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        n = int(rng.integers(1, 200))
        triples = np.unique(np.stack([rng.integers(0, 6, n), rng.integers(0, rng.integers(1, 30), n),
                                      rng.integers(0, rng.integers(1, 12), n) * 1000], axis=1), axis=0)
        units, grams, sources = triples.T
        c_units, c_sources, c_newly = lockstep_covers(units, grams, sources)
        assert sorted(set(c_units.tolist())) == sorted(set(units.tolist()))
        for unit in set(units.tolist()):
            expected = greedy_cover(zip(sources[units == unit].tolist(), grams[units == unit].tolist()))
            mine = c_units == unit
            assert list(zip(c_sources[mine].tolist(), c_newly[mine].tolist())) == expected


def test_dense_ranks_are_the_ranks_among_the_distinct_keys():
    rng = np.random.default_rng(6)
    for bits in (3, 40, 63):  # packed with positions, and (63) too wide to pack: np.unique
        keys = rng.integers(0, 2**bits, 1000, dtype=np.uint64) >> np.uint64(rng.integers(0, bits))
        ranks, n = dense_ranks(keys, bits)
        distinct = sorted(set(keys.tolist()))
        assert n == len(distinct) and ranks.tolist() == [distinct.index(k) for k in keys.tolist()]


@pytest.mark.slow
@pytest.mark.parametrize(("workers", "window"), [(1, 1 << 20), (2, 5)])
def test_page_quilts_without_a_shingle_file_equal_the_jobs(tmp_path, workers, window):
    """Shingling straight into the engine's bucket files (several Parquet files shared among
    workers, copies collapsed in small windows): the jobs' quilts on write_shingles' file with
    the same workers and windows, and its counts."""
    rows = []
    for seed in (1, 2):
        for page in copies_corpus(seed):
            row = page_row(page["url"], page["words"])
            rows.append({**row, "doc_id": page["doc_id"] + seed, "domain": page["domain"], "ip": page["ip"]})
    pages = tmp_path / "pages"
    for part in range(3):  # three files: one share per worker and more
        write_pages(rows[part::3], pages / f"p{part}")
    for params in COPY_PARAMS:
        qp = QuiltParams(foreign="domain", **params)
        work = tmp_path / f"w-{workers}-{abs(hash(json.dumps(params, sort_keys=True)))}"
        work.mkdir()
        counts = write_shingles(pages, work / "shingles.tsv", qp.k, snapshot="2026-01", workers=workers,
                                window_pages=window)
        jobs = find_quilts(work / "shingles.tsv", work, qp, "inline")
        found, page_counts = page_quilts(pages, "2026-01", qp, work / "memory", workers=workers,
                                         window_pages=window)
        assert found == jobs and page_counts == counts, params
        assert counts["copies"] > 0 and len(jobs) > 0


def test_direct_engine_names_a_bad_shingle_line(tmp_path):
    path = tmp_path / "shingles.tsv"
    path.write_bytes(b"not a shingle line\n")
    with pytest.raises(ValueError, match="not a shingle line"):
        direct_quilts(path, QuiltParams())


def _stage(pages: Path, out: Path, engine: str):
    out.mkdir()
    parse = StageOutputs("parse", pages.parent, {"pages": pages}, {})
    params = QuiltParams(k=3, m=8, c=2, theta=0.5, foreign="domain", engine=engine)
    result = QuiltDetector().run(StageContext(params, {"parse": parse}, out, RunSettings(runner="inline",
                                                                                         progress=False)))
    quilts = (out / "quilts.jsonl").read_text(encoding="utf-8").splitlines()
    return result.counts, quilts, pq.read_table(out / "hosts.parquet").to_pylist()


@pytest.mark.slow
def test_the_stage_finds_the_same_quilts_with_either_engine(tmp_path):
    """The whole stage, two snapshots of copies-rich pages: the memory engine's quilts.jsonl,
    hosts.parquet and counts are the jobs' (the engine's count apart: it says what ran)."""
    rows = []
    for snapshot, seed in (("2026-01", 1), ("2026-02", 2)):
        for page in copies_corpus(seed):
            row = page_row(page["url"], page["words"], snapshot=snapshot)
            rows.append({**row, "doc_id": page["doc_id"], "domain": page["domain"], "ip": page["ip"]})
    pages = write_pages(rows, tmp_path / "parse" / "pages")
    jobs = _stage(pages, tmp_path / "jobs", "mapreduce")
    memory = _stage(pages, tmp_path / "memory", "memory")
    assert jobs[0].pop("engine_mapreduce_snapshots") == 2 and "engine_mapreduce_snapshots" not in memory[0]
    assert memory == jobs
    assert len(jobs[1]) > 0 and sum(host["quilted_pages"] for host in jobs[2]) == len(jobs[1])
    assert QuiltParams.execution_keys == {"engine"}
