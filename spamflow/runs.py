"""What a command needs to run stages without knowing how the DAG is built.

The layers point down: core (``spamflow``) <- plugins <- workflows.  The DAG (Luigi) lives in
the workflows package, which is also where the command line starts (the composition root): it
hands :func:`spamflow.cli.main` a :class:`DagRunner`, and every command, built-in or added by a
plugin, reaches the DAG only through ``args.run_stages`` (a :class:`StageRunner` around that
runner).  So no core module and no plugin imports the workflows package.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from spamflow.detector import RunSettings
from spamflow.errors import SpamflowError

if TYPE_CHECKING:
    from spamflow.config import Config, ConfigModel
    from spamflow.plugins import SpamflowPlugins


@dataclass
class RunOutcome:
    ok: bool
    status: str  # Luigi's summary status, e.g. SUCCESS, FAILED
    manifest: Path | str  # run.json: a path, or a URL under a remote workdir
    summary: str
    errors: dict[str, str]  # failed stage -> message


class DagRunner(Protocol):
    """Runs every stage of ``config`` (or only ``targets`` and what they need) that is not
    complete, and writes run.json: ``spamflow_workflows.run_pipeline``."""

    def __call__(self, config: Config, plugins: SpamflowPlugins, settings: RunSettings, *,
                 scheduler_host: str | None = None, scheduler_port: int = 8082,
                 targets: set[str] | None = None) -> RunOutcome: ...


def run_settings(model: ConfigModel, *, workers: int | None = None, strict: bool | None = None,
                 progress: bool | None = None, stages_at_once: int | None = None) -> RunSettings:
    """The one place execution settings are made: the config's values, a flag given on the
    command line (``--workers``, ``--strict``, ``--progress``, ``--stages-at-once``) over its
    config value."""
    return RunSettings(runner=model.mapreduce.runner, runner_args=tuple(model.mapreduce.args),
                       inline_below=model.mapreduce.inline_below,
                       workers=workers or model.workers, strict=model.strict if strict is None else strict,
                       progress=progress, stages_at_once=stages_at_once or model.stages_at_once)


class NoDagRunner:
    """The runner of a command line built without the workflows package (``python -m
    spamflow.cli``): commands that do not run stages work, the others say where to start."""

    def __call__(self, *args: Any, **kwargs: Any) -> RunOutcome:
        raise SpamflowError("this command runs the DAG, which the workflows package provides: use the `spamflow` "
                            "command or `python -m spamflow_workflows` (`python -m spamflow.cli` only validates "
                            "and lists)")


class StageRunner:
    """``args.run_stages`` of every command: run the stages it needs with the settings of the
    config and of the command's own flags (``--workers``, ``--strict``, ``--progress`` if it has
    them)."""

    def __init__(self, runner: DagRunner, args: argparse.Namespace | None = None) -> None:
        self.runner = runner
        self.args = args or argparse.Namespace()

    def settings(self, config: Config) -> RunSettings:
        return run_settings(config.model, workers=getattr(self.args, "workers", None),
                            strict=getattr(self.args, "strict", None), progress=getattr(self.args, "progress", None),
                            stages_at_once=getattr(self.args, "stages_at_once", None))

    def __call__(self, command: str, config: Config, plugins: SpamflowPlugins,
                 targets: set[str]) -> tuple[RunSettings, dict[str, Any] | None]:
        """``targets`` and the stages they read, then the contents of run.json; None for the
        latter after saying on stderr which stage failed and where run.json is.  Under a remote
        workdir the entries of ``targets`` and what they read point at local copies."""
        config.with_force(getattr(self.args, "force", None))  # every command's --force, if it has one
        settings = self.settings(config)
        outcome = self.runner(config, plugins, settings, targets=targets)
        if not outcome.ok:
            failed = ", ".join(sorted(outcome.errors)) or ", ".join(sorted(targets))
            print(f"spamflow {command}: stage {failed} failed; see {outcome.manifest}", file=sys.stderr)
            return settings, None
        from spamflow.manifest import localized, read_manifest_file

        manifest: dict[str, Any] = read_manifest_file(outcome.manifest)
        if config.workdir_url:
            manifest = localized(manifest, config.workdir_url, config.workdir, targets)
        return settings, manifest
