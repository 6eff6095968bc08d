"""The cluster path as docs/running-mapreduce.md documents it, on a real Spark standalone
cluster (a master and two workers started from the installed pyspark on 127.0.0.1) with the
workdir on a loopback S3 server (moto): ``mapreduce: {runner: spark, args: [--spark-master,
"spark://127.0.0.1:PORT"]}`` and nothing else about Spark.  Every stage's outputs equal the
same config's on the inline runner (``benchmarks/compare_runs.py``'s rules), run.json counts
the applications, and the run leaves nothing in its temp folder.

Small on purpose (one snapshot's WARC file; parse in process; quilt, whose jobs the issue
saw fail, as the MapReduce detector: one application, its three jobs as one): every Spark
application costs its start-up (20 s to a minute on this two-core machine), whatever the data
size.  The reference
run is on the inline runner, whose outputs equal the local runner's for every job
(``tests/test_*_mapreduce.py``, ``tests/test_quilt_runners.py``) without the local runner's
minutes of fixed cost."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from spark_cluster import standalone_cluster, why_no_cluster

from warc_factory import write_two_months

pytest.importorskip("s3fs", reason="s3fs writes s3:// workdirs")
if why_no_cluster():
    pytest.skip(why_no_cluster(), allow_module_level=True)

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "compare_runs.py"
_spec = importlib.util.spec_from_file_location("compare_runs", SCRIPT)
compare_runs = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("compare_runs", compare_runs)
_spec.loader.exec_module(compare_runs)

CONFIG = """\
workdir: {workdir}
cache_dir: cache
input:
  warc: {{2026-01: [jan/*.warc.gz]}}
parse: {{engine: memory}}
mapreduce: {mapreduce}
detectors:
  obvious: {{}}
  quilt: {{}}
"""


def _spamflow_run(project: Path, config: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    (project / "spamflow.yaml").write_text(config)
    return subprocess.run([sys.executable, "-m", "spamflow_workflows", "run", "-c", str(project / "spamflow.yaml"),
                           "--no-progress"], cwd=project, env=env, capture_output=True, text=True, timeout=1800)


def _download(client, bucket: str, prefix: str, to: Path) -> None:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    for key in (obj["Key"] for page in pages for obj in page.get("Contents", [])):
        path = to / key.removeprefix(prefix)
        path.parent.mkdir(parents=True, exist_ok=True)
        client.download_file(bucket, key, str(path))


@pytest.mark.slow
def test_the_documented_cluster_config_runs_on_a_standalone_cluster_with_an_s3_workdir(tmp_path, s3):
    client, aws = s3
    client.create_bucket(Bucket="runs")
    project = tmp_path / "project"
    project.mkdir()
    write_two_months(project)
    temp = tmp_path / "temp"  # the runs' TMPDIR: must be empty after each
    temp.mkdir()
    env = {**os.environ, **aws, "TMPDIR": str(temp), "SPARK_LOCAL_IP": "127.0.0.1",
           "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    local = _spamflow_run(project, CONFIG.format(workdir="local-run", mapreduce="{runner: inline}"), env)
    assert local.returncode == 0, local.stdout + local.stderr
    assert not list(temp.iterdir())
    (tmp_path / "cluster").mkdir()
    with standalone_cluster(tmp_path / "cluster") as master:
        documented = f'{{runner: spark, args: [--spark-master, "{master}"]}}'
        done = _spamflow_run(project, CONFIG.format(workdir="s3://runs/cluster", mapreduce=documented), env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not list(temp.iterdir()), sorted(p.name for p in temp.iterdir())

    downloaded = tmp_path / "downloaded"
    _download(client, "runs", "cluster/", downloaded)
    for page in downloaded.rglob("*.html"):  # the report names its workdir: the URL, here the copy's folder
        page.write_text(page.read_text(encoding="utf-8").replace("s3://runs/cluster", str(downloaded)), "utf-8")
    remote = json.loads((downloaded / "run.json").read_text())
    ours = json.loads((project / "local-run" / "run.json").read_text())
    assert remote["status"] == "success" and set(remote["stages"]) == set(ours["stages"])
    tol = compare_runs.Tolerance()
    compared = 0
    for name, stage in remote["stages"].items():
        folder = downloaded / "stages" / stage["directory"].rsplit("/", 1)[1]
        result = compare_runs.compare_stage(name, Path(ours["stages"][name]["directory"]), folder, tol)
        assert not result.differences, (name, result.differences)
        compared += 1
    assert compared == len(ours["stages"]) >= 5
    apps = {name: stage["mapreduce_applications"] for name, stage in remote["stages"].items()}
    # quilt's three jobs as one job, one application (mr_quilt_snapshot); the inline reference ran
    # quilt's memory engine (engine: auto on inline and local), so the cluster's job is compared with it
    assert apps["quilt"] == 1 and ours["stages"]["quilt"]["mapreduce_applications"] == 0
    assert apps["parse"] == apps["obvious"] == 0
