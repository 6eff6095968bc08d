"""The same quilt job files on other runners: Spark in local mode, and Hadoop streaming
(each step's mapper, sort, combiner, sort, reducer as separate processes), against the
brute-force reference."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import spamflow_quilt
from spamflow_quilt.detector import find_quilts
from spamflow_quilt.mr_gram_df import MRGramDocumentFrequency
from spamflow_quilt.mr_patch_fraction import MRPatchFraction
from spamflow_quilt.mr_quilt_cover import MRQuiltCover
from spamflow_quilt.params import QuiltParams
from test_quilt import _shingles, random_corpus

from quilt_reference import reference_quilts

JOBS_DIR = Path(spamflow_quilt.__file__).parent
PARAMS = QuiltParams(k=3, m=5, c=2, theta=0.4, foreign="domain")


def _expected(pages) -> list[tuple[int, list[list[int]]]]:
    return [(q["doc_id"], [[s["doc_id"], s["grams"]] for s in q["sources"]])
            for q in reference_quilts(pages, PARAMS.k, PARAMS.m, PARAMS.c, PARAMS.theta, PARAMS.foreign)]


@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None or not shutil.which("java"),
                    reason="needs pyspark (pip install -e '.[test]') and a Java runtime")
@pytest.mark.slow
def test_spark_local_mode_equals_the_reference(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")  # keep Spark on loopback
    pages = random_corpus(11, n=30)
    found = find_quilts(_shingles(pages, PARAMS.k, tmp_path / "shingles.tsv"), tmp_path, PARAMS, "spark",
                        ("--spark-master", "local[2]"))
    expected = _expected(pages)
    assert expected and [(d, c["sources"]) for d, c in found] == expected


def _streaming_step(script: Path, step: int, desc: dict, args: list[str], data: bytes) -> bytes:
    """One Hadoop streaming step: mapper | sort | combiner | sort | reducer, each a process."""
    env = {**os.environ, "LC_ALL": "C", "PYTHONPATH": os.pathsep.join(filter(None, [
        str(JOBS_DIR.parent), os.environ.get("PYTHONPATH", "")]))}

    def proc(role: str, stdin: bytes) -> bytes:
        cmd = [sys.executable, str(script), f"--step-num={step}", f"--{role}", *args]
        return subprocess.run(cmd, input=stdin, capture_output=True, check=True, env=env, timeout=300).stdout

    def sort(stdin: bytes) -> bytes:
        return subprocess.run(["sort"], input=stdin, capture_output=True, check=True, env=env, timeout=300).stdout

    if "mapper" in desc:
        data = proc("mapper", data)
    data = sort(data)
    if "combiner" in desc:
        data = sort(proc("combiner", data))
    if "reducer" in desc:
        data = proc("reducer", data)
    return data


def _streaming_job(job_class, args: list[str], inputs: list[Path]) -> bytes:
    script = JOBS_DIR / f"{job_class.__module__.split('.')[-1]}.py"
    data = b"".join(p.read_bytes() for p in inputs)
    job = job_class(args=args)
    for i, step in enumerate(job.steps()):
        data = _streaming_step(script, i, step.description(i), args, data)
    return data


def test_hadoop_streaming_processes_equal_the_reference(tmp_path):
    pages = random_corpus(12, n=30)
    shingles = _shingles(pages, PARAMS.k, tmp_path / "shingles.tsv")
    m = ["--m", str(PARAMS.m)]
    df = tmp_path / "df.tsv"
    df.write_bytes(_streaming_job(MRGramDocumentFrequency, m, [shingles]))
    patchy = tmp_path / "patchy.tsv"
    patchy.write_bytes(_streaming_job(MRPatchFraction, [*m, "--theta", str(PARAMS.theta)], [df]))
    covers = _streaming_job(MRQuiltCover, [*m, "--c", str(PARAMS.c), "--foreign", PARAMS.foreign],
                            [patchy])
    found = sorted((json.loads(k), json.loads(v)["sources"])
                   for k, v in (line.split("\t", 1) for line in covers.decode().splitlines()))
    expected = _expected(pages)
    assert expected and found == expected


@pytest.mark.parametrize("module", ["mr_gram_df", "mr_patch_fraction", "mr_quilt_cover"])
def test_job_modules_import_without_spamflow(module):
    """A Hadoop or Spark worker receives only the job's package (the driver's --py-files zip)."""
    code = f"import sys; sys.modules['spamflow'] = None; import spamflow_quilt.{module}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
