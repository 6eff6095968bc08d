"""Build the DAG for a config and run it with Luigi, then write run.json."""

from __future__ import annotations

import json
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import luigi
import luigi.rpc

from spamflow import storage
from spamflow.config import Config
from spamflow.console import run_started, stage_lines_on
from spamflow.detector import RunSettings
from spamflow.errors import SpamflowError
from spamflow.manifest import build_manifest, manifest_location, read_manifest_file, write_manifest
from spamflow.mr.engine import planned_input_bytes, resolve_runner
from spamflow.plan import PlannedStage, plan_run
from spamflow.plugins import SpamflowPlugins
from spamflow.runs import RunOutcome, StageRunner
from spamflow.stage_runner import is_complete
from spamflow_workflows.stage_task import FAILURES, StageTask, collect_failures, settings_to_json

__all__ = ["RunOutcome", "check_scheduler", "final_tasks", "run_for_command", "run_pipeline"]


def final_tasks(plan: dict[str, PlannedStage], workdir: str | Path, settings: RunSettings,
                targets: set[str] | None = None, failures_dir: str = "") -> list[StageTask]:
    """The stages nothing else requires (or ``targets``): building them builds the DAG.  (A
    stage after an incomplete one is itself incomplete, ``is_complete``, so Luigi, which looks
    no further than a complete task, reaches every stage to redo.)"""
    needed = {up for stage in plan.values() for up in stage.requires}
    if targets is not None:
        needed = set(plan) - targets
    plan_json = json.dumps({name: stage.to_json() for name, stage in plan.items()})
    return [StageTask(stage=name, signature=stage.signature, workdir=str(workdir), plan_json=plan_json,
                      settings_json=settings_to_json(settings), failures_dir=failures_dir)
            for name, stage in plan.items() if name not in needed]


def run_pipeline(config: Config, plugins: SpamflowPlugins, settings: RunSettings, *,
                 scheduler_host: str | None = None, scheduler_port: int = 8082,
                 targets: set[str] | None = None) -> RunOutcome:
    """Run every stage of ``config`` (or only ``targets`` and what they need) that is not
    already complete; write run.json whenever the DAG was built (not when the named luigid
    cannot be reached: then nothing ran)."""
    if scheduler_host:
        check_scheduler(scheduler_host, scheduler_port)
    config.claim_workdir()  # a non-empty folder spamflow did not create is refused (unless workdir_force)
    plan = plan_run(config, plugins)
    if settings.runner == "auto":
        size = planned_input_bytes(plan)
        settings = resolve_runner(settings, size)
        known = "unknown before the run" if size is None else f"{size:,} bytes"
        print(f"mapreduce.runner auto: {settings.runner} (WARC input {known}; inline up to "
              f"{settings.inline_below:,})", file=sys.stderr)
    started = time.time()
    before = {name for name, stage in plan.items() if is_complete(stage)}
    if stage_lines_on(settings.progress):
        built = _with_upstream(plan, targets)
        print(run_started(len(built - before), len(built & before)), file=sys.stderr, flush=True)
    build_args: dict[str, object] = {"workers": settings.stages_at_once, "detailed_summary": True,
                                     "log_level": "WARNING"}
    if scheduler_host:
        build_args.update(scheduler_host=scheduler_host, scheduler_port=scheduler_port)
        retry_the_scheduler_briefly()
    else:
        build_args["local_scheduler"] = True
    FAILURES.clear()
    with tempfile.TemporaryDirectory(prefix="spamflow-failures-") as failures:
        try:
            result = luigi.build(final_tasks(plan, config.workdir_location, settings, targets, failures),
                                 **build_args)
        except luigi.rpc.RPCError as exc:
            done = sorted(name for name, stage in plan.items() if name not in before and is_complete(stage))
            raise SpamflowError(
                f"the luigid scheduler at {scheduler_host}:{scheduler_port} stopped answering mid-run ({exc}); "
                f"stages finished before it went are kept ({', '.join(done) or 'none'}): start luigid again "
                "and rerun to resume") from None
        collect_failures(Path(failures))
    wanted = [stage for name, stage in plan.items() if targets is None or name in targets]
    ok = result.status in (luigi.LuigiStatusCode.SUCCESS, luigi.LuigiStatusCode.SUCCESS_WITH_RETRY) \
        and all(is_complete(stage) for stage in wanted)
    ran = {name for name, stage in plan.items() if name not in before and is_complete(stage)}
    manifest = build_manifest(plan, status="success" if ok else "failed", started=started,
                              config_path=str(config.path) if config.path else None, ran=ran,
                              errors=dict(FAILURES), previous=previous_manifest(config.workdir_location))
    path = write_manifest(config.workdir_location, manifest)
    return RunOutcome(ok, result.status.name, path, result.summary_text, dict(FAILURES))


def _with_upstream(plan: dict[str, PlannedStage], targets: set[str] | None) -> set[str]:
    """The stages a build of ``targets`` (None: every stage) reaches."""
    todo, seen = list(plan if targets is None else targets), set()
    while todo:
        name = todo.pop()
        if name in plan and name not in seen:
            seen.add(name)
            todo.extend(plan[name].requires)
    return seen


SCHEDULER_RETRIES = 2
SCHEDULER_RETRY_WAIT = 1
"""Attempts, and seconds between them, at each call to luigid (unless the Luigi config sets
``[core] rpc-retry-attempts`` / ``rpc-retry-wait``): enough for a blip, where Luigi's own
3 x 30 s, each failure logged with a traceback, keep a run whose luigid died hanging for
minutes of tracebacks before it fails anyway."""


def retry_the_scheduler_briefly() -> None:
    """Set Luigi's retries of luigid calls to :data:`SCHEDULER_RETRIES` x
    :data:`SCHEDULER_RETRY_WAIT` s where the Luigi config leaves them unset; its per-attempt
    messages are INFO, below the run's log level, and the RPCError that follows becomes the
    one line ``run_pipeline`` raises."""
    config = luigi.configuration.get_config()
    for key, value in (("rpc-retry-attempts", SCHEDULER_RETRIES), ("rpc-retry-wait", SCHEDULER_RETRY_WAIT)):
        if not config.has_option("core", key):
            config.set("core", key, str(value))


def previous_manifest(workdir: str | Path) -> dict | None:
    """The run.json a new one replaces (its command entries are kept); an unreadable one is
    said on stderr and replaced whole."""
    location = manifest_location(workdir)
    if not (storage.exists(location) if isinstance(location, str) else location.is_file()):
        return None
    try:
        return read_manifest_file(location)
    except (OSError, ValueError) as exc:
        print(f"spamflow: {location}: unreadable ({exc}); writing a new one without the entries "
              "commands added to it", file=sys.stderr)
        return None


def check_scheduler(host: str, port: int) -> None:
    """Ask the luigid at ``host:port`` one cheap question (``is_paused``) before building.

    Luigi's own RemoteScheduler retries an unreachable scheduler ``rpc-retry-attempts``
    times, ``rpc-retry-wait`` seconds apart (3 x 30 s by default), logging a traceback each
    time, and then fails with one more: a minute and hundreds of lines for a wrong port.
    Raises SpamflowError, one line naming host and port, if there is no luigid there."""
    url = f"http://{host}:{port}/"  # the URL luigi.build would use
    timeout = luigi.configuration.get_config().getfloat("core", "rpc-connect-timeout", 10.0)
    try:
        with urllib.request.urlopen(url + "api/is_paused", timeout=timeout) as reply:
            answer = json.loads(reply.read())
        if not isinstance(answer, dict) or "response" not in answer:
            raise ValueError("no 'response' in its answer")
        return
    except urllib.error.HTTPError as exc:
        why = f"something answered HTTP {exc.code}, but not as luigid"
    except urllib.error.URLError as exc:
        reason = exc.reason
        why = (reason.strerror or str(reason)) if isinstance(reason, OSError) else str(reason)
    except ValueError as exc:  # not JSON, or not luigid's JSON
        why = f"something answered, but not as luigid: {exc}"
    except OSError as exc:  # a timeout or a reset after connecting
        why = str(exc) or type(exc).__name__
    raise SpamflowError(f"cannot reach the luigid scheduler at {host}:{port} ({why}); start it there "
                        f"(luigid --port {port}), or drop scheduler.host / --scheduler-host, or pass "
                        "--local-scheduler, to use Luigi's local scheduler")


def run_for_command(command: str, config: Config, plugins: SpamflowPlugins,
                    targets: set[str]) -> tuple[RunSettings, dict | None]:
    """The old entry point of a command that runs stages (kept for callers outside spamflow):
    what ``args.run_stages`` does, with the config's settings."""
    return StageRunner(run_pipeline)(command, config, plugins, targets)
