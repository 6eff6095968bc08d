"""One Luigi task class runs every stage; its identity is (stage, signature, workdir), the
workdir a path or (remote) URL.

The plan travels as an insignificant parameter, so a task can rebuild its upstream tasks
without reading YAML or loading plugins, and execution knobs never change a task id.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sys
import time
from functools import cached_property
from pathlib import Path

import luigi
from luigi.parameter import ParameterVisibility

from spamflow.console import stage_failed, stage_finished, stage_lines_on, stage_started
from spamflow.detector import RunSettings
from spamflow.errors import SpamflowError
from spamflow.planned import PlannedStage
from spamflow.stage_runner import STAGE_RECORD, is_complete, run_stage
from spamflow.storage import Location

FAILURES: dict[str, str] = {}
"""Stage name -> error message of the stages that failed in this process's last build."""


def record_failure(stage: str, message: str, folder: str) -> None:
    """``FAILURES[stage]``, and ``<folder>/<stage>.txt`` when the build gave a folder: with
    ``stages_at_once`` > 1 Luigi runs each stage in a child process, whose ``FAILURES`` the
    build's process never sees.  (A folder, not an environment variable: the environment
    keys spamflow.storage's filesystem clients.)"""
    FAILURES[stage] = message
    if folder:
        (Path(folder) / f"{stage}.txt").write_text(message, encoding="utf-8")


def collect_failures(folder: Path) -> None:
    """Add the messages child processes left in ``folder`` to ``FAILURES``."""
    for path in sorted(folder.glob("*.txt")):
        FAILURES.setdefault(path.stem, path.read_text(encoding="utf-8"))


class _NoTracebackForInputErrors(logging.Filter):
    """A SpamflowError already says what is wrong and where; Luigi's traceback adds noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], SpamflowError):
            record.exc_info = None
            record.exc_text = None
        return True


logging.getLogger("luigi-interface").addFilter(_NoTracebackForInputErrors())


def settings_to_json(settings: RunSettings) -> str:
    return json.dumps(dataclasses.asdict(settings))


def settings_from_json(text: str) -> RunSettings:
    fields = json.loads(text)
    return RunSettings(**{**fields, "runner_args": tuple(fields.get("runner_args", ()))})


class StageRecordTarget(luigi.Target):
    """A stage's ``stage.json``, local or in a remote workdir: the task is complete when it
    exists, the very check the runner and run.json use (:func:`spamflow.stage_runner.is_complete`)."""

    def __init__(self, stage: PlannedStage) -> None:
        self.stage = stage
        self.path = str(Location.of(stage.directory).join(STAGE_RECORD))

    def exists(self) -> bool:
        return is_complete(self.stage)


class StageTask(luigi.Task):
    stage = luigi.Parameter(description="stage name, as in run.json")
    signature = luigi.Parameter(description="hash of the stage's parameters and upstream signatures")
    workdir = luigi.Parameter(description="the run's work directory: the same stage in two workdirs is two tasks")
    plan_json = luigi.Parameter(significant=False, visibility=ParameterVisibility.PRIVATE)
    settings_json = luigi.Parameter(default="{}", significant=False,
                                    description="the run's RunSettings as JSON: how stages run, never what they make")
    failures_dir = luigi.Parameter(default="", significant=False, visibility=ParameterVisibility.PRIVATE,
                                   description="where a failing stage leaves its message for the build's process")

    @cached_property
    def plan(self) -> dict[str, PlannedStage]:
        return {name: PlannedStage(**spec) for name, spec in json.loads(self.plan_json).items()}

    @property
    def planned(self) -> PlannedStage:
        return self.plan[self.stage]

    def settings(self) -> RunSettings:
        return settings_from_json(self.settings_json)

    def requires(self) -> list[StageTask]:
        return [self.clone(stage=name, signature=sig) for name, sig in self.planned.requires.items()]

    def output(self) -> StageRecordTarget:
        return StageRecordTarget(self.planned)

    def on_failure(self, exception: BaseException) -> str:
        message = str(exception) if isinstance(exception, SpamflowError) else f"{type(exception).__name__}: {exception}"
        record_failure(self.stage, message, self.failures_dir)
        return message

    def run(self) -> None:
        upstream = {name: self.plan[name] for name in self.planned.requires}
        settings = self.settings()
        say = stage_lines_on(settings.progress)
        if say:
            print(stage_started(self.stage), file=sys.stderr, flush=True)
        started = time.monotonic()
        try:
            record = run_stage(self.planned, upstream, settings)
        except BaseException:
            if say:
                print(stage_failed(self.stage, time.monotonic() - started), file=sys.stderr, flush=True)
            raise
        if say:
            print(stage_finished(self.stage, time.monotonic() - started, record.get("counts", {})),
                  file=sys.stderr, flush=True)
