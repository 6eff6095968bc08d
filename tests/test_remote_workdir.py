"""A workdir in an object store (``spamflow.storage``): moto's real S3 server on 127.0.0.1,
a small run in this process and the whole demo as ``spamflow demo --workdir s3://...``,
checked against the same runs on a local workdir; and what a bad remote workdir gets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from spamflow.config import load_config
from spamflow.detector import RunSettings
from spamflow.errors import ConfigError
from spamflow_workflows import run_pipeline

from conftest import assert_close
from warc_factory import write_two_months

pytest.importorskip("s3fs", reason="s3fs writes s3:// workdirs")

BUCKET = "runs"
CONFIG = """\
workdir: {workdir}
cache_dir: cache
input:
  warc: {{2026-01: [jan/*.warc.gz], 2026-02: [feb/*.warc.gz]}}
mapreduce: {{runner: inline}}
detectors:
  obvious: {{}}
"""


@pytest.fixture
def project(tmp_path):
    return write_two_months(tmp_path)


@pytest.fixture
def bucket(s3_runs_bucket):
    return s3_runs_bucket


def _config(project: Path, plugins, workdir: str, name: str = "spamflow.yaml"):
    path = project / name
    text = CONFIG.format(workdir=workdir)
    path.write_text(text if "://" in workdir else text.replace("cache_dir: cache\n", ""))
    return load_config(path, plugins)


def _run(config, plugins) -> dict:
    outcome = run_pipeline(config, plugins, RunSettings(progress=False))
    assert outcome.ok, outcome.summary
    if isinstance(outcome.manifest, Path):
        return json.loads(outcome.manifest.read_text())
    from spamflow.manifest import read_manifest_file

    return read_manifest_file(outcome.manifest)


def _keys(client, prefix: str) -> set[str]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return {obj["Key"] for page in pages for obj in page.get("Contents", [])}


def _ran(manifest: dict) -> set[str]:
    return {name for name, stage in manifest["stages"].items() if stage.get("ran_now")}


def _after(manifest: dict, name: str) -> set[str]:
    """``name`` and every stage that reads it, directly or not, from run.json's ``requires``."""
    found = {name}
    while True:
        more = {n for n, s in manifest["stages"].items() if set(s.get("requires") or {}) & found} - found
        if not more:
            return found
        found |= more


def _host_table(path: str) -> list[dict]:
    return sorted(ds.dataset(path).to_table().to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _s3_table(env: dict, url: str) -> list[dict]:
    """A Parquet output read from the bucket by pyarrow's own S3 client (not spamflow's fsspec)."""
    from pyarrow.fs import S3FileSystem

    scheme, endpoint = env["AWS_ENDPOINT_URL"].split("://")
    fs = S3FileSystem(access_key=env["AWS_ACCESS_KEY_ID"], secret_key=env["AWS_SECRET_ACCESS_KEY"],
                      endpoint_override=endpoint, scheme=scheme, region=env["AWS_DEFAULT_REGION"])
    table = ds.dataset(url.removeprefix("s3://"), filesystem=fs).to_table()
    return sorted(table.to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))


def test_deleting_a_local_stage_json_redoes_that_stage_and_those_after(project, plugins):
    """Before: Luigi looked no further than the complete stages after it, so the run ended
    'failed' with the stage still missing (and a rerun kept its half directory)."""
    config = _config(project, plugins, "out")
    first = _run(config, plugins)
    assert _ran(first) == set(first["stages"])
    (Path(first["stages"]["parse"]["directory"]) / "stage.json").unlink()
    again = _run(config, plugins)
    assert _ran(again) == _after(first, "parse") == {"parse", "obvious", "report"}
    assert all(stage["complete"] for stage in again["stages"].values())
    assert _ran(_run(config, plugins)) == set()


def test_s3_workdir_publishes_stages_and_run_json_and_reads_them_back(project, plugins, bucket, tmp_path):
    client, env = bucket
    local = _run(_config(project, plugins, "out", "local.yaml"), plugins)
    config = _config(project, plugins, f"s3://{BUCKET}/small")
    assert config.workdir_url == f"s3://{BUCKET}/small" and config.workdir.is_relative_to(project / "cache")
    remote = _run(config, plugins)

    keys = _keys(client, "small/")
    assert "small/run.json" in keys and not any(".spamflow-write-check" in k for k in keys)
    for name, stage in remote["stages"].items():
        assert stage["complete"] and stage["directory"].startswith(f"s3://{BUCKET}/small/stages/{name}-")
        folder = stage["directory"].removeprefix(f"s3://{BUCKET}/")
        assert {f"{folder}/stage.json", f"{folder}/stage-files.json"} <= keys
        assert stage["signature"] == local["stages"][name]["signature"]  # where outputs live is no identity
        assert stage["counts"] == local["stages"][name]["counts"]
    assert _s3_table(env, remote["stages"]["obvious"]["outputs"]["hosts"]) == \
        _host_table(local["stages"]["obvious"]["outputs"]["hosts"])
    assert _ran(_run(config, plugins)) == set()

    # another machine: an empty cache, and parse's stage.json gone from the bucket
    client.delete_object(Bucket=BUCKET, Key=remote["stages"]["parse"]["directory"].removeprefix(f"s3://{BUCKET}/")
                         + "/stage.json")
    elsewhere = load_config(_write(project / "elsewhere.yaml", f"s3://{BUCKET}/small", tmp_path / "other-cache"),
                            plugins)
    from spamflow.plan import plan_run

    plan = plan_run(elsewhere, plugins)
    assert all(s.local_directory.startswith(str(tmp_path / "other-cache")) for s in plan.values())
    again = _run(elsewhere, plugins)
    assert _ran(again) == {"parse", "obvious", "report"}
    ingest = remote["stages"]["ingest"]["directory"].rsplit("/", 1)[1]
    assert (elsewhere.workdir / "stages" / ingest / "stage.json").is_file()  # fetched for parse to read
    assert _s3_table(env, again["stages"]["obvious"]["outputs"]["hosts"]) == \
        _host_table(local["stages"]["obvious"]["outputs"]["hosts"])


def test_an_upload_cut_short_never_looks_complete(project, plugins, bucket, monkeypatch):
    """The connection drops once a stage's files are up, before its listing and stage.json:
    the stage is not complete, and the next run publishes it whole."""
    from spamflow import storage
    from spamflow.plan import plan_run
    from spamflow.stage_runner import is_complete

    client, _env = bucket
    config = _config(project, plugins, f"s3://{BUCKET}/cut")
    fs = storage.filesystem(f"s3://{BUCKET}/cut")
    pipe_file = fs.pipe_file

    def drop_at_the_listing(path: str, data: bytes, **kw: object) -> None:
        if path.endswith(storage.LISTING):
            raise ConnectionResetError("connection reset by peer")
        pipe_file(path, data, **kw)

    monkeypatch.setattr(fs, "pipe_file", drop_at_the_listing)
    outcome = run_pipeline(config, plugins, RunSettings(progress=False))
    assert not outcome.ok and "cannot write it" in outcome.errors["ingest"]
    ingest = plan_run(config, plugins)["ingest"]
    folder = ingest.directory.removeprefix(f"s3://{BUCKET}/")
    assert f"{folder}/warcs.jsonl" in _keys(client, "cut/") and not is_complete(ingest)
    assert not any(k.endswith("stage.json") for k in _keys(client, "cut/"))
    monkeypatch.setattr(fs, "pipe_file", pipe_file)
    again = _run(config, plugins)
    assert _ran(again) == set(again["stages"]) and is_complete(ingest)


def test_commands_get_local_copies_of_a_remote_run(project, plugins, bucket, tmp_path):
    """What ``args.run_stages`` hands a command (report, judge, train, quilt-sweep): run.json's
    entries pointing at local files, fetched into an empty cache from the bucket."""
    from spamflow.manifest import add_command_entry, read_manifest
    from spamflow.runs import StageRunner

    client, env = bucket
    config = _config(project, plugins, f"s3://{BUCKET}/cmd")
    published = _run(config, plugins)["stages"]
    fresh = load_config(_write(project / "fresh.yaml", f"s3://{BUCKET}/cmd", tmp_path / "fresh"), plugins)
    _settings, manifest = StageRunner(run_pipeline)("test", fresh, plugins, {"obvious"})
    obvious = manifest["stages"]["obvious"]
    assert Path(obvious["directory"]).is_relative_to(tmp_path / "fresh")
    assert _host_table(obvious["outputs"]["hosts"]) == _s3_table(env, published["obvious"]["outputs"]["hosts"])
    assert Path(manifest["stages"]["parse"]["outputs"]["pages"]).exists()  # and what it was made from
    assert manifest["stages"]["report"]["directory"].startswith("s3://")  # not asked for: left as it is
    # a command adds its entry through config.workdir (the local cache): it lands in the bucket
    add_command_entry(fresh.workdir, "extra", {"outputs": {}, "requires": {}}, command="test")
    assert read_manifest(f"s3://{BUCKET}/cmd")["stages"]["extra"]["command"] == "test"


def test_report_command_takes_a_url_and_publishes_the_report_there(project, bucket):
    client, env = bucket
    (project / "c.yaml").write_text(CONFIG.format(workdir="out"))
    done = subprocess.run([sys.executable, "-m", "spamflow_workflows", "report", "-c", "c.yaml", "--workdir",
                           f"s3://{BUCKET}/rep"], cwd=project, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env})
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"report: s3://{BUCKET}/rep/report/index.html" in done.stdout
    keys = _keys(client, "rep/")
    assert {"rep/run.json", "rep/report/index.html"} <= keys and not (project / "out").exists()
    page = client.get_object(Bucket=BUCKET, Key="rep/report/index.html")["Body"].read().decode()
    assert f"s3://{BUCKET}/rep" in page  # titled by the workdir's URL


def _write(path: Path, workdir: str, cache: Path) -> Path:
    path.write_text(CONFIG.replace("cache_dir: cache", f"cache_dir: {cache}").format(workdir=workdir))
    return path


def test_a_bad_remote_workdir_is_a_config_error_naming_the_url(project, plugins, bucket, monkeypatch):
    with pytest.raises(ConfigError, match=r"workdir: s3://nobucket/run: .*bucket .*'nobucket' does not exist"):
        _config(project, plugins, "s3://nobucket/run")
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(key)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(project / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(project / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(ConfigError, match=rf"workdir: s3://{BUCKET}/run: .*no credentials"):
        _config(project, plugins, f"s3://{BUCKET}/run")


def test_a_file_url_is_a_local_workdir(project, plugins):
    config = _config(project, plugins, f"file://{project / 'out'}")
    assert (config.workdir, config.workdir_url, config.workdir_location) == \
        (project / "out", None, str(project / "out"))


def test_an_unreachable_store_is_one_error_line_from_validate(project):
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens there
    (project / "c.yaml").write_text(CONFIG.format(workdir="s3://runs/run"))
    env = {**os.environ, "AWS_ENDPOINT_URL": closed, "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y",
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_MAX_ATTEMPTS": "1"}
    done = subprocess.run([sys.executable, "-m", "spamflow_workflows", "validate", "-c", "c.yaml"], cwd=project,
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 2
    assert "config error" in done.stderr and "workdir: s3://runs/run: cannot use it as workdir" in done.stderr
    assert "Could not connect to the endpoint URL" in done.stderr and "Traceback" not in done.stderr
    assert not (project / "cache").exists() or not any((project / "cache").rglob("stage.json"))


@pytest.mark.slow
def test_the_demo_on_s3_equals_the_local_demo(tmp_path, s3, demo_no_crawl_once):
    """``spamflow demo --no-crawl --workdir s3://runs/demo``: every stage and run.json in the
    bucket, the same host tables and scores as the same demo on a local workdir, a second run
    does nothing, and deleting one stage's stage.json (on a machine with an empty cache, so
    what is done is read from the bucket) redoes that stage alone.  (Without a crawl: two crawls of the demo web fetch pages in
    another order, which moves a few tie-broken features.)"""
    client, env = s3
    client.create_bucket(Bucket=BUCKET)
    url = f"s3://{BUCKET}/demo"

    def demo(workdir: str, cache: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "spamflow_workflows", "demo", "--no-crawl", "--workdir", workdir,
                               "--no-progress"], capture_output=True, text=True, timeout=1800,
                              env={**os.environ, **env, "XDG_CACHE_HOME": str(tmp_path / cache)}, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        if "://" not in workdir:
            return json.loads((tmp_path / workdir / "run.json").read_text())
        return json.loads(client.get_object(Bucket=BUCKET, Key="demo/run.json")["Body"].read())

    local = demo_no_crawl_once["manifest"]["stages"]  # the same demo on a local workdir (conftest)
    first = demo(url, "cache")
    assert first["status"] == "success" and _ran(first) == set(local)
    keys = _keys(client, "demo/")
    for name, stage in first["stages"].items():
        folder = stage["directory"].removeprefix(f"s3://{BUCKET}/")
        assert folder == f"demo/stages/{name}-{local[name]['signature']}" and f"{folder}/stage.json" in keys
    _same_results(env, first["stages"], local)
    _warc_files_are_the_inputs_own_locations(env, client, first["stages"], local)

    assert _ran(demo(url, "cache")) == set()

    # the report, the one stage no other reads: any detector's would redo classify too (17 of
    # the demo's 26 CPU s); a stage and those after it redone is test_deleting_a_local_stage_json_...
    report = first["stages"]["report"]["directory"].removeprefix(f"s3://{BUCKET}/")
    client.delete_object(Bucket=BUCKET, Key=f"{report}/stage.json")
    again = demo(url, "empty-cache")
    assert _ran(again) == _after(first, "report") == {"report"}
    _same_results(env, again["stages"], local)
    assert not list((tmp_path / "empty-cache").rglob("stage-files.json"))  # the listing stays in the bucket
    assert not (demo_no_crawl_once["cache"] / "spamflow").exists()  # a local workdir has no cache


def _warc_files_are_the_inputs_own_locations(env: dict, client, remote: dict, local: dict) -> None:
    """The page table's ``warc_file`` names the demo's WARC files where they are published: their
    URLs in the bucket (which every machine can read), as a local run names its local paths, not
    the driver's cache (issue 42 item 3)."""
    demo_dir = remote["demo"]["directory"]
    warcs = {f"s3://{BUCKET}/{k}" for k in _keys(client, demo_dir.removeprefix(f"s3://{BUCKET}/") + "/")
             if k.endswith(".warc.gz")}
    assert len(warcs) >= 2
    in_table = {row["warc_file"] for row in _s3_table(env, remote["parse"]["outputs"]["pages"])}
    assert in_table == warcs
    local_files = {row["warc_file"] for row in ds.dataset(local["parse"]["outputs"]["pages"]).to_table(
        columns=["warc_file"]).to_pylist()}
    local_demo = local["demo"]["directory"]
    assert {Path(f).relative_to(local_demo).as_posix() for f in local_files} == \
        {w.removeprefix(demo_dir + "/") for w in warcs}


def _same_results(env: dict, remote: dict, local: dict) -> None:
    """Every host table, and the classifier's scores, as in the local run (floats to 1e-9:
    the same code on the same pages, but another process)."""
    for name, stage in local.items():
        assert remote[name]["counts"].keys() == stage["counts"].keys(), name
        for output in [*stage.get("host_tables", {}), *(["scores"] if name == "classify" else [])]:
            assert_close(_s3_table(env, remote[name]["outputs"][output]), _host_table(stage["outputs"][output]),
                         atol=1e-9, where=f"{name}.{output}")
    for key in ("hosts_shown", "quilts_shown", "clusters_shown", "campaigns_shown"):
        assert remote["report"]["counts"][key] == local["report"]["counts"][key], key
