"""Benchmark of the ensemble classifier: the model library plus ensemble selection on
4,000 hosts x 300 features (the issue's target: under 30 minutes on 2 cores), and scoring
throughput (target: >= 10,000 hosts/s), against a plain 500-tree random forest in the same
process as the baseline.

    python benchmarks/bench_classify.py                      # full library, 4,000 x 300
    python benchmarks/bench_classify.py --library fast       # the demo's library
    python benchmarks/bench_classify.py --hosts 1000 --features 100 --jobs 2
    python benchmarks/bench_classify.py --uk2007                # real data: see below

``--uk2007`` instead runs ``spamflow evaluate``'s grouped outer folds on the WEBSPAM-UK2007
SET1 link table (41 raw link features, 3,998 hosts, folds grouped by domain; needs
``../shared/data/webspam-uk2007``), timing the ensemble's train + score and the 500-tree
forest's fit + score separately in each fold (wall and CPU time: with ``--jobs 1`` every fit
runs on one thread, so the CPU-time ratio is what an idle machine would show, while the wall
ratio moves with other work's load), then the exact scoring rate of the last fold's ensemble.  ``--seeds 0 1 2`` repeats it with other fold seeds.

The data are synthetic (scikit-learn's make_classification: 6 % spam, 30 informative
features, 5 % missing values), split by the library into 6 feature groups of 50 columns
plus all, as six detector plugins would give.
"""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import sklearn
from scipy.stats import spearmanr
from sklearn.datasets import make_classification

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))

from spamflow_ensemble.compression import fit_mimic  # noqa: E402
from spamflow_ensemble.evaluation import baseline_forest  # noqa: E402
from spamflow_ensemble.fastauc import auc  # noqa: E402
from spamflow_ensemble.selection import EnsembleSelection  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=4000)
    ap.add_argument("--features", type=int, default=300)
    ap.add_argument("--groups", type=int, default=6, help="feature groups (plus 'all'); 0 = all only")
    ap.add_argument("--library", choices=["fast", "full"], default="full")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--score-hosts", type=int, default=100_000)
    ap.add_argument("--compress", type=int, default=9, metavar="N",
                    help="model compression: N x training hosts synthetic (default 9; 0: skip)")
    ap.add_argument("--save", type=Path, help="also write the fitted ensemble (pickle) here, to profile scoring")
    ap.add_argument("--uk2007", action="store_true", help="the UK2007 link table's outer folds (real data)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0], help="--uk2007: fold seeds (default 0)")
    args = ap.parse_args()
    if args.uk2007:
        return uk2007(args)

    print(f"python {platform.python_version()}, scikit-learn {sklearn.__version__}, numpy {np.__version__}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    X, y = make_classification(n_samples=args.hosts + 2000, n_features=args.features, n_informative=30,
                               n_redundant=30, weights=[0.94], flip_y=0.02, random_state=0)
    rng = np.random.default_rng(0)
    X[rng.random(X.shape) < 0.05] = np.nan
    Xtr, ytr, Xte, yte = X[: args.hosts], y[: args.hosts], X[args.hosts:], y[args.hosts:]
    width = args.features // args.groups if args.groups else 0
    groups = {f"g{g}": list(range(g * width, (g + 1) * width)) for g in range(args.groups)}
    print(f"{args.hosts} training hosts x {args.features} features, {int(ytr.sum())} spam; library {args.library}; "
          f"{len(groups)} groups + all; jobs {args.jobs}")

    t = time.perf_counter()
    base = baseline_forest().fit(Xtr, ytr)
    base_fit = time.perf_counter() - t
    t = time.perf_counter()
    es = EnsembleSelection(library=args.library, feature_groups=groups, n_jobs=args.jobs, progress=True).fit(Xtr, ytr)
    fit = time.perf_counter() - t
    if args.save:
        with open(args.save, "wb") as fh:
            pickle.dump({"estimator": es, "baseline": base, "X": X, "y": y, "hosts": args.hosts}, fh)
    print(f"library + selection: {fit:.1f} s ({len(es.candidates_)} candidates x {es.n_folds_used_} folds; "
          f"{len(es.ensemble_)} chosen; tree_bins used {es.tree_bins_}); random forest 500 trees: {base_fit:.1f} s; "
          f"ratio {fit / base_fit:.1f}x")
    t = time.perf_counter()
    compiled = es.compiled({int(i): float(es.weights_[i]) for i in np.flatnonzero(es.weights_ > 0)})  # afresh
    print(f"array form: {time.perf_counter() - t:.1f} s to build; {len(compiled.trees):,} trees, "
          f"{len(compiled.stumps):,} boosted-stump models, {len(compiled.linear.columns)} linear models, "
          f"{len(compiled.bayes)} discretised naive Bayes, {len(compiled.other)} models left to scikit-learn")
    t = time.perf_counter()
    mimic, synthetic = fit_mimic(Xtr, es.scores, args.compress, 0) if args.compress else (None, 0)
    compress = time.perf_counter() - t
    if mimic is not None:
        print(f"model compression ({args.compress}x: {synthetic:,} synthetic hosts labelled by the ensemble): "
              f"{compress:.1f} s; library + selection + compression {fit + compress:.1f} s")
    exact_te = es.scores(Xte)
    print(f"held-out AUC ({len(yte)} hosts): ensemble {auc(yte, exact_te):.4f}"
          + (f", compressed {auc(yte, mimic.predict(Xte)):.4f} (Spearman vs ensemble "
             f"{spearmanr(mimic.predict(Xte), exact_te)[0]:.3f})" if mimic is not None else "")
          + f", random forest {auc(yte, base.predict_proba(Xte)[:, 1]):.4f}")

    big = np.tile(Xte, (args.score_hosts // len(Xte) + 1, 1))[: args.score_hosts]

    def rate(score: Any, rows: np.ndarray) -> float:
        t = time.perf_counter()
        score(rows)
        return len(rows) / (time.perf_counter() - t)

    exact = rate(es.scores, big)
    chosen = [int(i) for i in np.flatnonzero(es.weights_ > 0)]
    per_model = rate(lambda rows: es._many_scores(rows, chosen), big[:10_000])  # each fold model via scikit-learn
    forest = rate(base.predict_proba, big)
    print(f"scoring {len(big):,} hosts: ensemble {exact:,.0f} hosts/s (model by model through scikit-learn "
          f"{per_model:,.0f} hosts/s: the array form is {exact / per_model:.1f}x faster); random forest "
          f"{forest:,.0f} hosts/s ({forest / exact:.1f}x the ensemble)")
    fast = rate(mimic.predict, big) if mimic is not None else 0.0
    if mimic is not None:
        print(f"scoring with the compressed model: {fast:,.0f} hosts/s ({fast / exact:.0f}x the ensemble)")
    total = fit + compress
    print(f"target: fit < 30 min {'MET' if total < 30 * 60 else 'MISSED'} ({total / 60:.1f} min); scoring >= 10,000 "
          f"hosts/s: ensemble {'MET' if exact >= 10_000 else 'MISSED'}"
          + (f", compressed {'MET' if fast >= 10_000 else 'MISSED'}" if mimic is not None else ""))
    return 0


UK2007 = Path(__file__).resolve().parents[2] / "shared" / "data" / "webspam-uk2007"


def uk2007(args: argparse.Namespace) -> int:
    """Outer grouped 5-fold on the UK2007 link table, as ``spamflow evaluate --table ...
    --no-link-transforms`` runs it; ensemble and forest timed apart, in the same folds."""
    from sklearn.base import clone

    from spamflow_ensemble.commands import _estimator, _labelled, add_commands, load_features
    from spamflow_ensemble.selection import make_folds, spam_probability

    features = UK2007 / "features-train-only"
    if not features.is_dir():
        print(f"no UK2007 data at {UK2007}")
        return 1
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())
    print(f"python {platform.python_version()}, scikit-learn {sklearn.__version__}, numpy {np.__version__}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    for seed in args.seeds:
        cli = parser.parse_args(["evaluate", "--table", str(features / "uk-2007-05.link_based_features.csv.train.arff.gz"),
                                 "--labels", str(UK2007 / "labels" / "WEBSPAM-UK2007-SET1-labels.txt"),
                                 "--hostnames", str(UK2007 / "labels" / "WEBSPAM-UK2007-hostnames.txt.gz"),
                                 "--no-link-transforms", "--library", args.library, "--jobs", str(args.jobs),
                                 "--seed", str(seed)])
        table, ips, _, stages = load_features(cli, "evaluate")
        rows, y, groups, _ = _labelled(cli, table, ips, stages)
        X = rows.X
        estimator = _estimator(cli)
        ens, base = np.zeros(len(y)), np.zeros(len(y))
        ens_time = forest_time = ens_cpu = forest_cpu = 0.0
        t, c = time.perf_counter(), time.process_time()
        folds = make_folds(y, groups, 5, estimator.random_state + 1)
        ens_time, ens_cpu = ens_time + time.perf_counter() - t, ens_cpu + time.process_time() - c
        for train, test in folds:
            t, c = time.perf_counter(), time.process_time()
            es = clone(estimator).fit(X[train], y[train], groups=groups[train])
            ens[test] = es.predict_proba(X[test])[:, 1]
            es.best_scores(X[test], "family"), es.best_scores(X[test], "group")  # as evaluate does
            ens_time, ens_cpu = ens_time + time.perf_counter() - t, ens_cpu + time.process_time() - c
            t, c = time.perf_counter(), time.process_time()
            forest = baseline_forest(seed).fit(X[train], y[train])
            base[test] = spam_probability(forest, X[test])
            forest_time, forest_cpu = forest_time + time.perf_counter() - t, forest_cpu + time.process_time() - c
        print(f"seed {seed}: {len(y)} hosts ({int(y.sum())} spam) x {X.shape[1]} features, {len(folds)} outer folds; "
              f"library {args.library}, jobs {args.jobs}; train + score: ensemble {ens_time:.1f} s, random forest "
              f"500 trees {forest_time:.1f} s, ratio {ens_time / forest_time:.2f}x (CPU time: {ens_cpu:.1f} s / {forest_cpu:.1f} s = "
              f"{ens_cpu / forest_cpu:.2f}x); AUC ensemble {auc(y, ens):.4f}, "
              f"forest {auc(y, base):.4f}", flush=True)
    big = np.tile(X, (args.score_hosts // len(X) + 1, 1))[: args.score_hosts]

    def rates(score: Any) -> tuple[float, float]:
        """Hosts per second of wall time and of this process's CPU time (one thread with
        --jobs 1: what one idle core would do, on a machine shared with other work)."""
        wall, cpu = time.perf_counter(), time.process_time()
        score(big)
        return len(big) / (time.perf_counter() - wall), len(big) / (time.process_time() - cpu)

    exact, exact_cpu = rates(es.scores)
    plain, plain_cpu = rates(lambda rows: spam_probability(forest, rows))
    compiled = es.compiled()
    print(f"scoring {len(big):,} hosts with the last fold's ensemble ({len(es.ensemble_)} chosen: {len(compiled.trees):,} "
          f"trees, {len(compiled.stumps)} boosted-stump models, {len(compiled.linear.columns)} linear models, "
          f"{len(compiled.bayes)} discretised naive Bayes, {len(compiled.other)} left to scikit-learn): {exact:,.0f} "
          f"hosts/s ({exact_cpu:,.0f} per CPU second); random forest {plain:,.0f} hosts/s ({plain_cpu:,.0f} per CPU "
          f"second); the ensemble takes {plain / exact:.2f}x the forest's time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
