"""A planned stage: what the planner (:mod:`spamflow.plan`) decided and what running a stage,
writing run.json and the DAG's tasks read.  Its own module so that those readers need not
import the planner (which imports the stages: the report stage reads records, records read
``stage.json`` through the stage runner, and the runner would import the planner again)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class PlannedStage:
    name: str
    stage_class: str  # "module:QualName", imported by the task that runs it
    params: dict[str, Any]
    requires: dict[str, str]  # upstream stage name -> its signature
    signature: str
    directory: str
    input_files: dict[str, str] = field(default_factory=dict)  # key -> "sha256:<hex>" of each file read
    local_directory: str = ""
    """Where the stage runs and its files are kept on this machine when ``directory`` is a URL
    (a remote workdir's local cache, :mod:`spamflow.storage`); empty for a local workdir."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def stage_dir(stage: PlannedStage) -> Path:
    return Path(stage.directory)
