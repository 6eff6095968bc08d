"""``spamflow quilt-sweep``: the paper's Table 1 and Figure 3 for your corpus."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from pydantic import ValidationError

from spamflow.errors import ConfigError
from spamflow.workdir_guard import add_force_option
from spamflow_quilt.params import QuiltParams
from spamflow_quilt.sweep import parse_values, plot_figure3, run_sweep, sweep_points, write_table

SWEEP_VERSION = "1"


def add_command(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "quilt-sweep", help="sweep quilt parameters around a pivot (the paper's Table 1 and Figure 3)",
        description=("Run the config's DAG up to the page table, then the quilt jobs for each parameter "
                     "point: the pivot, and each of k, m, c, theta varied alone over the values given. "
                     "Results a point shares with another (shingles for one k, patch grams for one k and m, "
                     "...) are computed once. Writes table1.csv and figure3.png and adds a quilt_sweep entry "
                     "to run.json."),
        epilog="example: spamflow quilt-sweep -c my.yaml --k 2..10 --m 10,20,50,100 --c 2..8 --theta 0.1..0.9:0.1")
    p.add_argument("-c", "--config", required=True, help="YAML config file")
    p.add_argument("--workdir", help="override the config's workdir")
    add_force_option(p)
    p.add_argument("--pivot", default="5,50,4,0.5", help="k,m,c,theta of the pivot (default: the paper's 5,50,4,0.5)")
    p.add_argument("--foreign", choices=["none", "domain", "ip"],
                   help="foreign-source mode for every point (default: the config's quilt block, else none)")
    p.add_argument("--phi", type=float, default=None, help="phi for every point (default: off)")
    for name, kind, example in (("k", "ints", "2..10"), ("m", "ints", "10,20,50,100"), ("c", "ints", "2..8"),
                                ("theta", "floats", "0.1..0.9:0.1")):
        p.add_argument(f"--{name}", help=f"values of {name} ({kind}: a..b, a..b:step or a,b,c; e.g. {example})")
    p.set_defaults(handler=run_command)


def parse_pivot(text: str, *, foreign: str, phi: float | None) -> QuiltParams:
    """``--pivot k,m,c,theta`` as validated parameters; anything else is an error naming the flag."""
    parts = text.split(",")
    try:
        if len(parts) != 4:
            raise ValueError(f"give four values k,m,c,theta, not {len(parts)}")
        k, m, c, theta = parts
        return QuiltParams.model_validate({"k": int(k), "m": int(m), "c": int(c), "theta": float(theta),
                                           "foreign": foreign, "phi": phi})
    except ValidationError as exc:
        raise ConfigError(f"quilt-sweep: --pivot {text}: {'; '.join(e['msg'] for e in exc.errors())}") from None
    except ValueError as exc:
        raise ConfigError(f"quilt-sweep: --pivot {text}: {exc}") from None


def run_command(args: argparse.Namespace) -> int:
    from spamflow.config import load_config
    from spamflow.manifest import add_command_entry
    from spamflow.plan import signature
    from spamflow.plugins import get_plugins

    plugins = get_plugins()
    config = load_config(args.config, plugins, workdir=args.workdir)
    configured = config.detectors.get("quilt")
    pivot = parse_pivot(args.pivot, foreign=args.foreign or getattr(configured, "foreign", "none"), phi=args.phi)
    ranges = {}
    for name in ("k", "m", "c", "theta"):
        if value := getattr(args, name):
            try:
                ranges[name] = parse_values(value, float if name == "theta" else int)
            except ValueError as exc:
                raise ConfigError(f"quilt-sweep: --{name} {value}: {exc}") from None
    points = sweep_points(pivot, ranges)  # validated before any stage runs
    settings, manifest = args.run_stages("quilt-sweep", config, plugins, {"parse"})
    if manifest is None:
        return 1
    parse = manifest["stages"]["parse"]
    # the points as found (engine: how they would run, not in the sweep's identity; the sweep runs the jobs)
    params = {"points": [p.model_dump(exclude=set(p.execution_keys)) for p in points]}
    sig = signature("quilt_sweep", SWEEP_VERSION, params, {"parse": parse["signature"]})
    outdir = config.workdir / "sweeps" / f"quilt_sweep-{sig}"
    outdir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    rows = run_sweep(Path(parse["outputs"]["pages"]), config.workdir / "sweeps" / f"quilt-work-{parse['signature']}",
                     points, settings.runner, settings.runner_args, workers=settings.workers)
    write_table(rows, outdir / "table1.csv")
    plot_figure3(rows, outdir / "figure3.png")
    manifest_path = add_command_entry(config.workdir, "quilt_sweep", {
        "outputs": {"table1": str(outdir / "table1.csv"), "figure3": str(outdir / "figure3.png")},
        "params": params, "counts": {"points": len(points)}, "seconds": round(time.time() - started, 3),
        "signature": sig, "directory": str(outdir), "requires": {"parse": parse["signature"]}}, command="quilt-sweep")
    print(f"{'varied':<7} {'k':>3} {'m':>5} {'c':>3} {'theta':>6} {'quilted':>8} {'%':>8} {'sources':>8}")
    for r in rows:
        print(f"{r['varied']:<7} {r['k']:>3} {r['m']:>5} {r['c']:>3} {r['theta']:>6} {r['quilted']:>8} "
              f"{r['quilted_percent']:>8} {r['mean_sources']:>8}")
    print(f"table1.csv, figure3.png: {outdir}")
    print(json.dumps({"run.json": str(manifest_path)}))
    return 0
