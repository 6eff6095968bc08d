"""``<workdir>/run.json``: where every stage's outputs are, with its parameters, counts
and time.  Tools and reports find outputs through it, never by guessing hashed paths.

Shape (a contract; later stages add themselves, fields are only ever added)::

    {"stages": {"<stage>": {"outputs": {"<name>": "<absolute path>"}, "params": {...},
                            "counts": {...}, "seconds": 1.2, ...}}, ...}

Under a remote workdir (``s3://bucket/run``) run.json is one object there and its
``directory`` and ``outputs`` are URLs; :func:`localized` gives the same entries with the
paths of the stages' copies in the local cache, which is what commands hand to readers.

A command that works outside the DAG (``spamflow quilt-sweep``, ``spamflow hss similar``) adds
its entry with :func:`add_command_entry`, marked ``"command"``; a later run of the DAG keeps
such an entry as long as the stages it was made from are still the run's (same signatures).

``spamflow export`` records each export in the top-level list ``exports`` (:func:`add_export`:
format, destination, schema version, rows written, the ``run_id`` of the run it exported);
a later export to the same destination replaces its entry, and a later run of the DAG keeps
the list (each entry names the run it exported, which may no longer be the current one).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import spamflow
from spamflow.atomic import write_text_atomic
from spamflow.planned import PlannedStage
from spamflow.stage_runner import fetch_stage, is_complete, read_stage_record
from spamflow.storage import Location

RUN_MANIFEST = "run.json"


def build_manifest(plan: dict[str, PlannedStage], *, status: str, started: float,
                   config_path: str | None, ran: set[str], errors: dict[str, str] | None = None,
                   previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """run.json of ``plan``, with the command entries of the ``previous`` run.json that still
    belong to it (:func:`kept_command_entries`)."""
    stages: dict[str, Any] = {}
    for name, stage in plan.items():
        if not is_complete(stage):
            stages[name] = {"complete": False, "directory": stage.directory, "params": stage.params,
                            "signature": stage.signature}
            if errors and name in errors:
                stages[name]["error"] = errors[name]
            continue
        record = read_stage_record(stage.directory)
        directory = Location.of(stage.directory)
        stages[name] = {
            "outputs": {k: str(directory.join(v)) for k, v in record["outputs"].items()},
            "params": record["params"],
            "counts": record["counts"],
            "seconds": record["seconds"],
            "cpu_seconds": record.get("cpu_seconds"),
            "mapreduce_applications": record.get("mapreduce_applications"),
            "complete": True,
            "ran_now": name in ran,
            "signature": record["signature"],
            "directory": str(directory),
            "requires": record["requires"],
            "input_files": record.get("input_files", {}),
            "host_tables": record.get("host_tables", {}),
            "finished_at": record["finished_at"],
            "bad_records_total": record.get("bad_records_total", 0),
            "bad_records": record.get("bad_records", []),
        }
        if record.get("details"):
            stages[name]["details"] = record["details"]
    stages.update(kept_command_entries(previous, plan))
    manifest = {
        "status": status,
        "spamflow_version": spamflow.__version__,
        "config": config_path,
        "started_at": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "stages": stages,
    }
    if (previous or {}).get("exports"):
        manifest["exports"] = previous["exports"]  # type: ignore[index]
    return manifest


def add_export(workdir: str | Path, entry: dict[str, Any]) -> str | Path:
    """Add ``entry`` (an export: ``format``, ``destination``, ``schema_version``, ``rows``,
    ``run_id``, ...) to run.json's ``exports``, replacing an earlier export to the same
    destination (its files were replaced); every other field is left as it is."""
    manifest = read_manifest(workdir)
    kept = [e for e in manifest.get("exports", []) if e.get("destination") != entry["destination"]]
    manifest["exports"] = [*kept, entry]
    return write_manifest(workdir, manifest)


def kept_command_entries(previous: dict[str, Any] | None, plan: dict[str, PlannedStage]) -> dict[str, Any]:
    """The entries a command added to ``previous`` (marked ``"command"``) that are not stages of
    ``plan`` and were made from stages of ``plan`` that are complete with the same signatures:
    a re-run keeps them (no longer ``ran_now``); one made from other stages is dropped."""
    kept: dict[str, Any] = {}
    for name, entry in ((previous or {}).get("stages") or {}).items():
        if name in plan or not isinstance(entry, dict) or not entry.get("command"):
            continue
        requires = entry.get("requires") or {}
        if requires and all(up in plan and plan[up].signature == sig and is_complete(plan[up])
                            for up, sig in requires.items()):
            kept[name] = {**entry, "ran_now": False}
    return kept


def add_command_entry(workdir: str | Path, name: str, entry: dict[str, Any], *, command: str) -> str | Path:
    """Add (or replace) the entry ``name`` of a command that ran outside the DAG to run.json,
    leaving every other entry as it is.  ``entry`` has ``outputs``, ``params``, ``counts``,
    ``seconds``, ``signature``, ``directory`` and ``requires`` (the stages it was made from,
    name -> signature)."""
    manifest = read_manifest(workdir)
    manifest["stages"][name] = {**entry, "complete": True, "ran_now": True, "command": command}
    return write_manifest(workdir, manifest)


def manifest_location(workdir: str | Path) -> str | Path:
    """Where run.json of ``workdir`` is: ``<workdir>/run.json``, a URL for a remote workdir,
    which a command may also name by its local cache (``config.workdir``)."""
    return Location.of(workdir).published().join(RUN_MANIFEST).native()


def write_manifest(workdir: str | Path, manifest: dict[str, Any]) -> str | Path:
    """Replace run.json whole (a rename locally, one PUT remotely); returns where it is."""
    location = manifest_location(workdir)
    write_text_atomic(location, json.dumps(manifest, indent=1))
    return location


def read_manifest(workdir: str | Path) -> dict[str, Any]:
    return read_manifest_file(manifest_location(workdir))


def read_manifest_file(location: str | Path) -> dict[str, Any]:
    """run.json at ``location`` (a path, or a URL: :class:`spamflow.storage.StorageError` if
    it cannot be read)."""
    record: dict[str, Any] = json.loads(Location.of(location).read_bytes())
    return record


def localized(manifest: dict[str, Any], workdir_url: str, cache: Path, names: set[str]) -> dict[str, Any]:
    """``manifest`` of the remote workdir ``workdir_url`` with the stages ``names`` and every
    stage they were made from fetched into its local cache ``cache`` and pointing there
    (``directory``, ``outputs``): readers of a command's run.json open local files.  Other
    entries are left as they are."""
    stages = manifest["stages"]
    wanted: set[str] = set()
    todo = [n for n in names if n in stages]
    while todo:
        name = todo.pop()
        if name not in wanted and name in stages:
            wanted.add(name)
            todo.extend((stages[name].get("requires") or {}).keys())
    prefix = workdir_url.rstrip("/") + "/"
    out = {**manifest, "stages": dict(stages)}
    fetched: set[Location] = set()
    for name in sorted(wanted):
        entry = stages[name]
        directory = entry.get("directory", "")
        if not entry.get("complete") or not directory.startswith(prefix):
            continue
        local = fetch_stage(directory, cache / directory[len(prefix):], fetched)
        record = read_stage_record(local)
        out["stages"][name] = {**entry, "directory": str(local),
                               "outputs": {k: str(local / v) for k, v in record["outputs"].items()}}
    return out
