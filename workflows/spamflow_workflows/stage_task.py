"""One Luigi task class runs every stage; its identity is (stage, signature, workdir).

The plan travels as an insignificant parameter, so a task can rebuild its upstream tasks
without reading YAML or loading plugins, and execution knobs never change a task id.
"""

from __future__ import annotations

import json
import logging
from functools import cached_property
from pathlib import Path

import luigi
from luigi.parameter import ParameterVisibility

from spamflow.detector import RunSettings
from spamflow.errors import SpamflowError
from spamflow.planned import PlannedStage
from spamflow.stage_runner import STAGE_RECORD, run_stage

FAILURES: dict[str, str] = {}
"""Stage name -> error message of the stages that failed in this process's last build."""


class _NoTracebackForInputErrors(logging.Filter):
    """A SpamflowError already says what is wrong and where; Luigi's traceback adds noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], SpamflowError):
            record.exc_info = None
            record.exc_text = None
        return True


logging.getLogger("luigi-interface").addFilter(_NoTracebackForInputErrors())


class StageTask(luigi.Task):
    stage = luigi.Parameter(description="stage name, as in run.json")
    signature = luigi.Parameter(description="hash of the stage's parameters and upstream signatures")
    workdir = luigi.Parameter(description="the run's work directory: the same stage in two workdirs is two tasks")
    plan_json = luigi.Parameter(significant=False, visibility=ParameterVisibility.PRIVATE)
    runner = luigi.Parameter(default="inline", significant=False)
    runner_args = luigi.ListParameter(default=(), significant=False)
    workers = luigi.IntParameter(default=1, significant=False)
    strict = luigi.BoolParameter(default=False, significant=False)
    progress = luigi.OptionalBoolParameter(default=None, significant=False)

    @cached_property
    def plan(self) -> dict[str, PlannedStage]:
        return {name: PlannedStage(**spec) for name, spec in json.loads(self.plan_json).items()}

    @property
    def planned(self) -> PlannedStage:
        return self.plan[self.stage]

    def settings(self) -> RunSettings:
        return RunSettings(runner=self.runner, runner_args=tuple(self.runner_args), workers=self.workers,
                           strict=self.strict, progress=self.progress)

    def requires(self) -> list[StageTask]:
        return [self.clone(stage=name, signature=sig) for name, sig in self.planned.requires.items()]

    def output(self) -> luigi.LocalTarget:
        return luigi.LocalTarget(str(Path(self.planned.directory) / STAGE_RECORD))

    def on_failure(self, exception: BaseException) -> str:
        message = str(exception) if isinstance(exception, SpamflowError) else f"{type(exception).__name__}: {exception}"
        FAILURES[self.stage] = message
        return message

    def run(self) -> None:
        upstream = {name: self.plan[name] for name in self.planned.requires}
        run_stage(self.planned, upstream, self.settings())
