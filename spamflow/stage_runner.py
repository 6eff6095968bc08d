"""Running one planned stage: inputs from upstream ``stage.json`` files, output into a
temporary directory, published by one atomic rename once ``stage.json`` is written.

A stage is complete exactly when ``<dir>/stage.json`` exists, so a crash leaves no
half-written output that a re-run would take for finished work, and the stages it was made
from are complete and are the very runs it read (``run_id``): deleting a stage's
``stage.json`` redoes that stage and the stages after it, and no stage before it.

Under a remote workdir (:mod:`spamflow.storage`) the stage runs the same way in the workdir's
local cache, then its files are uploaded with ``stage.json`` last (one PUT, so again its
presence means the rest is there) and the cache keeps the copy; a stage reads its upstream
stages from the cache, downloading a stage the cache lacks or holds another ``stage.json`` of.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import resource
import shutil
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import spamflow
from spamflow.detector import RunSettings, Stage, StageContext, StageOutputs
from spamflow.errors import SpamflowError
from spamflow.mr.driver import applications_started
from spamflow.per_host import check_host_tables
from spamflow.planned import PlannedStage
from spamflow.storage import Location

STAGE_RECORD = "stage.json"
BAD_RECORDS_IN_MANIFEST = 1000


def load_stage_class(path: str) -> type[Stage]:
    module, _, qualname = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    stage_class: type[Stage] = obj
    return stage_class


def read_stage_record(directory: str | Path | Location) -> dict[str, Any]:
    """The ``stage.json`` of a stage directory, local or remote."""
    record: dict[str, Any] = json.loads(Location.of(directory).join(STAGE_RECORD).read_bytes())
    return record


def is_complete(stage: PlannedStage) -> bool:
    """``stage.json`` is there, and so is that of every stage it was made from, each the run it
    read (a record from before ``run_id`` existed matches one without it)."""
    return current_record(stage.directory, {}) is not None


def current_record(directory: str, seen: dict[str, dict[str, Any] | None]) -> dict[str, Any] | None:
    """The ``stage.json`` at ``directory`` if the stage is complete, else None; ``seen`` holds
    the answers for the directories already looked at."""
    if directory in seen:
        return seen[directory]
    record = _record_if_any(directory)
    if record is not None:
        made_from = record.get("upstream_runs") or {}
        for up, signature in (record.get("requires") or {}).items():
            upstream = current_record(_beside(directory, f"{up}-{signature}"), seen)
            if upstream is None or upstream.get("run_id") != made_from.get(up):
                record = None
                break
    seen[directory] = record
    return record


def _record_if_any(directory: str) -> dict[str, Any] | None:
    """The stage's record; None if there is none or it is not JSON (a damaged ``stage.json``
    makes the stage incomplete, so the next run redoes it and replaces the directory)."""
    raw = Location.of(directory).join(STAGE_RECORD).read_bytes_if_any()
    try:
        return None if raw is None else dict(json.loads(raw))
    except ValueError:
        return None


def _beside(directory: str, name: str) -> str:
    """The stage directory ``name`` next to ``directory`` (``<workdir>/stages/<name>``)."""
    return str(Location.of(directory).parent.join(name))


def working_directory(stage: PlannedStage) -> Path:
    """The local folder the stage runs in and is read from: its directory, or under a remote
    workdir that directory's copy in the local cache."""
    return Path(stage.local_directory or stage.directory)


def stage_outputs(stage: PlannedStage) -> StageOutputs:
    directory = fetch_stage(stage.directory, working_directory(stage))
    record = read_stage_record(directory)
    return StageOutputs(stage.name, directory, {k: directory / v for k, v in record["outputs"].items()},
                        record["params"], record.get("host_tables", {}), record.get("run_id"))


def fetch_stage(directory: str | Location, local: Path, fetched: set[Location] | None = None) -> Path:
    """The published stage ``directory`` in the local folder ``local`` (its copy in a remote
    workdir's cache; a local stage is its own copy): downloaded unless ``local`` holds the same
    ``stage.json``, and so are the stages it was made from (the report stage reads their
    records and outputs from the folders beside its own)."""
    location = Location.of(directory)
    fetched = set() if fetched is None else fetched
    fetched.add(location)
    _, published = location.fetch_dir(local, last=STAGE_RECORD)
    for up, signature in json.loads(published).get("requires", {}).items():
        upstream = location.parent.join(f"{up}-{signature}")
        if upstream not in fetched:
            fetch_stage(upstream, local.parent / f"{up}-{signature}", fetched)
    return local


def publish(tmp: Path, stage: PlannedStage) -> None:
    """Make the finished ``tmp`` the stage's directory, unless a concurrent run published the
    same signature first (a directory left without ``stage.json`` is replaced, as is one made
    from older runs of its upstream stages): one rename of a local directory; under a remote
    workdir an upload with ``stage.json`` last, ``tmp`` then kept as the cached copy."""
    if is_complete(stage):
        shutil.rmtree(tmp)  # the published one is read (fetched) from now on
        return
    Location.of(stage.directory).publish_dir(tmp, last=STAGE_RECORD, cache=working_directory(stage))


def cpu_seconds_so_far() -> float:
    """CPU seconds (user + system) of this process and of every process it started and waited
    for.  A stage's is the difference over its run: its own CPU time and its workers' and
    jobs' (a multiprocessing pool, mrjob's tasks, Spark's JVM), which wall time on a shared
    machine does not tell.  Luigi runs one task at a time per process, so nothing else's
    CPU time falls in the difference."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


_TEMPORARY = re.compile(r"^\.(?P<stage>.+)\.(?:tmp|fetch)-(?P<pid>\d+)$")
"""A stage's temporary folder (``.parse-<sig>.tmp-<pid>``, ``.quilt-<sig>.fetch-<pid>``), or an
atomically written file's (``.run.json.tmp-<pid>``): the PID of the process that made it."""


def pid_alive(pid: int) -> bool:
    """Is a process ``pid`` running on this host (one of another user's is)?"""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_dead_temporaries(folder: Path) -> list[str]:
    """Remove the temporary folders and files in ``folder`` (a workdir's ``stages/``) left by
    processes that are no longer running on this host: a stage killed mid-run (``kill -9``, a
    power cut) leaves ``.<stage>-<sig>.tmp-<pid>`` with partial parts, which nothing else
    removes.  A live process's are kept (another run may be writing them), and so is a crawl's
    resumable ``.crawl-<sig>.work``.  Returns the names removed."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return removed
    for entry in entries:
        match = _TEMPORARY.match(entry.name)
        if match is None or pid_alive(int(match["pid"])):
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(entry.name)
    return removed


def run_stage(stage: PlannedStage, upstream: dict[str, PlannedStage], settings: RunSettings) -> dict[str, Any]:
    """Run ``stage`` (its upstream stages must be complete) and publish its directory."""
    cls = load_stage_class(stage.stage_class)
    final = working_directory(stage)
    inputs = {name: stage_outputs(upstream[name]) for name in stage.requires}
    tmp = final.parent / f".{final.name}.tmp-{os.getpid()}"
    remove_dead_temporaries(final.parent)  # a killed run's leftovers (issue 36 item 9)
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    ctx = StageContext(
        params=cls.Params.model_validate(stage.params),
        inputs=inputs,
        outdir=tmp,
        settings=settings,
    )
    started, cpu_started, applications_before = time.time(), cpu_seconds_so_far(), applications_started()
    try:
        result = cls().run(ctx)
        missing = [name for name, rel in result.outputs.items() if not (tmp / rel).exists()]
        if missing:
            raise SpamflowError(f"stage {stage.name!r} declared outputs it did not write: {missing}")
        host_tables = check_host_tables(stage.name, cls.host_tables, tmp, result.outputs)
        record = {
            "stage": stage.name,
            "signature": stage.signature,
            "run_id": uuid.uuid4().hex,
            "upstream_runs": {name: up.run_id for name, up in inputs.items()},
            "stage_class": stage.stage_class,
            "version": cls.version,
            "spamflow_version": spamflow.__version__,
            "params": stage.params,
            "requires": stage.requires,
            "input_files": stage.input_files,
            "outputs": result.outputs,
            "host_tables": host_tables,
            "counts": result.counts,
            "seconds": round(time.time() - started, 3),
            "cpu_seconds": round(cpu_seconds_so_far() - cpu_started, 3),
            "mapreduce_applications": applications_started() - applications_before,
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "bad_records_total": (len(result.bad_records) if result.bad_records_total is None
                                  else result.bad_records_total),
            "bad_records": result.bad_records[:BAD_RECORDS_IN_MANIFEST],
        }
        if result.details:
            record["details"] = result.details
        with open(tmp / STAGE_RECORD, "w", encoding="utf-8") as fh:
            json.dump(record, fh, indent=1)
        publish(tmp, stage)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return record
