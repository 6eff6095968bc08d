"""``spamflow train``, ``spamflow score`` and ``spamflow evaluate``.

Inputs are either a config (``-c``: the DAG runs up to its selected detectors, whose per-host
tables are joined, and hosts are grouped by registered domain and IP from the page table)
or external tables (``--table``, repeatable: CSV, Parquet or Weka ARFF, joined on host or id).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from spamflow.atomic import atomic_path, write_text_atomic
from spamflow.workdir_guard import add_force_option
from spamflow_ensemble.dataset import GROUP_BY, name_hosts, row_groups, row_labels, to_binary
from spamflow_ensemble.detector import ClassifyParams
from spamflow_ensemble.labels import NONSPAM, SPAM, read_hostnames, read_labels
from spamflow_ensemble.rankings import DEFAULT_THRESHOLD, RankingLabels, ranking_labels
from spamflow_ensemble.tables import FeatureTable, add_table_transforms, merge_tables, read_table


def _inputs(p: argparse.ArgumentParser, labels: bool = True) -> None:
    src = p.add_argument_group("input")
    src.add_argument("-c", "--config", help="YAML config: run it up to its detectors and join their host tables")
    src.add_argument("--workdir", help="override the config's workdir")
    add_force_option(src)
    src.add_argument("--table", action="append", default=[], metavar="PATH",
                     help="external feature table (.csv, .tsv, .parquet, .arff, optionally .gz) with a host or "
                          "hostid column; repeat to join several (each becomes a feature group)")
    src.add_argument("--no-link-transforms", action="store_true",
                     help="do not add Becchetti et al.'s transformed link features (logs and ratios, docs/links.md) "
                          "to a table that has the raw Web Spam Challenge link columns (*_hp, *_mp)")
    src.add_argument("--hostnames", help="Web Spam Challenge 'hostid hostname' file (ids in labels or tables)")
    if labels:
        src.add_argument("--labels", help="labels: Web Spam Challenge format or a host,label CSV "
                                          "(default: a class column of the table)")
        src.add_argument("--group-by", choices=GROUP_BY, default=None,
                         help="hosts sharing these never straddle a split (default: domain+ip with -c, "
                              "domain for tables with host names, none otherwise)")
    _rankings_args(p)


def _rankings_args(p: argparse.ArgumentParser) -> None:
    r = p.add_argument_group("spam rankings as labels (ClueWeb09/12, Waterloo)")
    r.add_argument("--rankings", action="append", default=[], metavar="PATH",
                   help="spam rankings file, 'percentile trec-id' per line (gz allowed); repeat for several. "
                        "Hosts are labelled by the median percentile of their ranked pages")
    r.add_argument("--rankings-map", metavar="PATH",
                   help="'trec_id<TAB>url' file mapping the ranked pages to hosts (default: the page table's "
                        "trec_id column, with -c)")
    r.add_argument("--rankings-threshold", type=int, default=DEFAULT_THRESHOLD, metavar="P",
                   help=f"a page (and a host, by its median) is spam below this percentile "
                        f"(default {DEFAULT_THRESHOLD})")


def _tree_bins(text: str) -> int | str:
    """``--tree-bins``: ``auto``, 0 or a bin count of at least 2."""
    from spamflow_ensemble.binning import bins_for

    value: int | str = text if text == "auto" else int(text) if text.lstrip("-").isdigit() else text
    try:
        bins_for(value, 1, 1)  # type: ignore[arg-type]
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return value


def _count(text: str) -> int:
    """A non-negative integer argument."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, not {text!r}")
    return int(text)


def _share(text: str) -> float:
    """``--prune``: a share of the models in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"prune: expected a share of the models in (0, 1], not {text!r}")
    return value


def _default(key: str) -> Any:
    """The classify stage's default for ``key``: one place for the config and these flags."""
    return ClassifyParams.model_fields[key].default


ESTIMATOR_KEYS = ("library", "folds", "init", "iterations", "bags", "bag_fraction", "prune", "tree_bins", "compress",
                  "seed")
"""The ensemble's settings that are both flags of train/evaluate and keys of the classify stage."""


def _estimator_args(p: argparse.ArgumentParser) -> None:
    """The ensemble's flags.  Each defaults to None, read by :func:`_estimator` as "the config's
    ``detectors.classify`` value with ``-c``, else the stage's default", so that ``spamflow train
    -c`` trains the model the config's classify stage trains."""
    e = p.add_argument_group("ensemble (each flag's default: the config's detectors.classify value with -c, "
                             "else the stage's default shown)")
    library, folds, init = _default("library"), _default("folds"), _default("init")
    iterations, bags, bag_fraction, prune = (_default(key) for key in ("iterations", "bags", "bag_fraction", "prune"))
    e.add_argument("--library", choices=["fast", "full"], help=f"model library (default {library})")
    e.add_argument("--folds", type=int, help=f"embedded cross-validation folds (default {folds})")
    e.add_argument("--init", type=int, help=f"sorted initialisation: best N models (default {init})")
    e.add_argument("--iterations", type=int, help=f"hillclimbing iterations (default {iterations})")
    e.add_argument("--bags", type=int, help=f"bagged selection: bags (default {bags})")
    e.add_argument("--bag-fraction", type=float, help=f"models drawn per bag (default {bag_fraction:g})")
    e.add_argument("--prune", type=_share,
                   help=f"library pruning: the share of the models, best out-of-fold AUC first, that enter selection "
                        f"(1: all; default {prune:g})")
    e.add_argument("--tree-bins", type=_tree_bins,
                   help="tree-based models see each feature in at most this many quantile bins; 0: raw values; "
                        "auto: raw values up to 250,000 hosts x features, 32 bins above (default auto)")
    e.add_argument("--compress", type=_count, metavar="N",
                   help="model compression: also train a fast mimic of the ensemble on its scores of the training "
                        "hosts and N times as many synthetic (MUNGE) hosts, and score with it; 0: off (default)")
    e.add_argument("--jobs", type=int, default=1, help="parallel model fits, and threads when scoring (default 1)")
    e.add_argument("--seed", type=int, help="random state of the folds and models (default 0)")


def estimator_settings(args: argparse.Namespace) -> dict[str, Any]:
    """Each of :data:`ESTIMATOR_KEYS`: the flag if given, else the config's classify stage's
    value (``args.classify_params``, set by :func:`load_features` with ``-c``), else the
    stage's default."""
    stage = getattr(args, "classify_params", None)
    return {key: getattr(args, key) if getattr(args, key, None) is not None
            else getattr(stage, key) if stage is not None else _default(key) for key in ESTIMATOR_KEYS}


def _engine_args(p: argparse.ArgumentParser) -> None:
    m = p.add_argument_group("scoring at scale (docs/classify.md)")
    m.add_argument("--engine", choices=["auto", "memory", "mapreduce"], default="auto",
                   help="memory: score in this process; mapreduce: with the map-only mrjob job mr_score; auto: "
                        "mapreduce on a cluster runner or above --mapreduce-above hosts (default auto)")
    m.add_argument("--mapreduce-above", type=_count, default=1_000_000, metavar="HOSTS",
                   help="hosts above which --engine auto runs the job (default 1000000)")
    m.add_argument("--runner", choices=["inline", "local", "spark", "hadoop", "emr"],
                   help="mrjob runner of the job (default: the config's mapreduce.runner with -c, else inline)")
    m.add_argument("--runner-arg", action="append", default=[], metavar="ARG",
                   help="extra mrjob option for --runner, repeatable (e.g. --runner-arg=--spark-master "
                        "--runner-arg='local[2]'); default: the config's mapreduce.args with -c")


def _run_settings(args: argparse.Namespace) -> Any:
    """The runner the scoring job would use: the flags, else the config's, else inline."""
    from spamflow.detector import RunSettings

    if args.runner is None and args.config:
        from spamflow.config import load_config
        from spamflow.plugins import get_plugins

        section = load_config(args.config, get_plugins(), workdir=args.workdir).model.mapreduce
        return RunSettings(runner=section.runner, runner_args=tuple(section.args))
    return RunSettings(runner=args.runner or "inline", runner_args=tuple(args.runner_arg))


def _score(args: argparse.Namespace, bundle: dict[str, Any], X: np.ndarray) -> np.ndarray:
    """Scores of the rows of X: in this process, or by the mr_score job when --engine says so."""
    import tempfile

    from spamflow.mr import use_mapreduce
    from spamflow_ensemble.model import score

    settings = _run_settings(args)
    if not use_mapreduce(args.engine, settings, size=len(X), above=args.mapreduce_above):
        return score(bundle, X)
    from spamflow_ensemble.mapreduce_scoring import score_mapreduce

    with tempfile.TemporaryDirectory(prefix="spamflow-score-") as work:
        return score_mapreduce(Path(args.model), X, Path(work), settings.runner, settings.runner_args)


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    t = subparsers.add_parser("train", help="train the ensemble classifier on labelled hosts",
                              description="Train the model library and ensemble selection on labelled hosts; "
                                          "write the model (skops) and a JSON report beside it.")
    _inputs(t)
    _estimator_args(t)
    t.add_argument("--snapshot", help="train only on this snapshot's hosts")
    t.add_argument("-o", "--out", required=True, help="model file to write (e.g. model.skops)")
    t.set_defaults(handler=run_train)
    s = subparsers.add_parser("score", help="score hosts with a trained model",
                              description="Score every host of a run or table with a model from `spamflow train`.")
    _inputs(s, labels=False)
    s.add_argument("-m", "--model", required=True, help="model file written by `spamflow train`")
    s.add_argument("-o", "--out", required=True,
                   help="scores to write (.parquet): snapshot, host, score, label, evidence (JSON, as the classify "
                        "stage's scores.parquet)")
    s.add_argument("--explain-hosts", type=_count, default=1000,
                   help="the highest-scored hosts whose most influential features are in evidence (default 1000)")
    s.add_argument("--top-features", type=_count, default=5, help="features per explained host (default 5)")
    s.add_argument("--statistics", choices=["auto", "model", "run"], default="auto",
                   help="with -c: featurise against the corpus statistics saved with the model (model: incremental "
                        "scoring of new hosts, docs/classify.md) or recompute them from this run (run); auto: the "
                        "model's unless this run is the one it was trained on (default auto)")
    _engine_args(s)
    s.set_defaults(handler=run_score)
    v = subparsers.add_parser("evaluate", help="grouped cross-validation of the ensemble vs a random forest",
                              description="Outer grouped cross-validation (or train on one snapshot, test on the "
                                          "others): AUC of the ensemble, of the best model of each family and "
                                          "feature group, and of a plain random forest on the same folds.")
    _inputs(v)
    _estimator_args(v)
    v.add_argument("--outer-folds", type=int, default=5, help="outer folds (default 5)")
    v.add_argument("--train-snapshot", help="instead of cross-validation: train on this snapshot, test the others")
    v.add_argument("-o", "--out", help="write evaluation.json here (a directory)")
    v.add_argument("--no-progress", action="store_true")
    v.set_defaults(handler=run_evaluate)


def load_features(args: argparse.Namespace, command: str, on_config: Callable[[Any, Any], None] | None = None,
                  ) -> tuple[FeatureTable, dict[str, list[str]] | None, str, dict[str, dict[str, Path]]]:
    """The feature table, host IPs (with a config), a description of the source and (with a
    config) the detectors' and parse's stage outputs. ``on_config(config, plugins)`` sees (and
    may change) the loaded config before its stages run."""
    hostnames = read_hostnames(args.hostnames) if args.hostnames else None
    if args.config:
        from spamflow.config import load_config
        from spamflow.plugins import get_plugins
        from spamflow_ensemble.tables import detector_host_tables, host_ips, join_host_tables

        plugins = get_plugins()
        config = load_config(args.config, plugins, workdir=args.workdir)
        args.classify_params = config.detectors.get("classify")  # the ensemble flags' defaults
        if on_config is not None:
            on_config(config, plugins)
        targets = [n for n in config.detectors if n != "classify"]
        _, manifest = args.run_stages(command, config, plugins, set(targets) or {"parse"})
        if manifest is None:
            raise SystemExit(1)
        stages = {n: {k: Path(v) for k, v in manifest["stages"][n]["outputs"].items()} for n in [*targets, "parse"]}
        paths, _ = detector_host_tables({n: v for n, v in stages.items() if n != "parse"},
                                        {n: manifest["stages"][n].get("host_tables", {}) for n in targets})
        table = join_host_tables(paths)
        return table, host_ips(Path(manifest["stages"]["parse"]["outputs"]["pages"])), str(args.config), stages
    if not args.table:
        raise SystemExit(f"spamflow {command}: give -c CONFIG or at least one --table")
    tables = [name_hosts(read_table(p), hostnames) for p in args.table]
    if not args.no_link_transforms:
        from spamflow.plugins import get_plugins

        offered = get_plugins().pm.hook.spamflow_table_transforms()
        transforms = [t for answer in offered if answer for t in answer]
        tables = [add_table_transforms(t, transforms)[0] for t in tables]
    table = merge_tables(tables)
    return table, None, ", ".join(args.table), {}


def _ranking_labels(args: argparse.Namespace, table: FeatureTable, stages: dict[str, dict[str, Path]]) -> RankingLabels:
    """Labels per row from ``--rankings`` (bad lines of the files printed as warnings)."""
    pages = stages.get("parse", {}).get("pages")
    ranked = ranking_labels(args.rankings, table.snapshot, table.host, pages, args.rankings_map,
                            args.rankings_threshold)
    for line in ranked.warnings():
        print(line, file=sys.stderr)
    return ranked


def _labelled(args: argparse.Namespace, table: FeatureTable, ips: Any,
              stages: dict[str, dict[str, Path]]) -> tuple[FeatureTable, np.ndarray, np.ndarray | None, dict]:
    if args.labels and args.rankings:
        raise SystemExit("give --labels or --rankings, not both")
    labels = read_labels(args.labels) if args.labels else None
    hostnames = read_hostnames(args.hostnames) if args.hostnames else None
    ranked = _ranking_labels(args, table, stages) if args.rankings else None
    truth = ranked.labels() if ranked else row_labels(table, labels, hostnames)
    mask, y = to_binary(truth)
    if not mask.any():
        raise SystemExit("no host of the feature table has a label: check --labels / --hostnames / --rankings")
    rows = table.rows(mask)
    group_by = args.group_by or ("domain+ip" if ips is not None else
                                 "domain" if sum("." in h for h in rows.host) > len(rows.host) / 2 else "none")
    groups = row_groups(rows.host, group_by, ips)
    info = {"labelled": int(mask.sum()), "unlabelled": int((~mask).sum()), "group_by": group_by,
            "groups": None if groups is None else int(len(np.unique(groups))),
            **(labels.counts() if labels else {}), **({"rankings": ranked.report} if ranked else {})}
    return rows, y, groups, info


def _estimator(args: argparse.Namespace, progress: bool | None = None) -> Any:
    from spamflow_ensemble.selection import EnsembleSelection

    s = estimator_settings(args)
    return EnsembleSelection(library=s["library"], n_folds=s["folds"], n_init=s["init"], n_iterations=s["iterations"],
                             n_bags=s["bags"], bag_fraction=s["bag_fraction"], prune=s["prune"],
                             tree_bins=s["tree_bins"], compress=s["compress"], random_state=s["seed"],
                             n_jobs=args.jobs, progress=progress)


def run_train(args: argparse.Namespace) -> int:
    from spamflow_ensemble.frozen import save_statistics
    from spamflow_ensemble.model import train
    from spamflow_ensemble.persist import save_model

    started = time.time()
    run: dict[str, Any] = {}
    table, ips, source, stages = load_features(args, "train", lambda config, plugins: run.update(
        workdir=config.workdir_location, declared={n: plugins.detectors[n].cls.frozen_statistics
                                                   for n in config.detectors}))
    if args.snapshot:
        table = table.rows(np.array([s == args.snapshot for s in table.snapshot]))
    rows, y, groups, info = _labelled(args, table, ips, stages)
    bundle = train(rows, y, groups, _estimator(args))
    out = save_model(args.out, {**bundle, "source": source})
    frozen = save_statistics(out, stages, run["declared"], run["workdir"]) if args.config else {}
    es = bundle["estimator"]
    report = {"model": str(out), "source": source, **info, "train": bundle["train"], "threshold": bundle["threshold"],
              "statistics": {n: sorted(p) for n, p in frozen.items()},
              "ensemble": [{"model": m, "weight": round(w, 6)} for m, w in es.ensemble_],
              "seconds": round(time.time() - started, 1)}
    write_text_atomic(str(out) + ".json", json.dumps(report, indent=1) + "\n")
    print(f"trained on {info['labelled']} hosts ({int(y.sum())} spam, {info['groups']} groups by {info['group_by']}); "
          f"out-of-fold AUC {bundle['train']['oof_auc']:.3f}; {len(es.ensemble_)} models chosen")
    print(json.dumps({"model": str(out), "report": str(out) + ".json"}))
    return 0


def run_score(args: argparse.Namespace) -> int:
    from spamflow_ensemble.evidence import declared_by_classes, detector_details, evidence_column, firing_rules
    from spamflow_ensemble.frozen import freeze_params, load_statistics
    from spamflow_ensemble.model import align
    from spamflow_ensemble.persist import load_model

    loading = time.time()
    bundle = load_model(args.model)
    statistics = load_statistics(args.model)
    load_seconds = time.time() - loading
    frozen: dict[str, dict[str, str]] = {}
    table, _, source, stages = load_features(args, "score", lambda config, _plugins: frozen.update(
        freeze_params(config.detectors, statistics, config.workdir_location, args.statistics)))
    X, missing = align(bundle, table)
    started = time.time()
    scores = _score(args, bundle, X)
    seconds = time.time() - started
    rows = np.arange(len(scores))
    from spamflow.plugins import get_plugins

    classes = {d.name: d.cls for d in get_plugins().detectors.infos()}
    evidence = evidence_column(table, rows, scores, X, bundle, detector_details(stages), args.explain_hosts,
                               args.top_features, firing_rules(declared_by_classes(classes)))
    columns = {"snapshot": table.snapshot, "host": table.host, "score": scores,
               "label": [SPAM if v >= bundle["threshold"] else NONSPAM for v in scores]}
    result: dict[str, Any] = {"scores": str(args.out)}
    if frozen:
        result["frozen_statistics"] = frozen
        print("incremental: " + "; ".join(f"{n}.{k} from the model" for n, p in frozen.items() for k in p)
              + " (the approximation, measured against a full recomputation: docs/classify.md, Incremental scoring)")
    if args.rankings:
        columns.update(_ranking_columns(_ranking_labels(args, table, stages), scores, result))
    out = pa.table({**columns, "evidence": evidence})
    with atomic_path(args.out) as tmp:
        pq.write_table(out, tmp)
    if missing:
        print(f"warning: {len(missing)} features of the model are absent from {source} and count as missing: "
              f"{missing[:5]}{' ...' if len(missing) > 5 else ''}", file=sys.stderr)
    print(f"scored {len(scores)} hosts in {seconds:.2f} s (model loaded in {load_seconds:.2f} s); "
          f"{int((scores >= bundle['threshold']).sum())} at or above the threshold {bundle['threshold']:.4f}")
    print(json.dumps(result))
    return 0


def _ranking_columns(ranked: RankingLabels, scores: np.ndarray, result: dict[str, Any]) -> dict[str, pa.Array]:
    """``true_label`` and ``rankings_percentile`` (the host's median) columns of ``score``'s output;
    the AUC of the scores against those labels goes into ``result`` and is printed."""
    from spamflow_ensemble.fastauc import auc

    truth = ranked.labels()
    mask, y = to_binary(truth)
    value = auc(y, scores[mask]) if mask.any() else float("nan")
    result["auc"] = None if np.isnan(value) else value
    result["rankings"] = ranked.report
    print(f"AUC against the rankings' labels: {value:.3f} on {int(mask.sum())} hosts ({int(y.sum())} spam)")
    return {"true_label": pa.array(truth, pa.string()), "rankings_percentile": pa.array(ranked.medians(), pa.float64())}


FEATURES_PRINTED = 20
"""Features whose AUC ``evaluate`` prints (all are in evaluation.json)."""


def format_table(summary: dict[str, Any]) -> str:
    lines = [f"{'model':<32} {'AUC':>7}", f"{'ensemble selection':<32} {summary['auc']:>7.3f}",
             f"{'random forest (baseline)':<32} {summary['baseline_auc']:>7.3f}"]
    lines += [f"{'family ' + k:<32} {v:>7.3f}" for k, v in summary["auc_by_family"].items()]
    lines += [f"{'group ' + k:<32} {v:>7.3f}" for k, v in summary["auc_by_group"].items()]
    by_feature = [(k, v["auc"]) for k, v in summary.get("auc_by_feature", {}).items() if v["auc"] is not None]
    if by_feature:
        strongest = sorted(by_feature, key=lambda kv: (-abs(kv[1] - 0.5), kv[0]))[:FEATURES_PRINTED]
        width = max(32, *(len(k) + 8 for k, _ in strongest))
        lines.append(f"each feature as the score, untrained ({len(strongest)} furthest from 0.5 of {len(by_feature)}; "
                     f"below 0.5: higher values mean nonspam)")
        lines += [f"{'feature ' + k:<{width}} {v:>7.3f}" for k, v in strongest]
    return "\n".join(lines)


def run_evaluate(args: argparse.Namespace) -> int:
    from spamflow_ensemble.evaluation import cross_validate, evaluate_split, feature_aucs

    started = time.time()
    table, ips, source, stages = load_features(args, "evaluate")
    rows, y, groups, info = _labelled(args, table, ips, stages)
    estimator = _estimator(args, progress=False)
    if args.train_snapshot:
        tr = np.array([s == args.train_snapshot for s in rows.snapshot])
        ev = evaluate_split(estimator, rows.X[tr], y[tr], None if groups is None else groups[tr], rows.X[~tr], y[~tr])
        tested = rows.X[~tr]
    else:
        progress = False if args.no_progress else None  # None: bars only on a terminal
        ev = cross_validate(estimator, rows.X, y, groups, args.outer_folds, progress=progress)
        tested = rows.X
    summary = {"source": source, **info, "features": len(rows.features), "feature_groups": sorted(rows.groups),
               "library": estimator.library, **ev.summary(),
               "auc_by_feature": feature_aucs(tested, ev.y, rows.features),
               "ensembles": [[{"model": m, "weight": round(w, 6)} for m, w in e] for e in ev.ensembles],
               "seconds": round(time.time() - started, 1)}
    print(f"{source}: {summary['hosts']} hosts ({summary['spam']} spam), {summary['features']} features, "
          f"{summary['folds']} outer folds grouped by {info['group_by']}")
    print(format_table(summary))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / "evaluation.json", json.dumps(summary, indent=1) + "\n")
        print(json.dumps({"evaluation": str(out / "evaluation.json")}))
    return 0
