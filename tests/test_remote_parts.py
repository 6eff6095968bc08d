"""Page-table parts on shared storage: with ``workdir: s3://...`` (moto's S3 server on
127.0.0.1) and the parse, content and links jobs on the ``local`` runner (each task a separate
process, as a cluster's workers are), the parse job's tasks upload their parts to a staging
prefix in the bucket, and the content and links jobs are handed the parse stage's parts as
``s3://`` URLs, not as paths into the driver's cache; the outputs equal a run on a local
workdir (in-memory engines, inline runner)."""

from __future__ import annotations

import importlib.util
import io
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
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
def bucket(s3_runs_bucket):
    """The boto3 client of the S3 server with the empty bucket ``runs`` (conftest)."""
    return s3_runs_bucket[0]


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


def _watch_jobs(monkeypatch, bucket, staging: str, *modules) -> tuple[dict[str, list[str]], list[set[str]]]:
    """Watch the real ``run_job`` calls of ``modules``: each job's input lines, and the bucket's
    keys under the ``staging`` prefix when a parse job ended (before the stage takes the parts)."""
    job_inputs: dict[str, list[str]] = {}
    staged: list[set[str]] = []

    def watching(real):
        def run_job(job_class, inputs, output, **kwargs):
            job_inputs.setdefault(job_class.__name__, []).extend(
                line for path in inputs for line in Path(path).read_text().splitlines() if line)
            out = real(job_class, inputs, output, **kwargs)
            if job_class.__name__ == "MRParse":
                staged.append(_keys(bucket, staging))
            return out
        return run_job

    for module in modules:
        monkeypatch.setattr(module, "run_job", watching(module.run_job))
    return job_inputs, staged


@pytest.mark.slow
def test_jobs_read_and_write_page_table_parts_in_the_bucket(tmp_path, plugins, bucket, monkeypatch):
    """Before: parse's tasks wrote into the driver's cache folder and the content and links
    jobs were handed paths into it, which no other machine can open."""
    import spamflow.stages.parse as parse_stage
    import spamflow_links.mapreduce as links_jobs

    project = _write_crawl(tmp_path / "project")
    local = _run(project, plugins, "local", "out", "inline", "memory")

    job_inputs, staged = _watch_jobs(monkeypatch, bucket, "parts/stages/.", parse_stage, links_jobs)
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


def _parse_in_cache(tmp_path: Path, workdir: str | None, warcs: list[Path], strict: bool = False, engine: str = "mapreduce",
                    runner: str = "inline", runner_args: tuple[str, ...] = ()):
    """The parse stage writing into the local cache of the remote ``workdir``, as a run does
    (into a plain folder if None): ``(result, its folder)``."""
    from spamflow.detector import StageContext, StageOutputs
    from spamflow.stages.parse import ParseParams, ParseStage

    ingest = tmp_path / "ingest"
    ingest.mkdir(parents=True)
    (ingest / "warcs.jsonl").write_text("".join(
        json.dumps({"path": str(w), "snapshot": "2026-01", "bytes": w.stat().st_size}) + "\n" for w in warcs))
    root = tmp_path / "out" if workdir is None else storage.mirror_dir(workdir, tmp_path / "cache")
    out = root / "stages" / ".parse-0123.tmp-1"
    out.mkdir(parents=True)
    upstream = StageOutputs("ingest", ingest, {"warcs": ingest / "warcs.jsonl"}, {})
    ctx = StageContext(ParseParams(engine=engine), {"ingest": upstream}, out,  # type: ignore[arg-type]
                       RunSettings(runner=runner, runner_args=runner_args, strict=strict, progress=False))
    return ParseStage().run(ctx), out


def test_strict_parse_job_under_a_remote_workdir_fails_as_in_process_and_leaves_no_staging(tmp_path, bucket,
                                                                                           monkeypatch):
    """The tasks upload their parts to the staging prefix, which the stage takes into its folder
    and deletes; a bad record under ``--strict`` stops the job with the in-process message, and
    the parts already uploaded go with their staging prefix."""
    import spamflow.stages.parse as parse_stage
    from spamflow.errors import BadInputError

    _, staged = _watch_jobs(monkeypatch, bucket, "w/", parse_stage)

    good, bad = tmp_path / "a.warc.gz", tmp_path / "b.warc"
    write_warc(good, [Resp(f"http://{A}/{i}", html(f"a {i}", "<p>a page</p>")) for i in range(2)])
    bad.write_bytes(b"GARBAGE NOT A WARC HEADER\r\n\r\n")
    result, out = _parse_in_cache(tmp_path / "ok", f"s3://{BUCKET}/w", [good])
    assert result.counts["pages"] == 2 and sorted(p.name for p in (out / "pages").iterdir()) == ["part-00000.parquet"]
    [keys] = staged
    [key] = keys
    assert key.startswith("w/stages/.parse-0123.tmp-1-") and key.endswith("/pages/part-00000.parquet")
    assert not _keys(bucket, "w/")  # taken into the stage's folder, the staging prefix deleted
    with pytest.raises(BadInputError, match=f"^{bad} at offset 0: unreadable"):
        _parse_in_cache(tmp_path / "strict", f"s3://{BUCKET}/w", [good, bad], strict=True)
    assert len(staged[1]) == 1 and not _keys(bucket, "w/")  # a.warc.gz's part had been uploaded


@pytest.mark.parametrize("job", ["content", "links"])
def test_a_part_url_the_workers_cannot_read_is_named(tmp_path, bucket, job):
    """A part missing from the bucket fails the job with a message naming its URL."""
    from spamflow.errors import SpamflowError

    gone = f"s3://{BUCKET}/w/stages/parse-0123/pages/part-00009.parquet"
    if job == "links":
        from spamflow_links.mapreduce import host_graphs_mapreduce

        cache = storage.mirror_dir(f"s3://{BUCKET}/w", tmp_path / "cache")
        part = cache / "stages" / "parse-0123" / "pages" / "part-00009.parquet"  # the cache's name for it
        with pytest.raises(SpamflowError, match=f"MRHostEdges failed on the 'inline' runner: .*{gone}"):
            host_graphs_mapreduce([part], tmp_path / "edges")
        return
    from spamflow_content.mapreduce import JobInputs
    from spamflow_content.mr_content_corpus import MRContentCorpus

    (tmp_path / "parts.txt").write_text(gone + "\n")
    pq.write_table(pa.table({"doc_id": pa.array([], pa.int64())}), tmp_path / "sample.parquet")
    inputs = JobInputs(tmp_path / "parts.txt", tmp_path / "sample.parquet", "inline", ())
    with pytest.raises(SpamflowError, match=f"MRContentCorpus failed on the 'inline' runner: .*{gone}"):
        inputs.run(MRContentCorpus, tmp_path / "out.jsonl", [])


def test_published_url_of_a_cache_file_and_of_a_local_file(tmp_path):
    cache = storage.mirror_dir("s3://b/runs/x", tmp_path / "cache")
    assert storage.published_url(cache / "stages" / "parse-1" / "pages" / "part-00000.parquet") == \
        "s3://b/runs/x/stages/parse-1/pages/part-00000.parquet"
    assert storage.published_url(cache) == "s3://b/runs/x"
    assert storage.published_url(tmp_path / "out" / "stages" / "parse-1") is None


def test_parse_engine_choice_under_a_remote_workdir():
    """Cluster tasks can write a remote workdir: ``auto`` runs the job on a cluster runner and
    ``mapreduce`` is no longer refused there; a local workdir is as before."""
    from spamflow.errors import SpamflowError
    from spamflow.stages.parse import _use_job

    hadoop = RunSettings(runner="hadoop", progress=False)
    yarn = RunSettings(runner="spark", runner_args=("--spark-master", "yarn"), progress=False)
    for settings in (hadoop, yarn):
        assert _use_job("auto", settings, Path("pages"), remote=True)
        assert _use_job("mapreduce", settings, Path("pages"), remote=True)
        assert not _use_job("auto", settings, Path("pages"))
        with pytest.raises(SpamflowError, match="give workdir as a URL"):
            _use_job("mapreduce", settings, Path("pages"))
    assert not _use_job("auto", RunSettings(runner="local", progress=False), Path("pages"), remote=True)


@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None or not shutil.which("java"),
                    reason="needs pyspark (pip install -e '.[test]') and a Java runtime")
@pytest.mark.slow
def test_spark_local_mode_tasks_stage_their_parts_in_the_bucket(tmp_path, bucket, monkeypatch):
    """Spark ``local[2]``'s Python workers upload the parts (the AWS variables reach them from
    the environment) and the table equals the in-process one."""
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")  # keep Spark on loopback
    crawl = _write_crawl(tmp_path / "crawl")
    warcs = sorted((crawl / "jan").glob("*.warc.gz"))
    _, memory = _parse_in_cache(tmp_path / "m", None, warcs, engine="memory")
    result, spark = _parse_in_cache(tmp_path / "s", f"s3://{BUCKET}/w", warcs, runner="spark",
                                    runner_args=("--spark-master", "local[2]"))
    assert result.counts["pages"] == 9 and not _keys(bucket, "w/")
    assert sorted(p.name for p in (spark / "pages").iterdir()) == sorted(p.name for p in (memory / "pages").iterdir())
    assert _rows(ds.dataset(spark / "pages")) == _rows(ds.dataset(memory / "pages"))
