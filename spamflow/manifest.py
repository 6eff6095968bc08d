"""``<workdir>/run.json``: where every stage's outputs are, with its parameters, counts
and time.  Tools and reports find outputs through it, never by guessing hashed paths.

Shape (a contract; later stages add themselves, fields are only ever added)::

    {"stages": {"<stage>": {"outputs": {"<name>": "<absolute path>"}, "params": {...},
                            "counts": {...}, "seconds": 1.2, ...}}, ...}

A command that works outside the DAG (``spamflow quilt-sweep``, ``spamflow hss similar``) adds
its entry with :func:`add_command_entry`, marked ``"command"``; a later run of the DAG keeps
such an entry as long as the stages it was made from are still the run's (same signatures).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import spamflow
from spamflow.atomic import write_text_atomic
from spamflow.planned import PlannedStage
from spamflow.stage_runner import is_complete, read_stage_record

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
        directory = Path(stage.directory)
        stages[name] = {
            "outputs": {k: str(directory / v) for k, v in record["outputs"].items()},
            "params": record["params"],
            "counts": record["counts"],
            "seconds": record["seconds"],
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
    stages.update(kept_command_entries(previous, plan))
    return {
        "status": status,
        "spamflow_version": spamflow.__version__,
        "config": config_path,
        "started_at": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "stages": stages,
    }


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


def add_command_entry(workdir: Path, name: str, entry: dict[str, Any], *, command: str) -> Path:
    """Add (or replace) the entry ``name`` of a command that ran outside the DAG to run.json,
    leaving every other entry as it is.  ``entry`` has ``outputs``, ``params``, ``counts``,
    ``seconds``, ``signature``, ``directory`` and ``requires`` (the stages it was made from,
    name -> signature)."""
    manifest = read_manifest(workdir)
    manifest["stages"][name] = {**entry, "complete": True, "ran_now": True, "command": command}
    return write_manifest(workdir, manifest)


def write_manifest(workdir: Path, manifest: dict[str, Any]) -> Path:
    path = workdir / RUN_MANIFEST
    write_text_atomic(path, json.dumps(manifest, indent=1))
    return path


def read_manifest(workdir: str | Path) -> dict[str, Any]:
    with open(Path(workdir) / RUN_MANIFEST, encoding="utf-8") as fh:
        record: dict[str, Any] = json.load(fh)
        return record
