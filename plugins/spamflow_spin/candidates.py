"""Candidate pairs by the two mrjob jobs: document frequencies, then the prefix filter."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from spamflow.mr import run_job_lean
from spamflow_spin.mr_candidate_pairs import BOUND_PRUNED, PAIRS_COUNTED, PREFIX_DROPPED, MRCandidatePairs
from spamflow_spin.mr_immutable_frequency import MRImmutableFrequency
from spamflow_spin.params import SpinParams


def task_args(runner: str, runner_args: Sequence[str]) -> tuple[str, ...]:
    """``runner_args`` plus, on the ``local`` runner, ``--no-bootstrap-mrjob``: its tasks run
    this interpreter, which has mrjob installed, so they need not import mrjob from a zip
    that mrjob builds without bytecode (recompiled in each of a step's ~12 task processes:
    a third of the stage's fixed cost on a small corpus, measured in docs/spin.md).  Left
    alone when the user names another Python for the tasks."""
    args = tuple(runner_args)
    own_python = not {"--python-bin", "--task-python-bin", "--bootstrap-mrjob"} & set(args)
    if runner == "local" and own_python and "--no-bootstrap-mrjob" not in args:
        args += ("--no-bootstrap-mrjob",)
    return args


@dataclass
class Candidates:
    pairs: list[tuple[int, int]]
    """(doc_a, doc_b), doc_a < doc_b, sorted."""
    shared_immutables: int
    """Immutables on two pages or more (the lines of the frequency file)."""
    dropped: int
    """Immutables on more than ``max_pages`` pages, never indexed."""
    prefix_dropped: int
    """Pages whose probe prefix reached a dropped immutable (no recall guarantee for them)."""
    pairs_counted: int
    """Pair counts made at shared prefix immutables, before adding them up (the jobs' work)."""
    bound_pruned: int = 0
    """Pairs counted often enough but dropped by the accumulated positional bound (their overlap
    cannot reach the threshold's): ``len(pairs) + bound_pruned`` is what the count filter alone kept."""


def find_candidates(lines: Path, work: Path, *, threshold: float, max_pages: int, min_shared: int, runner: str,
                    runner_args: Sequence[str] = ()) -> Candidates:
    """Run both jobs over ``lines`` (``doc<TAB>immutable ...``), outputs kept in ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    runner_args = task_args(runner, runner_args)
    frequencies = run_job_lean(MRImmutableFrequency, [lines], work / "frequencies.tsv", runner=runner,
                          runner_args=runner_args)
    shared = dropped = 0
    with open(frequencies, encoding="utf-8") as fh:
        for line in fh:
            shared += 1
            dropped += int(line.rpartition("\t")[2]) > max_pages
    out = run_job_lean(MRCandidatePairs, [lines], work / "candidate_pairs.tsv", runner=runner, runner_args=runner_args,
                  args=["--threshold", repr(threshold), "--max-pages", str(max_pages),
                        "--min-shared", str(min_shared), "--frequencies", str(frequencies)])
    pairs, prefix_dropped, counted, pruned = [], 0, 0, 0
    with open(out, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            key, tab, value = line.rstrip("\n").partition("\t")
            if key == PREFIX_DROPPED:
                prefix_dropped += int(value)
                continue
            if key == PAIRS_COUNTED:
                counted += int(value)
                continue
            if key == BOUND_PRUNED:
                pruned += int(value)
                continue
            a, _, b = key.partition(" ")
            if not tab or not a.lstrip("-").isdigit() or not b.lstrip("-").isdigit():
                raise ValueError(f"{out}:{number}: not 'doc_a doc_b<TAB>count': {line[:80]!r}")
            pairs.append((int(a), int(b)))
    return Candidates(sorted(pairs), shared, dropped, prefix_dropped, counted, pruned)


def stage_candidates(lines: Path, work: Path, params: SpinParams, runner: str, runner_args: Sequence[str],
                     counts: Counter[str]) -> list[tuple[int, int]]:
    """:func:`find_candidates` with the stage's parameters, its figures added to ``counts``
    (the memory and mapreduce engines call this)."""
    found = find_candidates(lines, work, threshold=params.immutable_threshold, max_pages=params.max_pages,
                            min_shared=params.min_shared, runner=runner, runner_args=runner_args)
    return add_candidate_counts(found, counts)


def add_candidate_counts(found: Candidates, counts: Counter[str]) -> list[tuple[int, int]]:
    """The candidates' figures added to the stage's ``counts``; their pairs."""
    counts["immutables_dropped_popular"] += found.dropped
    counts["pages_prefix_dropped"] += found.prefix_dropped
    counts["candidate_pair_counts"] += found.pairs_counted
    counts["candidate_pairs_bound_pruned"] += found.bound_pruned
    return found.pairs


def candidate_pairs_count(candidates: list[tuple[int, int]], counts: Counter[str]) -> int:
    """The ``candidate_pairs`` count: the pairs the count filter keeps, those the positional bound
    then drops included (its meaning before that bound: the contract of run.json's counts)."""
    return len(candidates) + counts["candidate_pairs_bound_pruned"]

