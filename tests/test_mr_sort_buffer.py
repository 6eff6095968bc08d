"""On the local runner the driver caps GNU sort's memory (``-S``) and keeps the sort mrjob would
run for the job (a stable sort on the key, or whole lines for a job that sorts values): without
the cap, sort sized its buffer from the machine's memory, 3.2 GB on 100,000 pages.  A user's own
``--sort-bin`` is kept, and the output is the inline runner's."""

from __future__ import annotations

import shlex
from pathlib import Path

from mrjob.job import MRJob

from spamflow.mr.driver import SORT_BUFFER, job_argv, run_job
from spamflow_spin.mr_immutable_frequency import MRImmutableFrequency


class _SortsValues(MRJob):
    SORT_VALUES = True


def _mrjob_default_sort(job_class: type[MRJob]) -> list[str]:
    job = job_class(args=["-r", "local", "--no-conf"])
    with job.make_runner() as runner:
        return list(runner._sort_bin())  # mrjob's own choice when no --sort-bin is given


def _sort_bin(argv: list[str]) -> list[str]:
    return shlex.split(argv[argv.index("--sort-bin") + 1])


def test_the_local_sort_is_mrjobs_own_with_a_capped_buffer():
    for job_class in (MRImmutableFrequency, _SortsValues):
        argv = job_argv(job_class, ["in.tsv"], runner="local")
        assert _sort_bin(argv) == _mrjob_default_sort(job_class) + ["-S", SORT_BUFFER]
    assert "--sort-bin" not in job_argv(MRImmutableFrequency, ["in.tsv"], runner="inline")
    mine = job_argv(MRImmutableFrequency, ["in.tsv"], runner="local", runner_args=["--sort-bin", "sort -S 2G"])
    assert mine.count("--sort-bin") == 1 and _sort_bin(mine) == ["sort", "-S", "2G"]


def test_a_job_on_the_capped_local_sort_gives_the_inline_output(tmp_path: Path):
    lines = tmp_path / "immutables.tsv"
    lines.write_text("".join(f"{doc}\t{' '.join(f'w{(doc * k) % 17}' for k in range(1, 9))}\n"
                             for doc in range(60)))
    inline = run_job(MRImmutableFrequency, [lines], tmp_path / "inline.tsv", runner="inline")
    local = run_job(MRImmutableFrequency, [lines], tmp_path / "local.tsv", runner="local")
    assert sorted(local.read_text().splitlines()) == sorted(inline.read_text().splitlines())
    assert len(inline.read_text().splitlines()) > 5
