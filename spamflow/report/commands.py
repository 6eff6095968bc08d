"""``spamflow report`` and ``spamflow judge``: run what the config needs, then write the report
of run.json or serve the judging page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def judge_kinds() -> tuple[str, ...]:
    """What ``spamflow judge`` can show: hosts, then the kinds of evidence the loaded plugins
    declare (``spamflow_report_evidence_kinds``), in report order."""
    from spamflow.plugins import get_plugins
    from spamflow.report.evidence import evidence_kinds

    return tuple(evidence_kinds(get_plugins()))


def add_commands(sub: argparse._SubParsersAction) -> None:
    from spamflow.workdir_guard import add_force_option

    p = sub.add_parser("report", help="write the HTML report of a config's run", description=(
        "Run the config's DAG (finished stages are not redone), then write <workdir>/report/index.html and its "
        "assets/ from run.json, including what other commands added to it (quilt-sweep, hss similar)."))
    p.add_argument("-c", "--config", required=True, help="YAML config file")
    p.add_argument("--workdir", help="override the config's workdir")
    p.add_argument("--out", help="report folder (default: <workdir>/report)")
    add_force_option(p)
    p.add_argument("--title", help="the report's title (default: the workdir)")
    p.set_defaults(handler=run_report)

    p = sub.add_parser("judge", help="label hosts, quilts, clusters, campaigns on a local page", description=(
        "Run the config's DAG, then serve a judging page on 127.0.0.1: one item at a time with its evidence, "
        "keys s/n/u to label it spam/not spam/unsure.  Labels are saved as given in <workdir>/judge/: "
        "judgements.jsonl (every verdict) and labels.csv (host,label: what `spamflow train` reads)."))
    p.add_argument("-c", "--config", required=True, help="YAML config file")
    p.add_argument("--workdir", help="override the config's workdir")
    p.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free port; default 8765)")
    p.add_argument("--labels", help="labels folder (default: <workdir>/judge)")
    add_force_option(p)
    kinds = judge_kinds()
    p.add_argument("--kinds", default=",".join(kinds), help=f"what to judge, in order (default {','.join(kinds)})")
    p.set_defaults(handler=run_judge)


def _run_stages(command: str, args: argparse.Namespace) -> tuple[Any, dict[str, Any] | None]:
    from spamflow.config import load_config
    from spamflow.plan import plan_run
    from spamflow.plugins import get_plugins

    plugins = get_plugins()
    config = load_config(args.config, plugins, workdir=args.workdir).with_force(args.force)
    _settings, manifest = args.run_stages(command, config, plugins, set(plan_run(config, plugins)))
    return config, manifest


def run_report(args: argparse.Namespace) -> int:
    from spamflow.plugins import get_plugins
    from spamflow.report.render import write_report

    config, manifest = _run_stages("report", args)
    if manifest is None:
        return 1
    out = Path(args.out) if args.out else config.workdir / "report"
    settings = config.model.report
    path, counts = write_report(manifest["stages"], out, title=args.title or config.workdir_location,
                                max_items=settings.max_items, max_hosts=settings.max_hosts, plugins=get_plugins())
    print(", ".join(f"{k}={v}" for k, v in counts.items()))
    print(f"report: {path}")
    if config.workdir_url and not args.out:  # written in the local cache; published beside run.json
        from spamflow.storage import join, upload_tree

        url = join(config.workdir_url, "report")
        upload_tree(out, url, last=path.name, listing=False)
        print(f"report: {join(url, path.name)}")
    return 0


def run_judge(args: argparse.Namespace) -> int:
    from spamflow.plugins import get_plugins
    from spamflow.report.judge import make_server
    from spamflow.report.labels import LabelStore
    from spamflow.report.render import gather

    known = judge_kinds()
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = sorted(set(kinds) - set(known))
    if unknown:
        print(f"spamflow judge: --kinds: unknown {unknown}; choose from {', '.join(known)}", file=sys.stderr)
        return 2
    config, manifest = _run_stages("judge", args)
    if manifest is None:
        return 1
    settings = config.model.report
    items = gather(manifest["stages"], settings.max_items, settings.max_hosts, get_plugins()).items()
    items = sorted((e for e in items if e.kind in kinds), key=lambda e: kinds.index(e.kind))
    store = LabelStore(Path(args.labels) if args.labels else config.workdir / "judge")
    server = make_server(items, store, args.port, title=config.workdir_location)
    host, port = str(server.server_address[0]), int(server.server_address[1])
    print(f"judging {len(items)} items ({len(store.labels)} already labelled) at http://{host}:{port}/", flush=True)
    print(f"labels: {store.csv} (hosts), {store.journal} (every verdict); Ctrl-C stops", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
