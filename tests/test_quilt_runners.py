"""The same quilt job files on Spark in local mode, against the brute-force reference.  On
Hadoop streaming (mrjob's ``hadoop`` runner, a strict streaming emulation):
``tests/test_hadoop_runner.py``."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import spamflow_quilt
from spamflow_quilt.detector import find_quilts
from spamflow_quilt.params import QuiltParams
from test_quilt import _shingles, random_corpus

from spamflow.mr.driver import applications_started

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
    """The stage's one job (jobs (a)-(c) as four steps): ONE Spark application."""
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")  # keep Spark on loopback
    pages = random_corpus(11, n=30)
    before = applications_started()
    found = find_quilts(_shingles(pages, PARAMS.k, tmp_path / "shingles.tsv"), tmp_path, PARAMS, "spark",
                        ("--spark-master", "local[2]"))
    assert applications_started() - before == 1
    expected = _expected(pages)
    assert expected and [(d, c["sources"]) for d, c in found] == expected


@pytest.mark.parametrize("module", ["mr_gram_df", "mr_patch_fraction", "mr_quilt_cover", "mr_quilt_snapshot"])
def test_job_modules_import_without_spamflow(module):
    """A Hadoop or Spark worker receives only the job's package (the driver's --py-files zip)."""
    code = f"import sys; sys.modules['spamflow'] = None; import spamflow_quilt.{module}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
