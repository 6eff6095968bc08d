"""The one place that starts mrjob jobs.

Jobs stay plain mrjob scripts (one job per module, parameters as passthru args, no YAML);
this driver adds the runner, the runner's extra arguments from the config, and, for every
runner but ``inline``, a zip of the job's own package passed as ``--py-files``, so the same
job file runs on a laptop, on Spark and on Hadoop.  Output is streamed with ``cat_output``
into a local file (a local ``--output-dir`` breaks mrjob's Spark runner).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import multiprocessing.util
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mrjob.job import MRJob

from spamflow.atomic import atomic_path
from spamflow.errors import SpamflowError
from spamflow.mr.keyed_sort import sort_lines_by_key

logging.getLogger("mrjob.conf").setLevel(logging.ERROR)  # "No configs specified" on every --no-conf run


@functools.cache
def package_zip(package: str) -> Path:
    """A zip of an importable package, for ``--py-files`` (built once per process, and its
    folder removed when the process that built it ends: :func:`_remove_at_exit`)."""
    module = sys.modules.get(package) or __import__(package)
    root = Path(module.__file__ or "").parent
    folder = Path(tempfile.mkdtemp(prefix="spamflow-pyfiles-"))
    _remove_at_exit(folder)
    out = folder / f"{package}.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.rglob("*.py")):
            zf.write(path, Path(package) / path.relative_to(root))
    return out


def _remove_at_exit(folder: Path) -> None:
    """Remove ``folder`` when this process ends: at interpreter exit, or, in a process that
    multiprocessing started (Luigi's workers with ``stages_at_once`` > 1, which end with
    ``os._exit`` and skip ``atexit``), at its exit too.  Only the process that made it removes it
    (a forked child inherits the cache and the folder, not the duty)."""
    owner = os.getpid()

    def remove() -> None:
        if os.getpid() == owner:
            shutil.rmtree(folder, ignore_errors=True)

    atexit.register(remove)
    multiprocessing.util.Finalize(None, remove, exitpriority=0)


SORT_BUFFER = "512M"
"""GNU sort's memory on the local runner: beyond it, sort spills to mrjob's temporary folder.
Left to itself, sort sizes its buffer from the machine's memory (3.2 GB seen on 100,000 pages)."""


def local_sort_bin(job_class: type[MRJob]) -> str:
    """mrjob's own sort command for this job (whole lines if it sorts values, else a stable sort
    on the key alone), with its buffer capped at :data:`SORT_BUFFER`."""
    if job_class.SORT_VALUES:
        return f"sort -S {SORT_BUFFER}"
    return f"sort -t '\t' -k 1,1 -s -S {SORT_BUFFER}"


def spark_master(runner_args: Sequence[str]) -> str:
    """The ``--spark-master`` of ``runner_args`` (mrjob's default: ``local``)."""
    args = list(runner_args)
    return args[args.index("--spark-master") + 1] if "--spark-master" in args[:-1] else "local"


def scratch_args(runner: str, runner_args: Sequence[str], scratch: Path) -> list[str]:
    """Runner arguments that keep a job's temporary files in ``scratch`` (one folder per job,
    removed after it), unless ``runner_args`` name their own: mrjob's ``--local-tmp-dir``, and
    on the spark runner ``--spark-tmp-dir`` when the master is local or there is no ``hadoop``
    command (mrjob's default for any other master is ``hdfs:///tmp/mrjob``, which needs one;
    a folder on this machine serves a standalone cluster on this machine, a cluster of several
    machines without HDFS needs an ``s3://`` one: docs/running-mapreduce.md)."""
    args = []
    if "--local-tmp-dir" not in runner_args:
        args += ["--local-tmp-dir", str(scratch / "local")]
    if runner == "spark" and "--spark-tmp-dir" not in runner_args and (
            spark_master(runner_args).startswith("local") or shutil.which("hadoop") is None):
        args += ["--spark-tmp-dir", str(scratch / "spark")]
    return args


def concrete_runner(runner: str) -> str:
    """mrjob's name for ``runner``: ``auto`` that no run resolved (a command calling a job
    directly, where the input's size is not known) is ``local``."""
    return "local" if runner == "auto" else runner


def job_argv(job_class: type[MRJob], inputs: Sequence[Path | str], *, runner: str, args: Sequence[str] = (),
             runner_args: Sequence[str] = ()) -> list[str]:
    """The mrjob command line ``run_job`` starts ``job_class`` with."""
    runner = concrete_runner(runner)
    argv = ["-r", runner, *runner_args, *map(str, args)]
    if runner in ("inline", "local"):
        argv[2:2] = ["--no-conf", "--quiet"]  # laptops: ignore ~/.mrjob.conf, no chatter; clusters read it
    if runner == "local" and sys.version_info < (3, 12):
        # mrjob imports distutils; setuptools' replacement for it adds ~0.1 s to each of a
        # job's dozen task processes, Python's own (there until 3.12) does not
        argv += ["--cmdenv", "SETUPTOOLS_USE_DISTUTILS=stdlib"]
    if runner == "local" and "--sort-bin" not in runner_args:
        argv += ["--sort-bin", local_sort_bin(job_class)]
    if runner == "spark" and "--python-bin" not in runner_args:
        argv += ["--python-bin", sys.executable]  # Spark's workers: this interpreter (and its packages), not python3
    if runner != "inline":
        argv += ["--py-files", str(package_zip(job_class.__module__.split(".")[0]))]
    argv += [str(p) for p in inputs]
    return argv


_applications = 0


def applications_started() -> int:
    """mrjob jobs this process has started: on the spark runner each is one Spark application
    (one ``spark-submit``, its start-up cost paid once), however many steps it has.  A stage's
    count is the difference over its run (``mapreduce_applications`` in run.json)."""
    return _applications


def run_job(job_class: type[MRJob], inputs: Sequence[Path], output: Path, *, runner: str,
            args: Sequence[str] = (), runner_args: Sequence[str] = ()) -> Path:
    """Run ``job_class`` over ``inputs`` and write its output lines to ``output``."""
    return _run(job_class, inputs, output, runner=runner, args=args, runner_args=runner_args, lean=False)


def _run(job_class: type[MRJob], inputs: Sequence[Path], output: Path, *, runner: str, args: Sequence[str],
         runner_args: Sequence[str], lean: bool, compact: bool = False, sort_by_key: bool = False) -> Path:
    """``run_job``; ``lean``: the local runner's files deleted as soon as they are read;
    ``compact``: map inputs as soon as mapped (``run_job_compact``); ``sort_by_key``:
    shuffles of few lines sorted by moving their offsets."""
    global _applications
    runner = concrete_runner(runner)
    scratch = Path(tempfile.mkdtemp(prefix="spamflow-mr-"))
    try:
        runner_args = [*runner_args, *scratch_args(runner, runner_args, scratch)]
        argv = job_argv(job_class, inputs, runner=runner, args=args, runner_args=runner_args)
        job = job_class(args=argv)
        _applications += 1
        with job.make_runner() as mr_runner, atomic_path(output) as tmp:
            try:
                if lean:
                    _delete_when_read(mr_runner)
                if compact:
                    _delete_map_inputs_when_mapped(mr_runner)
                if sort_by_key:
                    _sort_few_lines_by_key(mr_runner)
                mr_runner.run()
                with open(tmp, "wb") as fh:
                    for chunk in mr_runner.cat_output():
                        fh.write(chunk)
            finally:
                _remove_spark_tmp_dir(mr_runner)
    except Exception as exc:
        raise SpamflowError(f"MapReduce job {job_class.__name__} failed on the {runner!r} runner: {exc}") from exc
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return output


def _remove_spark_tmp_dir(mr_runner: Any) -> None:
    """The spark runner's job folder (``<spark-tmp-dir>/<job key>``: its step outputs and
    output), which mrjob's cleanup leaves wherever it is (this machine, S3, HDFS)."""
    folder = getattr(mr_runner, "_spark_tmp_dir", None)
    if folder:
        with contextlib.suppress(Exception):  # cleanup must not hide the job's own error
            if mr_runner.fs.exists(folder):
                mr_runner.fs.rm(folder)


# --- run_job_lean: the local runner's files deleted as soon as they are read --------------------
# A separate function, not an option of run_job: it reaches into mrjob's local runner (0.7.x's
# SimMRJobRunner phases), so only stages that need it use it, and run_job stays as it was.


def run_job_lean(job_class: type[MRJob], inputs: Sequence[Path], output: Path, *, runner: str,
                 args: Sequence[str] = (), runner_args: Sequence[str] = ()) -> Path:
    """``run_job``, but on the ``local`` runner every file of a step is deleted once the next
    phase has read it, instead of when the job ends: the previous step's output once this
    step's map input is split from it, the map tasks' inputs and outputs once sorted, the
    sorted file once split between the reduce tasks, their inputs once reduced.  mrjob keeps
    them all to the end, so a job whose steps shuffle X bytes holds ~4X (split, sorted, split
    again, output) per step at once; here at most ~2X.  A shuffle of at most
    :data:`spamflow.mr.keyed_sort.MAX_LINES` lines (quilt's and spin's jobs send one long
    record per bucket and map task) is sorted by moving offsets
    (:func:`~spamflow.mr.keyed_sort.sort_lines_by_key`: one read and one write at any size, no
    temporary runs) rather than by GNU sort, unless ``runner_args`` name a ``--sort-bin``.
    Other runners: ``run_job``."""
    runner = concrete_runner(runner)
    local = runner == "local"
    return _run(job_class, inputs, output, runner=runner, args=args, runner_args=runner_args, lean=local,
                sort_by_key=local and "--sort-bin" not in runner_args)


def _delete_when_read(runner: Any) -> None:
    """Wrap the local runner's phases so that each deletes the files the phase before it wrote
    once it has read them (the names are mrjob's own path methods)."""
    split_map, sort, split_reduce, reduce = (runner._split_mapper_input, runner._sort_reducer_input,
                                             runner._split_reducer_input, runner._run_reducers)

    def split_mapper_input(input_paths: list[str], step_num: int) -> Any:
        splits = split_map(input_paths, step_num)
        if step_num > 0:  # step 0 reads the job's own inputs
            shutil.rmtree(runner._output_dir_for_step(step_num - 1), ignore_errors=True)
        return splits

    def sort_reducer_input(step_num: int, num_map_tasks: int) -> None:
        sort(step_num, num_map_tasks)
        for task in range(num_map_tasks):
            for kind in ("mapper", "combiner"):
                _remove(runner._task_input_path(kind, step_num, task))
                _remove(runner._task_output_path(kind, step_num, task))

    def split_reducer_input(step_num: int) -> int:
        tasks = split_reduce(step_num)
        _remove(runner._sorted_reducer_input_path(step_num))
        return tasks

    def run_reducers(step_num: int, num_reducer_tasks: int) -> None:
        reduce(step_num, num_reducer_tasks)
        for task in range(num_reducer_tasks):
            _remove(runner._task_input_path("reducer", step_num, task))

    runner._split_mapper_input = split_mapper_input
    runner._sort_reducer_input = sort_reducer_input
    runner._split_reducer_input = split_reducer_input
    runner._run_reducers = run_reducers


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


# --- run_job_compact: run_job_lean, with map inputs deleted once mapped and shuffles sorted by offset
# Another separate function (quilt's jobs use it; run_job is as it was): on the local runner, a
# step whose shuffle outgrows SORT_BUFFER and keyed_sort's line limit makes GNU sort write its
# temporary runs beside the map inputs, map outputs and sorted file, one more copy than a smaller step.

SORT_COMPRESSORS = ("zstd", "gzip")
"""Programs tried, in order, for GNU sort's ``--compress-program``: zstd is fast and shrinks
base64 text by its entropy coding (lz4, having none, barely does); gzip is on every machine."""


def run_job_compact(job_class: type[MRJob], inputs: Sequence[Path], output: Path, *, runner: str,
                    args: Sequence[str] = (), runner_args: Sequence[str] = ()) -> Path:
    """``run_job_lean``, and on the ``local`` runner also: each map task's input deleted as
    soon as the map tasks have run (not once sorted), the combiners' inputs too, and a shuffle
    too large for :func:`~spamflow.mr.keyed_sort.sort_lines_by_key` sorted by GNU sort with
    its temporary runs compressed (:func:`compressed_sort_bin`; a ``--sort-bin`` in
    ``runner_args`` sorts every shuffle instead), so that a step holds about two copies of
    its shuffle at any size.  Other runners: ``run_job``."""
    runner = concrete_runner(runner)
    if runner != "local":
        return run_job(job_class, inputs, output, runner=runner, args=args, runner_args=runner_args)
    sort_by_key = "--sort-bin" not in runner_args  # a sort the user names is the sort used
    if sort_by_key:
        runner_args = [*runner_args, "--sort-bin", compressed_sort_bin(job_class)]
    return _run(job_class, inputs, output, runner=runner, args=args, runner_args=runner_args, lean=True,
                compact=True, sort_by_key=sort_by_key)


def compressed_sort_bin(job_class: type[MRJob]) -> str:
    """:func:`local_sort_bin` with ``--compress-program`` set to the first of
    :data:`SORT_COMPRESSORS` that works with this machine's sort; without it if none does
    (mrjob falls back to sorting in memory when sort fails, so a program is only given once
    tried)."""
    program = sort_compress_program()
    sort_bin = local_sort_bin(job_class)
    return sort_bin if program is None else f"{sort_bin} --compress-program={shlex.quote(program)}"


@functools.cache
def sort_compress_program() -> str | None:
    """The path of the first of :data:`SORT_COMPRESSORS` with which ``sort`` sorts a small
    input through compressed temporary files correctly, or None."""
    lines = [b"%d\n" % ((i * 7919) % 5003) for i in range(5003)]
    with tempfile.TemporaryDirectory(prefix="spamflow-sortcheck-") as folder:
        path = Path(folder) / "lines"
        path.write_bytes(b"".join(lines))
        for name in SORT_COMPRESSORS:
            program = shutil.which(name)
            if program is None:
                continue
            try:
                done = subprocess.run(["sort", "-S", "4K", "-T", folder, f"--compress-program={program}", str(path)],
                                      capture_output=True, timeout=30, check=False,
                                      env=dict(os.environ, LC_ALL="C"))  # as mrjob sorts
            except (OSError, subprocess.SubprocessError):
                continue
            if done.returncode == 0 and done.stdout == b"".join(sorted(lines)):
                return program
    return None


def _sort_few_lines_by_key(runner: Any) -> None:
    """Make the local runner sort a key-sorted shuffle with :func:`sort_lines_by_key` first,
    and with its own sort (GNU sort) only if that declines (too many lines).  Jobs that sort
    their values too keep GNU sort's whole-line order."""
    sort_input_func = runner._sort_input_func

    def sort_input_by_key_first() -> Any:
        fallback = sort_input_func()
        return fallback if runner._sort_values else functools.partial(_sort_by_key_else, fallback)

    runner._sort_input_func = sort_input_by_key_first


def _sort_by_key_else(fallback: Any, input_paths: list[str], output_path: str) -> None:
    """A module-level function, so that the runner can pickle it into its task processes."""
    if not (input_paths and sort_lines_by_key(input_paths, output_path)):
        fallback(input_paths, output_path)


def _delete_map_inputs_when_mapped(runner: Any) -> None:
    """Wrap the local runner's map phase so that it deletes each map task's input once the
    tasks have run (kept when the step has no mapper: its output is a link to the input), and
    with a combiner the mapper's output and the combiner's sorted input (sort reads the
    combiner's output)."""
    run_maps = runner._run_mappers_and_combiners

    def run_mappers_and_combiners(step_num: int, map_splits: list) -> None:
        run_maps(step_num, map_splits)
        combined = bool(runner._get_step(step_num).get("combiner"))
        for task in range(len(map_splits)):
            mapped = runner._task_output_path("mapper", step_num, task)
            if os.path.islink(mapped):
                continue
            _remove(runner._task_input_path("mapper", step_num, task))
            if combined:
                _remove(mapped)
                _remove(runner._task_input_path("combiner", step_num, task))

    runner._run_mappers_and_combiners = run_mappers_and_combiners
