"""Running one planned stage: inputs from upstream ``stage.json`` files, output into a
temporary directory, published by one atomic rename once ``stage.json`` is written.

A stage is complete exactly when ``<dir>/stage.json`` exists, so a crash leaves no
half-written output that a re-run would take for finished work.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import spamflow
from spamflow.detector import RunSettings, Stage, StageContext, StageOutputs
from spamflow.errors import SpamflowError
from spamflow.per_host import check_host_tables
from spamflow.planned import PlannedStage

STAGE_RECORD = "stage.json"
BAD_RECORDS_IN_MANIFEST = 1000


def load_stage_class(path: str) -> type[Stage]:
    module, _, qualname = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    stage_class: type[Stage] = obj
    return stage_class


def read_stage_record(directory: str | Path) -> dict[str, Any]:
    with open(Path(directory) / STAGE_RECORD, encoding="utf-8") as fh:
        record: dict[str, Any] = json.load(fh)
        return record


def is_complete(stage: PlannedStage) -> bool:
    return (Path(stage.directory) / STAGE_RECORD).is_file()


def stage_outputs(stage: PlannedStage) -> StageOutputs:
    record = read_stage_record(stage.directory)
    directory = Path(stage.directory)
    return StageOutputs(stage.name, directory, {k: directory / v for k, v in record["outputs"].items()},
                        record["params"], record.get("host_tables", {}))


def run_stage(stage: PlannedStage, upstream: dict[str, PlannedStage], settings: RunSettings) -> dict[str, Any]:
    """Run ``stage`` (its upstream stages must be complete) and publish its directory."""
    cls = load_stage_class(stage.stage_class)
    final = Path(stage.directory)
    tmp = final.parent / f".{final.name}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    ctx = StageContext(
        params=cls.Params.model_validate(stage.params),
        inputs={name: stage_outputs(upstream[name]) for name in stage.requires},
        outdir=tmp,
        settings=settings,
    )
    started = time.time()
    try:
        result = cls().run(ctx)
        missing = [name for name, rel in result.outputs.items() if not (tmp / rel).exists()]
        if missing:
            raise SpamflowError(f"stage {stage.name!r} declared outputs it did not write: {missing}")
        host_tables = check_host_tables(stage.name, cls.host_tables, tmp, result.outputs)
        record = {
            "stage": stage.name,
            "signature": stage.signature,
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
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "bad_records_total": len(result.bad_records),
            "bad_records": result.bad_records[:BAD_RECORDS_IN_MANIFEST],
        }
        with open(tmp / STAGE_RECORD, "w", encoding="utf-8") as fh:
            json.dump(record, fh, indent=1)
        if final.exists():  # a concurrent run published the same signature first
            shutil.rmtree(tmp)
        else:
            os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return record
