"""``spamflow hss similar``: rank all pages by HS-similarity to one page (Figure 4)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from spamflow.workdir_guard import add_force_option
from spamflow_hss.fingerprint_table import fingerprints_dataset
from spamflow_hss.one_to_all import find_page, plot_curve, rank_by_similarity


def add_command(subparsers: argparse._SubParsersAction) -> None:
    hss = subparsers.add_parser("hss", help="Hidden Style Similarity tools (the hss detector)")
    commands = hss.add_subparsers(dest="hss_command", required=True)
    p = commands.add_parser(
        "similar", help="rank every page by HS-similarity to one page and plot the curve (the paper's Figure 4)",
        description=("Run the config's DAG up to the hss stage, then rank every fingerprinted page by Sim_b "
                     "against the page given by doc_id or URL. Writes ranking.parquet and figure4.png and adds "
                     "an hss_similar entry to run.json."),
        epilog="example: spamflow hss similar -c my.yaml http://www.example.com/ --top 30")
    p.add_argument("page", metavar="URL_OR_DOC_ID", help="the reference page: its URL or doc_id")
    p.add_argument("-c", "--config", required=True, help="YAML config file (with hss under detectors:)")
    p.add_argument("--workdir", help="override the config's workdir")
    add_force_option(p)
    p.add_argument("--snapshot", help="take the reference page from this snapshot and rank only that snapshot")
    p.add_argument("--top", type=int, default=20, help="lines to print (default 20)")
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    from spamflow.config import load_config
    from spamflow.manifest import add_command_entry
    from spamflow.plugins import get_plugins

    plugins = get_plugins()
    config = load_config(args.config, plugins, workdir=args.workdir)
    if "hss" not in config.detectors:
        print(f"spamflow hss similar: {args.config} does not enable the hss detector; add `hss: {{}}` "
              "under detectors:", file=sys.stderr)
        return 2
    _settings, manifest = args.run_stages("hss similar", config, plugins, {"hss"})
    if manifest is None:
        return 1
    stage = manifest["stages"]["hss"]
    m = int(stage["params"]["m"])
    table = fingerprints_dataset(Path(stage["outputs"]["fingerprints"]), m).to_table()
    try:
        row = find_page(table, args.page, args.snapshot)
    except LookupError as err:
        print(f"spamflow hss similar: {err}", file=sys.stderr)
        return 2
    started = time.time()
    reference = table.slice(row, 1).to_pylist()[0]
    if args.snapshot:
        keep = [i for i, s in enumerate(table.column("snapshot").to_pylist()) if s == args.snapshot]
        table, row = table.take(keep), keep.index(row)
    ranked = rank_by_similarity(table, row, m)
    outdir = config.workdir / "hss_similar" / f"{reference['doc_id']}-{args.snapshot or 'all'}-{stage['signature']}"
    outdir.mkdir(parents=True, exist_ok=True)
    pq.write_table(ranked, outdir / "ranking.parquet")
    plot_curve(ranked, outdir / "figure4.png", f"HS-similarity to {reference['url']} ({reference['snapshot']})")
    manifest_path = add_command_entry(config.workdir, "hss_similar", {
        "outputs": {"ranking": str(outdir / "ranking.parquet"), "figure4": str(outdir / "figure4.png")},
        "params": {"page": args.page, "doc_id": reference["doc_id"], "snapshot": args.snapshot},
        "counts": {"pages": ranked.num_rows}, "seconds": round(time.time() - started, 3),
        "signature": stage["signature"], "directory": str(outdir), "requires": {"hss": stage["signature"]}},
        command="hss similar")
    print(f"{'rank':>6} {'sim_b':>6}  url")
    for r in ranked.slice(0, args.top).to_pylist():
        print(f"{r['rank']:>6} {r['sim_b']:>6.3f}  {r['url']} ({r['snapshot']})")
    print(f"ranking.parquet, figure4.png: {outdir}")
    print(json.dumps({"run.json": str(manifest_path)}))
    return 0
