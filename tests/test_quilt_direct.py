"""The in-process engine (``direct.py``) against the MapReduce jobs it replaces on one machine,
and against the brute-force reference, on the random corpora of the jobs' own tests."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from spamflow_quilt.detector import QuiltDetector, find_quilts
from spamflow_quilt.direct import direct_quilts
from spamflow_quilt.params import QuiltParams
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
