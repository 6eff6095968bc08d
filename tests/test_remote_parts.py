"""Page-table parts on shared storage: with ``workdir: s3://...`` (moto's S3 server on
127.0.0.1) and the parse, content and links jobs on the ``local`` runner (each task a separate
process, as a cluster's workers are), the parse job's tasks upload their parts to a staging
prefix in the bucket, and the content and links jobs are handed the parse stage's parts as
``s3://`` URLs, not as paths into the driver's cache; the outputs equal a run on a local
workdir (in-memory engines, inline runner)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow.dataset as ds
import pytest
import scipy.sparse as sp

from spamflow import storage
from spamflow.config import load_config
from spamflow.detector import RunSettings
from spamflow.manifest import read_manifest_file
from spamflow_links.static_features import STATIC_COLUMNS
from spamflow_workflows import run_pipeline

from conftest import assert_close
from warc_factory import Resp, html, write_warc

pytest.importorskip("s3fs", reason="s3fs writes s3:// workdirs")

BUCKET = "runs"
CONFIG = """\
workdir: {workdir}
{cache}input:
  warc: {{2026-01: [jan/*.warc.gz], 2026-02: [feb/*.warc.gz]}}
mapreduce: {{runner: {runner}}}
parse: {{engine: {engine}}}
detectors:
  content: {{engine: {engine}, min_df: 0.0, max_df: 1.0}}
  links: {{engine: {engine}, tol: 1.0e-3}}
"""
A, B, C = "a.example.org", "b.example.net", "c.example.com"
LINKS = {"jan": {A: (B, C), B: (C,), C: (A,)}, "feb": {A: (B,), B: (A,), C: (B,)}}
"""Each month's host graph: which hosts each host's pages link to."""


def _write_crawl(folder: Path) -> Path:
    """Two months of pages on three hosts linking as :data:`LINKS` says (host graphs with
    edges that differ by month), one WARC file per host and month: three parts a snapshot."""
    for month, name, n in (("2026-01", "jan", 3), ("2026-02", "feb", 2)):
        (folder / name).mkdir(parents=True)
        for host, targets in LINKS[name].items():
            pages = []
            for i in range(n):
                links = " ".join(f'<a href="http://{t}/{name}/{i}">{t}</a>' for t in targets)
                body = f"<p>{host} {name} page {i} about topic{i % 2} {' '.join(['text'] * (i + 1))}</p>{links}"
                pages.append(Resp(f"http://{host}/{name}/{i}", html(f"{host} {i}", body),
                                  date=f"{month}-1{i}T10:00:00Z"))
            write_warc(folder / name / f"{host}.warc.gz", pages)
    return folder


@pytest.fixture
def bucket(s3, monkeypatch):
    client, env = s3
    client.create_bucket(Bucket=BUCKET)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return client


def _run(project: Path, plugins, name: str, workdir: str, runner: str, engine: str) -> dict:
    cache = "cache_dir: cache\n" if "://" in workdir else ""
    path = project / f"{name}.yaml"
    path.write_text(CONFIG.format(workdir=workdir, cache=cache, runner=runner, engine=engine))
    outcome = run_pipeline(load_config(path, plugins), plugins, RunSettings(progress=False))
    assert outcome.ok, outcome.summary
    manifest = outcome.manifest
    return json.loads(manifest.read_text()) if isinstance(manifest, Path) else read_manifest_file(manifest)


def _rows(dataset: ds.Dataset) -> list[dict]:
    return sorted(dataset.to_table().to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _s3_rows(url: str) -> list[dict]:
    fs = storage.filesystem(url)
    return _rows(ds.dataset(url.removeprefix("s3://"), filesystem=fs, format="parquet"))


def _keys(client, prefix: str) -> set[str]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return {obj["Key"] for page in pages for obj in page.get("Contents", [])}


def test_jobs_read_and_write_page_table_parts_in_the_bucket(tmp_path, plugins, bucket, monkeypatch):
    """Before: parse's tasks wrote into the driver's cache folder and the content and links
    jobs were handed paths into it, which no other machine can open."""
    import spamflow.stages.parse as parse_stage
    import spamflow_links.mapreduce as links_jobs

    project = _write_crawl(tmp_path / "project")
    local = _run(project, plugins, "local", "out", "inline", "memory")

    job_inputs: dict[str, list[str]] = {}  # what each job was handed: its input lines
    staged: list[set[str]] = []  # the bucket's keys under parse's staging prefix when its job ended

    def spy(module, real):
        def run_job(job_class, inputs, output, **kwargs):
            job_inputs.setdefault(job_class.__name__, []).extend(
                line for path in inputs for line in Path(path).read_text().splitlines() if line)
            out = real(job_class, inputs, output, **kwargs)
            if job_class.__name__ == "MRParse":
                staged.append(_keys(bucket, "parts/stages/."))
            return out
        monkeypatch.setattr(module, "run_job", run_job)

    spy(parse_stage, parse_stage.run_job)
    spy(links_jobs, links_jobs.run_job)
    remote = _run(project, plugins, "remote", f"s3://{BUCKET}/parts", "local", "mapreduce")

    parse_url = remote["stages"]["parse"]["directory"]
    published = {f"s3://{BUCKET}/{k}" for k in _keys(bucket, parse_url.removeprefix(f"s3://{BUCKET}/") + "/pages/")}
    assert len(published) == 6
    # parse: every task wrote its part to the staging prefix beside the stage's folder, not to a local path
    out_dirs = {json.loads(line)["out_dir"] for line in job_inputs["MRParse"]}
    [staging] = out_dirs
    assert staging.startswith(parse_url.rsplit("/", 1)[0] + "/.parse-") and staging.endswith("/pages")
    assert {k.rsplit("/", 1)[1] for k in staged[0]} >= {p.rsplit("/", 1)[1] for p in published}
    assert not _keys(bucket, "parts/stages/.")  # the staging prefix is gone once published
    # content (both jobs read parts.txt) and links' edges job: the published parts' URLs
    content_url = remote["stages"]["content"]["directory"]
    parts_txt = storage.read_bytes(f"{content_url}/work/parts.txt").decode().splitlines()
    assert set(parts_txt) == published
    assert set(job_inputs["MRHostEdges"]) == published

    # the same outputs as on a local workdir, rows in any order
    for stage, output in (("parse", "pages"), ("content", "hosts"), ("content", "pages")):
        want = _rows(ds.dataset(local["stages"][stage]["outputs"][output], format="parquet"))
        got = _s3_rows(remote["stages"][stage]["outputs"][output])
        assert_close(got, want, atol=1e-12, where=f"{stage}.{output}")  # content: 1e-12 between engines
    for stage in ("parse", "content"):
        assert remote["stages"][stage]["counts"] == local["stages"][stage]["counts"], stage
    # links: the edges job's host graphs exactly, and the degrees and ranks built on them (the
    # logs and ratios of near-zero truncated PageRank are left out: 1e-17 apart between engines,
    # whatever the workdir)
    local_graphs = local["stages"]["links"]["outputs"]["graphs"]
    remote_graphs = remote["stages"]["links"]["outputs"]["graphs"]
    assert _s3_rows(f"{remote_graphs}/nodes.parquet") == _rows(ds.dataset(f"{local_graphs}/nodes.parquet"))
    for month, edges in (("2026-01", 4), ("2026-02", 3)):  # LINKS: host to host, once each
        want = sp.load_npz(f"{local_graphs}/{month}.npz")
        got = sp.load_npz(io.BytesIO(storage.read_bytes(f"{remote_graphs}/{month}.npz")))
        assert want.nnz == edges and got.shape == want.shape and (got != want).nnz == 0, month
    raw = ["snapshot", "host", *(c for c in STATIC_COLUMNS if not c.startswith(("L_", "log_")) and "_over_" not in c)]
    want = [{k: r[k] for k in raw} for r in _rows(ds.dataset(local["stages"]["links"]["outputs"]["hosts"]))]
    got = [{k: r[k] for k in raw} for r in _s3_rows(remote["stages"]["links"]["outputs"]["hosts"])]
    assert_close(got, want, atol=1e-9, where="links.hosts")
