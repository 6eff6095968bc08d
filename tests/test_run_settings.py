"""Execution settings are made in one place (``spamflow.runs.run_settings``: the config's values,
a command-line flag over its config value) and travel to each Luigi task as one parameter that
is not part of the task's identity."""

from __future__ import annotations

import argparse

from spamflow.config import parse_config
from spamflow.detector import RunSettings
from spamflow.plan import plan_run
from spamflow.runs import StageRunner, run_settings
from spamflow_workflows.dag import final_tasks, run_pipeline
from spamflow_workflows.stage_task import settings_from_json

CONFIG = ("workdir: w\ninput: {demo: {}}\nworkers: 3\nstrict: false\n"
          "mapreduce: {runner: local, args: [--cleanup, NONE]}\ndetectors: {obvious: {}}\n")


def test_flags_over_the_config(tmp_path, plugins):
    config = parse_config(CONFIG, plugins, path=tmp_path / "c.yaml")
    assert run_settings(config.model) == RunSettings("local", ("--cleanup", "NONE"), workers=3, strict=False, progress=None)
    assert run_settings(config.model, workers=2, strict=True, progress=False) == RunSettings(
        "local", ("--cleanup", "NONE"), workers=2, strict=True, progress=False)
    # a command's args: its --workers and --strict if it has them, else the config's
    given = StageRunner(run_pipeline, argparse.Namespace(workers=5, strict=True, progress=None)).settings(config)
    assert (given.workers, given.strict) == (5, True)
    assert StageRunner(run_pipeline, argparse.Namespace(config="c.yaml")).settings(config).workers == 3


def test_each_task_carries_the_settings_it_was_given(tmp_path, plugins):
    config = parse_config(CONFIG, plugins, path=tmp_path / "c.yaml")
    plan = plan_run(config, plugins)
    settings = RunSettings("local", ("--cleanup", "NONE"), workers=2, strict=True, progress=False)
    tasks = final_tasks(plan, config.workdir, settings)
    assert [t.stage for t in tasks] == ["report"]
    upstream = {t.stage: t for t in tasks[0].requires()}
    for task in [*tasks, *upstream.values()]:
        assert task.settings() == settings
        assert settings_from_json(task.settings_json) == settings
    # knobs are not identity: the same stage with other settings is the same task
    other = final_tasks(plan, config.workdir, RunSettings())
    assert other[0].task_id == tasks[0].task_id
