"""``spamflow.mr.run_job_lean`` on mrjob's local runner: the same output as ``run_job``, with
every step's files deleted once read (map inputs and outputs, sorted reducer input, reducer
inputs, intermediate step outputs), shown on the quilt stage's three jobs (job (c) has two
steps) with mrjob told to keep its temporary folder (``--cleanup NONE``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from spamflow_quilt.detector import find_quilts
from spamflow_quilt.params import QuiltParams
from test_quilt import _shingles, random_corpus

PARAMS = QuiltParams(k=3, m=5, c=2, theta=0.4, foreign="domain")
READ_ONCE = {"input", "output", "sorted-input"}
"""The local runner's per-task and sort files: read by the next phase, then not needed."""


def _left_over(folder: Path) -> dict[str, int]:
    """Bytes of the task and intermediate files mrjob left under ``folder``, by kind."""
    left: dict[str, int] = {}
    for root, _dirs, files in os.walk(folder):
        parts = Path(root).relative_to(folder).parts
        for name in files:
            kind = name if name in READ_ONCE else "step-output" if "step-output" in parts else None
            if kind:
                left[kind] = left.get(kind, 0) + os.lstat(os.path.join(root, name)).st_size
    return left


@pytest.mark.slow
def test_lean_local_run_leaves_no_step_files_and_finds_the_same_quilts(tmp_path):
    pages = random_corpus(3)
    shingles = _shingles(pages, PARAMS.k, tmp_path / "shingles.tsv")
    expected = find_quilts(shingles, tmp_path / "inline", PARAMS, "inline")
    assert expected  # the corpus has quilts: job (c) runs both its steps on real triples
    kept = tmp_path / "mrjob-tmp"
    got = find_quilts(shingles, tmp_path / "local", PARAMS, "local",
                      ("--cleanup", "NONE", "--local-tmp-dir", str(kept)))
    assert got == expected
    jobs = sorted(p.name.split(".")[0] for p in kept.iterdir())
    assert jobs == ["mr_gram_df", "mr_patch_fraction", "mr_quilt_cover"]  # all three kept their folders
    assert _left_over(kept) == {}
