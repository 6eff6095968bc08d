"""Where a MapReduce stage's time goes on mrjob's local runner: each job's phases timed.

Run from the repository root::

    PYTHONPATH=$PWD:$PWD/plugins:$PWD/workflows .venv/bin/python benchmarks/mr_phases.py run \\
        -c CONFIG --no-progress 2> small.log              # any `spamflow run` arguments
    .venv/bin/python benchmarks/mr_phases.py compare small.log large.log

``run`` is ``spamflow run`` in this process (keep ``stages_at_once: 1``, so every stage runs
here) with ``spamflow.mr.driver``'s jobs wrapped: for every job, one stderr line per phase of
the local runner (split the map input, run the mappers and combiners, sort, split the reduce
input, run the reducers) and one for the whole job, with wall and CPU seconds (this process
and its finished children: the task processes and GNU sort).  ``compare`` pairs the first
occurrence of each (job, step, phase) in two such logs, e.g. a snapshot of 5 x 10^4 pages and
one of 5 x 10^5, and prints the ratios: a phase whose CPU grows faster than the input is
where a stage stops being linear (docs/quilt.md and docs/spin.md quote such tables).
"""

from __future__ import annotations

import re
import resource
import sys
import time
from typing import Any

PHASES = ("_split_mapper_input", "_run_mappers_and_combiners", "_sort_reducer_input", "_split_reducer_input",
          "_run_reducers")
LINE = re.compile(r"(PHASE|JOB) (\w+)(?: step (\d+) (\w+))?:\s+([\d.]+) s wall\s+([\d.]+) s cpu")


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed_run(run: Any) -> Any:
    """``spamflow.mr.driver._run`` with every local-runner phase and the whole job timed."""
    def wrapped(job_class: Any, inputs: Any, output: Any, **kwargs: Any) -> Any:
        make_runner = job_class.make_runner

        def timed_runner(job: Any) -> Any:
            runner = make_runner(job)
            for name in PHASES:
                phase = getattr(runner, name, None)
                if phase is None:
                    continue

                def timed(*args: Any, _phase: Any = phase, _name: str = name) -> Any:
                    wall, cpu = time.perf_counter(), cpu_seconds()
                    result = _phase(*args)
                    step = args[1] if _name == "_split_mapper_input" else args[0]
                    print(f"PHASE {job_class.__name__} step {step} {_name}: {time.perf_counter() - wall:8.2f} s wall "
                          f"{cpu_seconds() - cpu:8.2f} s cpu", file=sys.stderr, flush=True)
                    return result
                setattr(runner, name, timed)
            return runner

        job_class.make_runner = timed_runner
        wall, cpu = time.perf_counter(), cpu_seconds()
        try:
            return run(job_class, inputs, output, **kwargs)
        finally:
            job_class.make_runner = make_runner
            print(f"JOB {job_class.__name__}: {time.perf_counter() - wall:8.2f} s wall {cpu_seconds() - cpu:8.2f} s cpu",
                  file=sys.stderr, flush=True)
    return wrapped


def load(path: str) -> dict[tuple[str, str, str], tuple[float, float]]:
    """(job, step, phase) -> (wall, CPU) of its first occurrence in a ``run`` log."""
    found: dict[tuple[str, str, str], tuple[float, float]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            match = LINE.match(line)
            if match:
                kind, job, step, phase, wall, cpu = match.groups()
                key = (job, step or "-", phase or "whole job")
                found.setdefault(key, (float(wall), float(cpu)))
    return found


def compare(small: str, large: str) -> None:
    a, b = load(small), load(large)
    print(f"{'job':<26} {'step':>4}  {'phase':<28} {'CPU s':>9} {'->':^4} {'CPU s':<9} {'ratio':>6}")
    for key, (_, cpu) in b.items():
        if key in a:
            print(f"{key[0]:<26} {key[1]:>4}  {key[2]:<28} {a[key][1]:9.2f} {'->':^4} {cpu:<9.2f} "
                  f"{cpu / max(a[key][1], 1e-3):6.1f}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["compare"] and len(argv) == 3:
        compare(argv[1], argv[2])
        return 0
    if argv[:1] == ["run"]:
        import spamflow.mr.driver as driver
        from spamflow_workflows.cli import main as spamflow
        driver._run = timed_run(driver._run)
        return int(spamflow(["run", *argv[1:]]) or 0)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":  # the local runner's task pools re-import this module
    raise SystemExit(main(sys.argv[1:]))
