"""The ``spamflow`` command line: its parsers and commands.  It receives the DAG runner as a
callable (:class:`spamflow.runs.DagRunner`) from the composition root,
``spamflow_workflows.cli:main`` (the ``spamflow`` console script), and imports no workflow."""

from __future__ import annotations

import argparse
import glob
import json
import re
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

import spamflow
from spamflow.errors import ConfigError, SpamflowError
from spamflow.runs import DagRunner, NoDagRunner, StageRunner
from spamflow.workdir_guard import add_force_option

DESCRIPTION = """\
spamflow finds web spam in crawls.  It reads WARC files (or generates a demo web),
parses every HTML response into a Parquet page table, and runs the detectors selected
in a YAML config as a Luigi DAG.  Every run writes <workdir>/run.json, which names every
output.  Start with `spamflow demo`; see docs/config.md for the config file.
"""

EPILOG = """\
examples:
  spamflow demo --workdir /tmp/spamflow-demo     generate the demo web, crawl it on loopback, run on it
  spamflow validate -c configs/example.yaml      check a config without running
  spamflow run -c configs/example.yaml           run (re-runs skip finished stages)
  spamflow run -c my.yaml --scheduler-host 127.0.0.1 --scheduler-port 8082
                                                 run through a central luigid
  spamflow detectors                             what can go under detectors:
  spamflow crawl -c my.yaml --out crawl/         crawl input.crawl into WARC (rerun to resume)
  spamflow report -c my.yaml                     HTML report of the run (<workdir>/report/index.html)
  spamflow judge -c my.yaml                      label hosts and evidence on http://127.0.0.1:8765/
  spamflow export -c my.yaml --to out/ --format parquet
                                                 per-host and per-URL scores for data-set pipelines
"""


def _at_least_one(text: str) -> int:
    """A count flag: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}")
    return value


def _add_run_options(p: argparse.ArgumentParser, workdir_help: str) -> None:
    p.add_argument("--workdir", help=workdir_help)
    add_force_option(p)
    p.add_argument("--workers", type=int, help="processes per stage (default: the config's workers, 1)")
    p.add_argument("--stages-at-once", type=_at_least_one, metavar="N",
                   help="run up to N stages that need nothing from each other at the same time, each in its own "
                        "process (default: the config's stages_at_once, 1)")
    p.add_argument("--strict", action="store_true", default=None,
                   help="stop at the first bad record instead of counting it in run.json")
    p.add_argument("--scheduler-host", help="central luigid host (default: the config's, else a local scheduler)")
    p.add_argument("--scheduler-port", type=int, help="central luigid port (default 8082)")
    p.add_argument("--local-scheduler", action="store_true",
                   help="use Luigi's local scheduler even if the config names a luigid")
    _add_progress_options(p)


def _add_progress_options(p: argparse.ArgumentParser) -> None:
    """``args.progress``: None (bars only when stderr is a terminal), True or False."""
    bars = p.add_mutually_exclusive_group()
    bars.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars")
    bars.add_argument("--progress", dest="progress", action="store_true",
                      help="progress bars even when stderr is not a terminal (default: only on a terminal)")
    p.set_defaults(progress=None)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spamflow", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"spamflow {spamflow.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("run", help="run the DAG of a config", description=(
        "Run every stage of the config's DAG that is not already complete, then write "
        "<workdir>/run.json.  Exits 0 only if Luigi reports success."))
    p.add_argument("-c", "--config", required=True, help="YAML config file")
    _add_run_options(p, "override the config's workdir (outputs and run.json go here)")

    p = sub.add_parser("demo", help="generate the bundled demo web, crawl it and run on it", description=(
        "The same as `spamflow run -c configs/demo.yaml`, with the config shipped in the package: "
        "needs no data beyond the installed package.  The demo web is served on loopback addresses "
        "(one per simulated IP) and crawled, each snapshot, before every other stage."))
    _add_run_options(p, "where to write (default: ./spamflow-demo)")
    crawl = p.add_mutually_exclusive_group()
    crawl.add_argument("--no-crawl", dest="crawl", action="store_false",
                       help="read the generated WARC files directly, without serving and crawling them")
    crawl.add_argument("--crawl", dest="crawl", action="store_true", help="crawl the demo web (the default)")
    p.set_defaults(config=None, workdir="spamflow-demo")

    p = sub.add_parser("validate", help="check a config and show the stages it would run",
                       description="Validate a config: schema, detector names and parameters, input files.")
    p.add_argument("-c", "--config", required=True, help="YAML config file")

    p = sub.add_parser("crawl", help="crawl the config's input.crawl into WARC files (resumable)", description=(
        "Crawl every snapshot of the config's input.crawl into DIR/<snapshot>/warc/.  Killed at any "
        "moment, the same command on the same DIR continues without refetching what is stored."))
    p.add_argument("-c", "--config", required=True, help="YAML config file with an input.crawl section")
    p.add_argument("--out", help="crawl directory (default: <workdir>/crawl)")
    add_force_option(p)
    _add_progress_options(p)

    for name, what in (("plugins", "loaded plugins: name, version, origin, hooks"),
                       ("detectors", "registered detectors: name, plugin, version, parameter schema")):
        p = sub.add_parser(name, help=f"list {what}", description=f"List {what}.")
        p.add_argument("--json", action="store_true", help="machine-readable output")

    from spamflow.export.commands import add_commands as add_export_commands
    from spamflow.plugins import get_plugins
    from spamflow.report.commands import add_commands as add_report_commands

    add_report_commands(sub)
    add_export_commands(sub)
    get_plugins().pm.hook.spamflow_register_commands(subparsers=sub)
    return parser


def demo_config_path() -> Path:
    return Path(str(resources.files("spamflow") / "configs" / "demo.yaml"))


def _without_demo_crawl(config: Any) -> Any:
    """``spamflow demo --no-crawl``: the demo config with ``input.demo.crawl`` false."""
    model = config.model
    if model.input.demo is None:
        return config
    demo = model.input.demo.model_copy(update={"crawl": False})
    config.model = model.model_copy(update={"input": model.input.model_copy(update={"demo": demo})})
    return config


def main(argv: list[str] | None = None, runner: DagRunner | None = None) -> int:
    """Parse ``argv`` and run the command; ``runner`` runs the DAG (without one, the commands
    that run stages say where to start instead)."""
    args = None
    try:
        args = build_parser().parse_args(argv)
        dag = runner or NoDagRunner()
        args.run_stages = StageRunner(dag, args)
        return _dispatch(args, dag)
    except ConfigError as exc:
        print(f"spamflow: config error: {exc}", file=sys.stderr)
        config = getattr(args, "config", None)
        for path, how in missing_needs(Path(config)) if config else []:
            print(f"spamflow: {config} needs {path}, which is not there: {how}", file=sys.stderr)
        return 2
    except SpamflowError as exc:
        print(f"spamflow: error: {exc}", file=sys.stderr)
        return 1


_NEEDS = re.compile(r"^#\s*needs:\s*(\S+)\s+(.*\S)\s*$")


def missing_needs(config: Path) -> list[tuple[str, str]]:
    """The ``# needs: PATH  how to get it`` comments of a config whose PATH (a glob,
    relative to the config file) matches nothing: files an example config expects that a
    fresh clone does not have, said next to the error they cause."""
    try:
        lines = config.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    needs = [m.groups() for m in map(_NEEDS.match, lines) if m]
    return [(path, how) for path, how in needs
            if not glob.glob(str(config.absolute().parent / path), recursive=True)]


def _dispatch(args: argparse.Namespace, runner: DagRunner) -> int:
    from spamflow.plugins import get_plugins

    if getattr(args, "handler", None) is not None:  # a command added by a plugin
        return int(args.handler(args))

    plugins = get_plugins()
    if args.command == "plugins":
        rows = [vars(p) | {"hooks": list(p.hooks)} for p in plugins.plugins()]
        _print_rows(rows, args.json, ("name", "version", "origin", "hooks"))
        return 0
    if args.command == "detectors":
        rows = [{"name": d.name, "plugin": d.plugin, "version": d.cls.version, "requires": list(d.cls.requires),
                 "description": d.cls.description, "params": _param_schema(d.cls)} for d in plugins.detectors.infos()]
        _print_rows(rows, args.json, ("name", "plugin", "version", "requires", "description", "params"))
        return 0

    from spamflow.config import load_config
    from spamflow.plan import plan_run

    config_path = args.config or demo_config_path()
    config = load_config(config_path, plugins, workdir=getattr(args, "workdir", None))
    config.with_force(getattr(args, "force", None))
    if args.command == "demo" and not args.crawl:
        config = _without_demo_crawl(config)
    if args.command == "crawl":
        return _crawl(args, config)
    if args.command == "validate":
        from spamflow.workdir_guard import check_writable

        plan = plan_run(config, plugins)
        check_writable(config.workdir_location, where=config.where())  # a remote one was checked on loading
        print(f"{config_path}: ok")
        summary = config.input_summary()
        if summary:
            print(summary)
        print(f"workdir: {config.workdir_location}"
              + (f" (local cache: {config.workdir})" if config.workdir_url else ""))
        for name, stage in plan.items():
            print(f"  {name:<12} {stage.signature}  params={json.dumps(stage.params)[:100]}")
        return 0
    return _run(args, config, plugins, runner)


def _crawl(args: argparse.Namespace, config: Any) -> int:
    from spamflow.crawl.crawler import crawl

    crawls = config.crawls()
    if not crawls:
        raise ConfigError(f"{config.where()}: input: `spamflow crawl` needs an input.crawl section")
    if not args.out:  # the crawl goes into the workdir
        config.claim_workdir()
    out = Path(args.out) if args.out else config.workdir / "crawl"
    for settings in crawls:
        summary = crawl(settings, out / settings.snapshot, config.base_dir, progress=args.progress)
        counts = summary.counts
        errors = sum(v for k, v in counts.items() if k.startswith("errors_"))
        print(f"{settings.snapshot}: {counts.get('pages', 0)} pages, {counts.get('body_bytes', 0)} bytes, "
              f"{errors} errors, {counts.get('pending_at_end', 0)} pending; "
              f"{len(summary.warc_files)} WARC files in {out / settings.snapshot / 'warc'}; errors: {summary.errors}"
              + (f"; {counts.get('hosts_steered', 0)} hosts steered, {counts.get('subdomains_capped', 0)} "
                 f"subdomains capped: {summary.steer}" if summary.steer else ""))
    return 0


def _run(args: argparse.Namespace, config: Any, plugins: Any, runner: DagRunner) -> int:
    from spamflow.console import stage_line

    model = config.model
    settings = args.run_stages.settings(config)
    host = None if args.local_scheduler else (args.scheduler_host or model.scheduler.host)
    port = args.scheduler_port or model.scheduler.port
    outcome = runner(config, plugins, settings, scheduler_host=host, scheduler_port=port)
    from spamflow.manifest import read_manifest_file

    manifest = read_manifest_file(outcome.manifest)
    for name, stage in manifest["stages"].items():
        print(stage_line(name, stage))
    print(f"run.json: {outcome.manifest}")
    if outcome.ok and args.command == "demo":
        stages = manifest["stages"]
        print(f"pages (Parquet): {stages['parse']['outputs']['pages']}")
        print(f"ground truth: {stages['demo']['outputs']['labels']} (pages.tsv, hosts.tsv) "
              f"and {stages['demo']['outputs']['truth']}")
    if outcome.ok and "report" in manifest["stages"]:
        print(f"report (HTML): {manifest['stages']['report']['outputs']['report']}")
    if not outcome.ok:
        for stage, message in outcome.errors.items():
            print(f"spamflow: stage {stage!r} failed: {message}", file=sys.stderr)
        print(f"spamflow: run failed (Luigi status {outcome.status}); details in {outcome.manifest}", file=sys.stderr)
        return 1
    return 0


def _param_schema(cls: Any) -> dict[str, Any]:
    """A detector's parameter JSON schema with the default of every optional parameter.

    Pydantic leaves ``default`` out for a ``default_factory`` field (``trust_seeds: list[str]
    = Field(default_factory=list)``), so such a parameter looked required; fill it in."""
    schema = cls.param_schema()
    props = schema.get("properties", {})
    for name, info in cls.Params.model_fields.items():
        prop = props.get(info.alias or name)
        if prop is not None and not info.is_required() and "default" not in prop:
            prop["default"] = to_jsonable_python(info.get_default(call_default_factory=True))
    return schema


def _schema_type(prop: dict[str, Any]) -> str:
    """A JSON-schema property as text: ``integer``, ``number | null``, ``one of a, b``,
    ``array of string``, ``integer | "auto"``."""
    if "enum" in prop:
        return "one of " + ", ".join(map(str, prop["enum"]))
    if "const" in prop:
        return json.dumps(prop["const"])
    if "anyOf" in prop:
        return " | ".join(_schema_type(p) for p in prop["anyOf"])
    if prop.get("type") == "array" and "items" in prop:
        return f"array of {_schema_type(prop['items'])}"
    return str(prop.get("type", "?"))


def _param_lines(schema: dict[str, Any]) -> str:
    """One line per parameter: ``name: type = default`` (optional) or ``name: type, required``;
    defaults as JSON (``null``, ``false``, ``[]``), which YAML reads back as the same value."""
    required = set(schema.get("required", []))
    return "".join(f"\n    {k}: {_schema_type(v)}"
                   + (", required" if k in required else f" = {json.dumps(v.get('default'), ensure_ascii=False)}")
                   + (f"  ({v['description']})" if v.get("description") else "")
                   for k, v in schema.get("properties", {}).items()) or "(no parameters)"


def _print_rows(rows: list[dict[str, Any]], as_json: bool, columns: tuple[str, ...]) -> None:
    if as_json:
        print(json.dumps(rows, indent=1))
        return
    if not rows:
        print("(none)")
    for row in rows:
        print(row[columns[0]])
        for col in columns[1:]:
            value = row[col]
            if col == "params":
                value = _param_lines(value)
            elif isinstance(value, list):
                value = ", ".join(map(str, value)) or "-"
            print(f"  {col}:" + (value if str(value).startswith("\n") else f" {value}"))


if __name__ == "__main__":
    sys.exit(main())
