"""The stages a report describes, as run.json describes them: ``{name: record}`` with absolute
``outputs``, ``params``, ``counts``, ``seconds`` and ``bad_records``.

``spamflow report`` reads them from run.json; the report stage, which runs before run.json is
written, reads the ``stage.json`` of each stage it was given and of their upstream stages
(``<workdir>/stages/<name>-<signature>``, the layout of :mod:`spamflow.plan`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spamflow.detector import StageOutputs
from spamflow.errors import SpamflowError
from spamflow.stage_runner import STAGE_RECORD, read_stage_record


def record_of(directory: Path) -> dict[str, Any]:
    """A finished stage's ``stage.json`` in run.json's form (absolute output paths)."""
    try:
        record = read_stage_record(directory)
    except (OSError, ValueError) as exc:
        raise SpamflowError(f"report: cannot read {directory / STAGE_RECORD}: {exc}") from exc
    record["outputs"] = {k: str(directory / v) for k, v in record["outputs"].items()}
    record["complete"] = True
    record["directory"] = str(directory)
    return record


def records_from_inputs(inputs: dict[str, StageOutputs], stages_dir: Path) -> dict[str, dict[str, Any]]:
    """Every stage the inputs were built from, upstream first, each with its record."""
    found: dict[str, dict[str, Any]] = {}

    def visit(name: str, directory: Path) -> None:
        if name in found:
            return
        record = record_of(directory)
        for up, signature in record.get("requires", {}).items():
            visit(up, stages_dir / f"{up}-{signature}")
        found[name] = record

    for name, stage in inputs.items():
        visit(name, stage.directory)
    return found
