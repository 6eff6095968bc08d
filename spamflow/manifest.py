"""``<workdir>/run.json``: where every stage's outputs are, with its parameters, counts
and time.  Tools and reports find outputs through it, never by guessing hashed paths.

Shape (a contract; later stages add themselves, fields are only ever added)::

    {"stages": {"<stage>": {"outputs": {"<name>": "<absolute path>"}, "params": {...},
                            "counts": {...}, "seconds": 1.2, ...}}, ...}
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import spamflow
from spamflow.plan import PlannedStage
from spamflow.stage_runner import is_complete, read_stage_record

RUN_MANIFEST = "run.json"


def build_manifest(plan: dict[str, PlannedStage], *, status: str, started: float,
                   config_path: str | None, ran: set[str], errors: dict[str, str] | None = None) -> dict[str, Any]:
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
            "finished_at": record["finished_at"],
            "bad_records_total": record.get("bad_records_total", 0),
            "bad_records": record.get("bad_records", []),
        }
    return {
        "status": status,
        "spamflow_version": spamflow.__version__,
        "config": config_path,
        "started_at": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "stages": stages,
    }


def write_manifest(workdir: Path, manifest: dict[str, Any]) -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / RUN_MANIFEST
    tmp = path.with_suffix(f".json.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=1)
    os.replace(tmp, path)
    return path


def read_manifest(workdir: str | Path) -> dict[str, Any]:
    with open(Path(workdir) / RUN_MANIFEST, encoding="utf-8") as fh:
        record: dict[str, Any] = json.load(fh)
        return record
