"""Hadoop streaming's contract, run locally and no gentler than Hadoop: what a job may rely on
and nothing more.

One streaming step (:func:`run_step`), as ``hadoop jar hadoop-streaming.jar`` runs it:

* **input splits**: every input file is cut at seeded byte offsets into several splits (a
  ``.gz`` file is one split, as Hadoop cannot split it); a line belongs to the split its
  first byte is in, so a split may hold no line at all (its map task still runs, with
  ``mapper_init``/``mapper_final``).  Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (Hadoop's
  ``LineReader``).  With ``-inputformat ...NLineInputFormat`` each line is a split of its
  own and the mapper reads ``<byte offset>\\t<line>``, else only the line;
* **map tasks**: one process per split, each in a fresh working directory holding only the
  shipped ``-files`` (symlinks, by their ``#name``) and unpacked ``-archives``, with an
  environment that has no ``PYTHONPATH`` (a job's modules come from what it ships: mrjob's
  setup wrapper puts its ``--py-files`` zips there) and the job's ``-cmdenv`` and ``-D``
  settings (dots as underscores, as Hadoop exports them);
* **key and value**: a line's key is what precedes its first tab (no tab: the whole line,
  and an empty value, so that a reducer reads ``key\\t`` and an output line ``line\\t``);
* **partitions**: ``mapreduce.job.reduces`` reduce tasks (default :data:`REDUCERS`), a key's
  partition is Java's ``Text.hashCode() & MAX_INT`` modulo their number (Hadoop's
  ``HashPartitioner``);
* **combiner**: run 0, 1 or 2 times per map task (seeded): on each of up to 2 spills of the
  map output, then again on the merged outputs of the spills;
* **sort**: by key only, as bytes; the values of a key arrive in a seeded random order
  (Hadoop never promises an order: they come from several map tasks and spills);
* **reduce tasks**: every partition's reducer runs, also one with no input (its
  ``reducer_init``/``reducer_final`` do run); outputs ``part-00000`` ... and ``_SUCCESS``;
  with no reducer (``mapreduce.job.reduces=0``) map outputs are the job's output;
* a task that exits non-zero fails the job, with its stderr.

Used by the stand-in ``hadoop`` command (``tests/hadoop_standin.py``) that mrjob's ``hadoop``
runner calls, so a job's real command lines, shipped files and output collection are run.
"""

from __future__ import annotations

import gzip
import os
import random
import re
import shlex
import subprocess
import tarfile
import time
import zipfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REDUCERS = 2
"""Reduce tasks when the job does not set ``mapreduce.job.reduces``: several, so that a job
that needs all its records in one reducer fails here (Hadoop's own default is 1, clusters set more)."""
MAX_SPLITS = 2
"""Splits per (splittable) input file, at most."""
TASK_SLOTS = 2
"""Tasks run at once (this machine's cores)."""
NLINE_INPUT_FORMAT = "org.apache.hadoop.mapred.lib.NLineInputFormat"
LINE_END = re.compile(rb"\r\n|\n|\r")


class TaskFailed(RuntimeError):
    """A map, combine or reduce task exited non-zero."""


@dataclass
class StreamingStep:
    """What ``hadoop jar hadoop-streaming.jar ARGS`` asks for, paths already local."""

    inputs: list[Path]
    output: Path
    mapper: str
    combiner: str | None = None
    reducer: str | None = None
    files: list[tuple[Path, str]] = field(default_factory=list)  # (local path, name in the task's dir)
    archives: list[tuple[Path, str]] = field(default_factory=list)
    jobconf: dict[str, str] = field(default_factory=dict)
    cmdenv: dict[str, str] = field(default_factory=dict)
    inputformat: str | None = None


@dataclass
class StepTrace:
    """What the emulation did, so that tests can see it was strict."""

    map_tasks: int = 0
    reduce_tasks: int = 0
    combiner_runs: list[int] = field(default_factory=list)  # per map task: 0, 1 or 2
    values_reordered: int = 0  # keys whose values arrived in another order than mapped
    task_seconds: list[float] = field(default_factory=list)  # every task process, in order


def text_hash(key: bytes) -> int:
    """Java's ``Text.hashCode()`` (``WritableComparator.hashBytes``): 31-based over signed bytes."""
    h = 1
    for b in key:
        h = (31 * h + (b - 256 if b > 127 else b)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def partition(key: bytes, reducers: int) -> int:
    """Hadoop's ``HashPartitioner``."""
    return (text_hash(key) & 0x7FFFFFFF) % reducers


def split_key(line: bytes) -> tuple[bytes, bytes]:
    key, tab, value = line.partition(b"\t")
    return key, value if tab else b""


def read_lines(data: bytes) -> list[tuple[int, bytes]]:
    """(byte offset, line) of every line, ends as Hadoop's LineReader reads them."""
    out, pos = [], 0
    for m in LINE_END.finditer(data):
        out.append((pos, data[pos:m.start()]))
        pos = m.end()
    if pos < len(data):
        out.append((pos, data[pos:]))
    return out


def input_splits(step: StreamingStep, rng: random.Random) -> list[tuple[Path, list[bytes]]]:
    """The map tasks' input records, split by split, with the file each split is of."""
    splits: list[tuple[Path, list[bytes]]] = []
    nline = step.inputformat == NLINE_INPUT_FORMAT
    per_split = int(step.jobconf.get("mapreduce.input.lineinputformat.linespermap", "1"))
    for path in step.inputs:
        raw = path.read_bytes()
        gz = path.suffix == ".gz"
        data = gzip.decompress(raw) if gz else raw
        lines = read_lines(data)
        if nline:
            records = [b"%d\t%s" % (off, line) for off, line in lines]
            splits.extend((path, records[i:i + per_split]) for i in range(0, len(records), per_split))
            continue
        if gz or len(data) < 2:
            splits.append((path, [line for _, line in lines]))
            continue
        cuts = sorted(rng.sample(range(1, len(data)), min(MAX_SPLITS, len(data)) - 1))
        bounds = [0, *cuts, len(data)]
        for lo, hi in zip(bounds, bounds[1:]):
            splits.append((path, [line for off, line in lines if lo <= off < hi]))
    return splits


def shuffled_sort(records: list[tuple[bytes, bytes]], rng: random.Random) -> list[tuple[bytes, bytes]]:
    """Sorted by key alone, as bytes; values of a key in a random order."""
    records = list(records)
    rng.shuffle(records)
    records.sort(key=lambda kv: kv[0])
    return records


def _lines(records: Iterable[tuple[bytes, bytes]]) -> bytes:
    return b"".join(k + b"\t" + v + b"\n" for k, v in records)


class Emulation:
    """Runs streaming steps; ``seed`` picks splits, spills, combiner runs and value orders."""

    def __init__(self, workroot: Path, seed: int, task_path: Sequence[str]):
        self.workroot = workroot
        self.rng = random.Random(seed)
        self.task_path = list(task_path)
        self.attempts = 0
        self.task_seconds: list[float] = []

    def _task_dir(self, step: StreamingStep, kind: str) -> Path:
        """A fresh working directory: the shipped files and archives, nothing else."""
        self.attempts += 1
        folder = self.workroot / f"attempt_{self.attempts:05d}_{kind}"
        folder.mkdir(parents=True)
        for path, name in step.files:
            (folder / name).symlink_to(path.resolve())
        for path, name in step.archives:
            target = folder / name
            target.mkdir()
            if zipfile.is_zipfile(path):
                with zipfile.ZipFile(path) as zf:
                    zf.extractall(target)
            else:
                with tarfile.open(path) as tf:
                    tf.extractall(target, filter="data")
        return folder

    def _env(self, step: StreamingStep, kind: str, task: int, extra: dict[str, str]) -> dict[str, str]:
        env = {"PATH": os.pathsep.join(self.task_path), "LC_ALL": "C", "HOME": str(self.workroot)}
        env.update({k.replace(".", "_"): v for k, v in step.jobconf.items()})
        env.update({"mapreduce_task_partition": str(task), "mapreduce_task_ismap": str(kind != "r").lower(),
                    "mapreduce_task_id": f"task_local_0001_{kind}_{task:06d}",
                    "mapreduce_task_attempt_id": f"attempt_local_0001_{kind}_{task:06d}_0", **extra})
        env.update(step.cmdenv)
        return env

    def _run(self, command: str, stdin: bytes, cwd: Path, env: dict[str, str], what: str) -> bytes:
        started = time.monotonic()
        done = subprocess.run(shlex.split(command), input=stdin, cwd=cwd, env=env, capture_output=True,
                              check=False, timeout=600)
        if done.returncode != 0:
            raise TaskFailed(f"{what} failed (exit {done.returncode}): {command}\n"
                             f"{done.stderr.decode(errors='replace')[-4000:]}")
        self.task_seconds.append(round(time.monotonic() - started, 3))
        return done.stdout

    def run_step(self, step: StreamingStep) -> StepTrace:
        trace = StepTrace()
        reducers = int(step.jobconf.get("mapreduce.job.reduces", REDUCERS)) if step.reducer else 0
        step.output.mkdir(parents=True)
        splits = input_splits(step, self.rng)
        trace.map_tasks = len(splits)
        tasks = [(self._task_dir(step, "m"), self._env(step, "m", task, {"mapreduce_map_input_file": str(path)}))
                 for task, (path, _) in enumerate(splits)]
        with ThreadPoolExecutor(TASK_SLOTS) as pool:  # map tasks side by side, as a cluster runs them
            outputs = list(pool.map(lambda t: self._run(step.mapper, b"".join(r + b"\n" for r in splits[t][1]),
                                                        *tasks[t], f"map task {t}"), range(len(splits))))
        shuffle: list[list[tuple[bytes, bytes]]] = [[] for _ in range(reducers)]
        first_order: dict[bytes, list[bytes]] = {}
        for task, out in enumerate(outputs):
            mapped = [split_key(line) for _, line in read_lines(out)]
            if not reducers:
                (step.output / f"part-{task:05d}").write_bytes(_lines(mapped))
                continue
            for k, v in mapped:
                first_order.setdefault(k, []).append(v)
            if step.combiner:
                mapped = self._combine(step, mapped, *tasks[task], trace)
            for k, v in mapped:
                shuffle[partition(k, reducers)].append((k, v))
        inputs = []
        for r in range(reducers):
            records = shuffled_sort(shuffle[r], self.rng)
            if not step.combiner:
                seen: dict[bytes, list[bytes]] = {}
                for k, v in records:
                    seen.setdefault(k, []).append(v)
                trace.values_reordered += sum(vs != first_order[k] for k, vs in seen.items())
            inputs.append((_lines(records), self._task_dir(step, "r"), self._env(step, "r", r, {})))
        trace.reduce_tasks = reducers
        with ThreadPoolExecutor(TASK_SLOTS) as pool:
            outputs = list(pool.map(lambda r: self._run(step.reducer or "", *inputs[r], f"reduce task {r}"),
                                    range(reducers)))
        for r, out in enumerate(outputs):
            (step.output / f"part-{r:05d}").write_bytes(_lines(split_key(line) for _, line in read_lines(out)))
        (step.output / "_SUCCESS").write_bytes(b"")
        trace.task_seconds = self.task_seconds
        return trace

    def _combine(self, step: StreamingStep, mapped: list[tuple[bytes, bytes]], cwd: Path, env: dict[str, str],
                 trace: StepTrace) -> list[tuple[bytes, bytes]]:
        """0, 1 or 2 combiner runs: on each spill, then on the spills' merged outputs."""
        rounds = self.rng.choice((0, 1, 1, 2))
        trace.combiner_runs.append(rounds)
        if rounds == 0 or not mapped:
            return mapped
        records = list(mapped)
        self.rng.shuffle(records)  # a spill holds what the buffer held: any subset
        cuts = sorted(self.rng.sample(range(1, len(records)), min(2, len(records)) - 1)) if len(records) > 1 else []
        spills = [records[a:b] for a, b in zip([0, *cuts], [*cuts, len(records)])]
        combined: list[tuple[bytes, bytes]] = []
        for spill in spills:
            out = self._run(step.combiner or "", _lines(shuffled_sort(spill, self.rng)), cwd, env, "combiner")
            combined.extend(split_key(line) for _, line in read_lines(out))
        if rounds == 2 and combined:
            out = self._run(step.combiner or "", _lines(shuffled_sort(combined, self.rng)), cwd, env,
                            "combiner (merge)")
            combined = [split_key(line) for _, line in read_lines(out)]
        return combined
