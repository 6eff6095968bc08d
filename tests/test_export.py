"""``spamflow export`` on the shared demo run, checked against the run's own files read here:
the classifier's scores.parquet, each detector's hosts.parquet, the page table and the WARC
files themselves (read with warcio), and dolma's documented attribute format."""

from __future__ import annotations

import gzip
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from spamflow.cli import demo_config_path
from spamflow.export.commands import export_run
from spamflow.export.rows import SCHEMA_VERSION


@pytest.fixture(scope="module")
def stages(demo_once) -> dict:
    return demo_once["manifest"]["stages"]


@pytest.fixture(scope="module")
def scores(stages) -> dict:
    table = pq.read_table(stages["classify"]["outputs"]["scores"]).to_pylist()
    return {(r["snapshot"], r["host"]): r for r in table}


@pytest.fixture(scope="module")
def pages(stages) -> list[dict]:
    return ds.dataset(stages["parse"]["outputs"]["pages"]).to_table(
        columns=["snapshot", "host", "url", "record_id", "warc_file", "warc_offset", "html_bytes"]).to_pylist()


@pytest.fixture(scope="module")
def exported(demo_once, tmp_path_factory) -> dict:
    from spamflow.plugins import build_plugins

    plugins = build_plugins()
    out = {}
    for fmt in ("jsonl", "dolma"):
        folder = tmp_path_factory.mktemp(f"export-{fmt}")
        export_run(demo_once["manifest"], folder, fmt, plugins=plugins)
        out[fmt] = folder
    return out


@pytest.fixture(scope="module")
def parquet_export(demo_once, tmp_path_factory) -> Path:
    """The command itself, as a user runs it on the finished demo run."""
    folder = tmp_path_factory.mktemp("export-parquet") / "out"
    run = subprocess.run([sys.executable, "-m", "spamflow_workflows", "export", "-c", str(demo_config_path()),
                          "--workdir", str(demo_once["workdir"]), "--to", str(folder), "--format", "parquet"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"export (parquet): {folder}" in run.stdout
    return folder


def test_host_rows_carry_the_classifier_scores_and_each_detector_table(parquet_export, stages, scores):
    hosts = pq.read_table(parquet_export / "hosts.parquet").to_pylist()
    keys = {(r["snapshot"], r["host"]) for r in hosts}
    assert len(keys) == len(hosts)
    tables = {}
    for name in ("obvious", "quilt", "hss", "links", "spin"):
        tables[name] = {(r["snapshot"], r["host"]): r for r in pq.read_table(stages[name]["outputs"]["hosts"]).to_pylist()}
    assert keys == set(scores) | set().union(*(set(t) for t in tables.values()))
    description = json.loads((parquet_export / "export.json").read_text())
    assert description["schema_version"] == SCHEMA_VERSION == 1
    assert description["run"]["score_stage"] == "classify"
    assert description["run"]["stages"]["classify"] == stages["classify"]["signature"]
    assert set(pq.read_schema(parquet_export / "hosts.parquet").names) == set(description["host_columns"])
    for row in hosts:
        key = (row["snapshot"], row["host"])
        assert row["schema_version"] == 1 and row["run_id"] == description["run"]["run_id"]
        if key in scores:
            assert row["score"] == scores[key]["score"] and row["label"] == scores[key]["label"]
        else:
            assert row["score"] is None and row["label"] is None
        quilt = tables["quilt"].get(key)
        assert row["quilt__quilted_pages"] == (None if quilt is None else quilt["quilted_pages"])
        hss = tables["hss"].get(key)
        assert row["hss__largest_cluster_domains"] == (None if hss is None else hss["largest_cluster_domains"])
        links = tables["links"].get(key)
        assert row["links__pagerank"] == (None if links is None else links["pagerank"])
        # quilt fired on the host when it has a quilted page (its report rule)
        assert ("quilt" in row["fired"]) >= bool(quilt and quilt["quilted_pages"] > 0)
    assert sum(1 for r in hosts if r["score"] is not None) == len(scores) == stages["classify"]["counts"]["hosts_scored"]


def test_url_rows_are_the_page_table_each_with_its_host_verdict(parquet_export, pages, scores):
    urls = pq.read_table(parquet_export / "urls.parquet").to_pylist()
    assert len(urls) == len(pages)
    assert sorted(r["record_id"] for r in urls) == sorted(p["record_id"] for p in pages)
    hosts = {(r["snapshot"], r["host"]): r for r in pq.read_table(parquet_export / "hosts.parquet").to_pylist()}
    for row in urls:
        key = (row["snapshot"], row["host"])
        assert row["score"] == (scores[key]["score"] if key in scores else None)
        assert {k: v for k, v in row.items() if k in hosts[key]} == hosts[key]
    assert any(r["score"] is not None for r in urls) and any(r["score"] is None for r in urls)


def test_jsonl_rows_equal_the_parquet_rows(parquet_export, exported):
    for name in ("hosts", "urls"):
        want = pq.read_table(parquet_export / f"{name}.parquet").to_pylist()
        got = [json.loads(line) for line in (exported["jsonl"] / f"{name}.jsonl").read_text().splitlines()]
        assert got == [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in want]


ATTRIBUTE = re.compile(r"^spamflow__[a-z0-9_]+__[A-Za-z0-9_]+$")


def _warc_responses(path: str) -> list[str]:
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as fh:
        return [r.rec_headers.get_header("WARC-Record-ID") for r in ArchiveIterator(fh) if r.rec_type == "response"]


def test_dolma_attribute_files_follow_the_documented_format_in_warc_record_order(exported, pages, scores, stages):
    root = exported["dolma"]
    index = json.loads((root / "attributes" / "spamflow" / "files.json").read_text())
    warcs = sorted({p["warc_file"] for p in pages})
    assert sorted(index) == warcs and len(warcs) == 2
    by_id = {p["record_id"]: p for p in pages}
    seen = 0
    for warc in warcs:
        lines = [json.loads(line) for line in gzip.open(root / index[warc], "rt", encoding="utf-8")]
        ids = [line["id"] for line in lines]
        # one line per parsed page of the file, in the file's record order
        responses = [i for i in _warc_responses(warc) if i in by_id]
        assert ids == responses
        for line in lines:
            # dolma's attributes format: {"id", "attributes": {name: [[start, end, score], ...]}}
            assert set(line) == {"id", "attributes"}
            page = by_id[line["id"]]
            for name, spans in line["attributes"].items():
                assert ATTRIBUTE.match(name), name
                assert isinstance(spans, list) and len(spans) == 1
                start, end, value = spans[0]
                assert start == 0 and end == page["html_bytes"] and isinstance(value, float)
            key = (page["snapshot"], page["host"])
            score = line["attributes"].get("spamflow__host__score")
            assert (score[0][2] if score else None) == (scores[key]["score"] if key in scores else None)
            spam = line["attributes"].get("spamflow__host__spam")
            assert (spam[0][2] if spam else None) == ((scores[key]["label"] == "spam") * 1.0 if key in scores else None)
        seen += len(lines)
    assert seen == len(pages)
