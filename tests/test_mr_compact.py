"""``spamflow.mr.run_job_compact`` on mrjob's local runner: ``run_job_lean`` (the same output as
``run_job``, with every step's files deleted once read: map inputs and outputs, sorted reducer
input, reducer inputs, intermediate step outputs, even with mrjob told to keep its temporary
folder, ``--cleanup NONE``), and when a step's reducer input is sorted its map inputs (and,
with a combiner, the mapper outputs and the combiners' inputs) are gone already, and GNU
sort's temporary runs are compressed.  Shown on the quilt stage's jobs (job (c) has two
steps), the same quilts as the inline runner."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from spamflow_quilt.detector import find_quilts
from spamflow_quilt.mr_gram_df import MRGramDocumentFrequency
from spamflow_quilt.params import QuiltParams
from test_quilt import _shingles, random_corpus

from spamflow.mr.driver import compressed_sort_bin, local_sort_bin, sort_compress_program

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

SPY = textwrap.dedent("""\
    # A sort for mrjob's --sort-bin: logs which map-phase files exist when a step's reducer
    # input is sorted (not a combiner's input: one mapper output of a step with combiners), then sorts.
    import json, os, sys
    inputs = sys.argv[2:]
    task = os.path.dirname(inputs[0])
    kind_dir = os.path.dirname(task)
    step = os.path.dirname(kind_dir)
    if not (os.path.basename(kind_dir) == "mapper" and os.path.isdir(os.path.join(step, "combiner"))):
        left = []
        for kind in ("mapper", "combiner"):
            folder = os.path.join(step, kind)
            for t in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
                for name in ("input", "output"):
                    path = os.path.join(folder, t, name)
                    if os.path.lexists(path):
                        left.append([kind, name, os.path.islink(path)])
        with open(sys.argv[1], "a") as log:
            log.write(json.dumps({"step": step, "inputs": len(inputs), "left": left}) + "\\n")
    os.execvp("sort", ["sort", "-t", "\\t", "-k", "1,1", "-s", *inputs])
""")


@pytest.mark.slow
@pytest.mark.parametrize("flush_rows", [None, 40])  # 40: mappers flush often, and job (a) runs its combiner
def test_map_files_are_gone_when_the_reducer_input_is_sorted(tmp_path, flush_rows):
    pages = random_corpus(3)
    shingles = _shingles(pages, PARAMS.k, tmp_path / "shingles.tsv")
    combiner = bool(flush_rows)
    expected = find_quilts(shingles, tmp_path / "inline", PARAMS, "inline", flush_rows=flush_rows, combiner=combiner)
    assert expected
    spy, log = tmp_path / "spy.py", tmp_path / "sorts.jsonl"
    spy.write_text(SPY)
    kept = tmp_path / "mrjob-tmp"
    got = find_quilts(shingles, tmp_path / "local", PARAMS, "local",
                      ("--sort-bin", f"{sys.executable} {spy} {log}", "--cleanup", "NONE", "--local-tmp-dir", str(kept)),
                      flush_rows=flush_rows, combiner=combiner)
    assert got == expected
    jobs = sorted(p.name.split(".")[0] for p in kept.iterdir())
    assert jobs == ["mr_quilt_snapshot"]  # the stage's one job (jobs (a)-(c) as steps) kept its folder
    assert _left_over(kept) == {}  # and nothing of their steps' files
    sorts = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(sorts) == 4  # its steps: job (a), job (b), job (c)'s two
    for entry in sorts:
        left = {(kind, name) for kind, name, _ in entry["left"]}
        mapped = any(kind == "mapper" and name == "output" and not linked for kind, name, linked in entry["left"])
        combined = ("combiner", "output") in left
        # what this sort reads, and the map inputs of a step without a mapper (its outputs link to them)
        allowed = {("combiner", "output")} if combined else {("mapper", "output")}
        assert left <= (allowed if mapped or combined else {("mapper", "output"), ("mapper", "input")}), entry
    if flush_rows:  # the combiner ran in job (a)
        assert any(kind == "combiner" for e in sorts for kind, _, _ in e["left"])


def test_sort_compress_program_sorts_through_compressed_runs(tmp_path):
    """The chosen program (one is on any machine with gzip) makes sort spill compressed runs
    and still sort: 200,000 shuffled lines through a 64 KB buffer, against Python's sort."""
    program = sort_compress_program()
    if program is None:
        pytest.skip("neither zstd nor gzip works as sort's --compress-program here")
    sort_bin = compressed_sort_bin(MRGramDocumentFrequency)
    assert sort_bin == f"{local_sort_bin(MRGramDocumentFrequency)} --compress-program={shlex.quote(program)}"
    lines = [f"k{(i * 7919) % 200_003:06d}\tv{i}\n" for i in range(200_000)]
    path = tmp_path / "in.tsv"
    path.write_text("".join(lines))
    args = [*shlex.split(sort_bin.replace("-S 512M", "-S 64K")), str(path)]
    done = subprocess.run(args, capture_output=True, text=True, check=True, env={"LC_ALL": "C", "TMPDIR": str(tmp_path),
                                                                                 "PATH": "/usr/bin:/bin"})
    assert done.stdout.splitlines(keepends=True) == sorted(lines, key=lambda line: line.split("\t")[0])
