"""The stage and detector contract: what a plugin registers and how the DAG runs it.

A detector is a class with a name, a typed parameter model and a ``run`` method.  It
knows nothing of Luigi: the DAG wraps it in a task, hands it the outputs of the stages it
requires and a temporary output directory, and publishes that directory atomically when
``run`` returns (datatrove's "pure stage, framework does the I/O" split).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


class DetectorParams(BaseModel):
    """Base for a detector's YAML parameters: unknown keys are rejected, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class StageOutputs:
    """A finished upstream stage as a downstream stage sees it."""

    stage: str
    directory: Path
    outputs: dict[str, Path]
    params: dict[str, Any]

    def __getitem__(self, name: str) -> Path:
        try:
            return self.outputs[name]
        except KeyError:
            raise KeyError(
                f"stage {self.stage!r} has no output {name!r}; it has {sorted(self.outputs)}"
            ) from None


@dataclass(frozen=True)
class RunSettings:
    """Execution knobs: they change how a stage runs, never what it produces."""

    runner: str = "inline"
    runner_args: tuple[str, ...] = ()
    """Extra mrjob command-line options for the runner, e.g. ``("--spark-master", "local[2]")``."""
    workers: int = 1
    strict: bool = False
    progress: bool | None = None
    """Progress bars: True always, False never, None when stderr is a terminal
    (:func:`spamflow.progress.progress_bar` applies it)."""


@dataclass
class StageContext:
    """Everything a stage's ``run`` may use."""

    params: BaseModel
    inputs: dict[str, StageOutputs]
    outdir: Path
    settings: RunSettings = field(default_factory=RunSettings)


@dataclass
class StageResult:
    """What a stage produced: output paths relative to its directory, and counts."""

    outputs: dict[str, str]
    counts: dict[str, int] = field(default_factory=dict)
    bad_records: list[dict[str, Any]] = field(default_factory=list)


class Stage:
    """A step of the DAG: a name, typed parameters, the stages it reads, and ``run``."""

    name: ClassVar[str]
    """The stage name in run.json (for a detector also its key under ``detectors:``)."""
    version: ClassVar[str] = "1"
    """Bump when the output for the same input and parameters changes: old outputs are redone."""
    description: ClassVar[str] = ""
    Params: ClassVar[type[DetectorParams]] = DetectorParams
    requires: ClassVar[tuple[str, ...]] = ("parse",)
    """Stages whose outputs ``run`` reads: ``parse`` or names of other detectors."""
    uses_mapreduce: ClassVar[bool] = False
    """True if ``run`` starts mrjob jobs: the configured runner is then checked at validation."""

    @classmethod
    def upstream(cls, params: BaseModel, selected: Mapping[str, type[Stage]]) -> tuple[str, ...]:
        """The stages ``run`` reads, given its parameters and every detector the config selects.

        The default is the fixed ``requires``.  A stage that reads whatever the run holds (the
        classifier joins every selected detector's per-host table) overrides this; it must not
        name itself, and names outside ``selected`` other than ``parse`` are config errors.
        """
        return cls.requires

    def run(self, ctx: StageContext) -> StageResult:
        raise NotImplementedError(f"detector {self.name!r} does not implement run()")

    @classmethod
    def param_schema(cls) -> dict[str, Any]:
        """JSON schema of the parameters, for ``spamflow detectors`` and the docs."""
        return cls.Params.model_json_schema()


class Detector(Stage):
    """Subclass this, set the class attributes, implement :meth:`run`, and register the class
    from a ``spamflow_register_detectors`` hook implementation."""
