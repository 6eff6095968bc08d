"""The stage and detector contract: what a plugin registers and how the DAG runs it.

A detector is a class with a name, a typed parameter model and a ``run`` method.  It
knows nothing of Luigi: the DAG wraps it in a task, hands it the outputs of the stages it
requires and a temporary output directory, and publishes that directory atomically when
``run`` returns (datatrove's "pure stage, framework does the I/O" split).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationInfo
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from spamflow.per_host import PerHostTable


@dataclass(frozen=True)
class InputFile:
    """Marks a ``str`` parameter as a file the stage reads: ``Annotated[str, InputFile()]``
    (or :data:`InputPath`), also inside ``list[...]`` or ``... | None``.

    Why: the file's *content* then belongs to the stage's identity (the planner hashes it), so an
    edited file redoes the stage and an unchanged one does not.  Validating a config resolves a
    relative path against the config file's folder and refuses a missing file, naming the key.
    ``keep`` lists values that name no file (``labels: demo``): they pass unchanged.
    """

    keep: tuple[str, ...] = ()

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.with_info_after_validator_function(self.resolve, handler(source))

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {**handler(schema), "format": "file-path"}  # as pydantic's FilePath: ``spamflow detectors`` shows it

    def resolve(self, value: str, info: ValidationInfo) -> str:
        """Absolute path against ``config_dir`` of the validation context (the config's folder);
        without that context (a stage re-reading its planned parameters) the value is kept."""
        base = (info.context or {}).get("config_dir")
        if value in self.keep or base is None:
            return value
        path = Path(value).expanduser()
        path = (path if path.is_absolute() else Path(base) / path).resolve()
        if not path.exists():
            raise ValueError(f"input file {value!r} not found (looked for {path})")
        if not path.is_file():
            raise ValueError(f"input file {value!r} is not a file ({path})")
        return str(path)


InputPath = Annotated[str, InputFile()]
"""A parameter naming one input file (see :class:`InputFile`)."""


def marked_input_files(params: BaseModel) -> dict[str, Path]:
    """Every value of ``params`` typed with an :class:`InputFile` marker, by key (``labels``,
    ``dictionary.1``): the default of :meth:`Stage.input_files`."""
    found: dict[str, Path] = {}
    for name, info in type(params).model_fields.items():
        annotation = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
        for key, value in _marked(annotation, getattr(params, name), name):
            found[key] = Path(value)
    return found


def _marked(annotation: Any, value: Any, key: str) -> Iterator[tuple[str, str]]:
    """(key, value) for each string of ``value`` that ``annotation`` marks as an input file."""
    if value is None:
        return
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        marker = next((m for m in annotation.__metadata__ if isinstance(m, InputFile)), None)
        if marker is not None and isinstance(value, str):
            if value not in marker.keep:
                yield key, value
            return
        yield from _marked(typing.get_args(annotation)[0], value, key)
    elif origin is typing.Union or origin is types.UnionType:
        seen: set[str] = set()
        for arm in typing.get_args(annotation):
            for hit in _marked(arm, value, key):
                if hit[0] not in seen:
                    seen.add(hit[0])
                    yield hit
    elif origin in (list, tuple) and isinstance(value, (list, tuple)):
        args = typing.get_args(annotation)
        for i, item in enumerate(value):
            yield from _marked(args[0] if args else Any, item, f"{key}.{i}")


class DetectorParams(BaseModel):
    """Base for a detector's YAML parameters: unknown keys are rejected, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    execution_keys: ClassVar[frozenset[str]] = frozenset()
    """Keys that choose how the stage runs, never what it produces (``engine``, a size
    threshold): left out of the stage's signature, like the runner and the workers."""


@dataclass(frozen=True)
class StageOutputs:
    """A finished upstream stage as a downstream stage sees it."""

    stage: str
    directory: Path
    outputs: dict[str, Path]
    params: dict[str, Any]
    host_tables: dict[str, Any] = field(default_factory=dict)
    """The per-host tables the stage declared, as in its ``stage.json``: ``{output: {key, features}}``."""
    run_id: str | None = None
    """Which run of the stage this is (``stage.json``'s ``run_id``; None before it existed)."""

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
    stages_at_once: int = 1
    """Stages that need nothing from each other run this many at a time, each in its own
    process (Luigi's workers); ``workers`` stays the processes inside one stage."""
    inline_below: int = 64 * 2**20
    """``runner: auto``: the largest WARC input (bytes) whose jobs run ``inline``.  mrjob's
    ``local`` runner starts a Python process with the job's imports for each of a step's ~12
    tasks, about two minutes per detector on any input; ``inline`` runs the same job code in
    this process (the same outputs) with one core and in-memory sorts, which pays only below
    a bound like this one (64 MiB: a few thousand pages)."""

    @property
    def on_cluster(self) -> bool:
        """The MapReduce runner spreads work over machines (or Spark executors), so a stage
        with a MapReduce engine should use it rather than this one process."""
        return self.runner in ("spark", "hadoop", "emr")


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
    bad_records_total: int | None = None
    """How many bad records there were, when ``bad_records`` keeps only examples of them
    (None: ``bad_records`` is every one)."""
    details: dict[str, Any] = field(default_factory=dict)
    """Anything else the stage wants on record in its ``stage.json`` (JSON values; written only
    when not empty), e.g. a parameter it chose from the data."""


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
    host_tables: ClassVar[tuple[PerHostTable, ...]] = ()
    """The per-host tables ``run`` writes (:mod:`spamflow.per_host`): checked when the stage
    publishes, then joined by the classifier and shown in the report's host table."""
    frozen_statistics: ClassVar[dict[str, str]] = {}
    """Incremental scoring (docs/classify.md): output name -> the parameter that reads that
    file back. A trained model keeps a copy of each such output of its training run, and
    ``spamflow score`` sets the parameter to it, so new hosts are featurised against the
    frozen corpus-wide statistics instead of recomputing them."""

    @classmethod
    def input_files(cls, params: BaseModel) -> dict[str, Path]:
        """The files ``run`` reads, by a key for messages (e.g. ``labels``, ``dictionary.0``).

        Their content (SHA-256) is part of the stage's signature: an edited file redoes the stage,
        a touched one does not.  The default is every parameter typed :data:`InputPath` /
        :class:`InputFile`; override for files named otherwise (``package:`` resources, files
        named inside an expression).
        """
        return marked_input_files(params)

    @classmethod
    def upstream(cls, params: BaseModel, selected: Mapping[str, type[Stage]]) -> tuple[str, ...]:
        """The stages ``run`` reads, given its parameters and every detector the config selects.

        The default is the fixed ``requires``.  A stage that reads whatever the run holds (the
        classifier joins every selected detector's per-host table) overrides this; it must not
        name itself, and names outside ``selected`` other than ``parse`` are config errors.
        """
        return cls.requires

    @classmethod
    def missing_upstream_hint(cls, stage: str, params: BaseModel) -> str:
        """What the user should change when ``upstream`` names a core stage (``demo``, ``crawl``)
        the run does not have, said after the config error; empty when there is nothing to add.
        (The classifier reads ``demo`` only for its default labels: it says to give ``labels:``.)"""
        return ""

    def run(self, ctx: StageContext) -> StageResult:
        raise NotImplementedError(f"detector {self.name!r} does not implement run()")

    @classmethod
    def param_schema(cls) -> dict[str, Any]:
        """JSON schema of the parameters, for ``spamflow detectors`` and the docs."""
        return cls.Params.model_json_schema()


class Detector(Stage):
    """Subclass this, set the class attributes, implement :meth:`run`, and register the class
    from a ``spamflow_register_detectors`` hook implementation."""
