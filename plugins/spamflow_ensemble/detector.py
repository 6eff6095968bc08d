"""The ``classify`` stage: join every selected detector's per-host table, train the ensemble
on one snapshot's labelled hosts, score the others, and write scores with their evidence.

Outputs (the contract with the report): ``scores.parquet`` — one row per (snapshot, host)
scored, with ``score``, ``label`` at ``evaluation.json``'s threshold, ``true_label`` and the
``evidence`` JSON — and ``evaluation.json`` (AUC, ROC, AUC by family and feature group, the
random-forest baseline, the chosen models).  ``model.skops`` is the trained bundle.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, Field, field_validator

from spamflow.detector import Detector, DetectorParams, InputFile, InputPath, StageContext, StageResult
from spamflow.errors import BadInputError
from spamflow.mr import Engine, use_mapreduce
from spamflow.per_host import host_schema
from spamflow_ensemble.binning import bins_for
from spamflow_ensemble.dataset import GROUP_BY, row_groups, row_labels, to_binary
from spamflow_ensemble.evidence import detector_details, evidence_column, firing_rules
from spamflow_ensemble.fastauc import auc
from spamflow_ensemble.labels import NONSPAM, SPAM, Labels, read_hostnames, read_labels
from spamflow_ensemble.tables import detector_host_tables, host_ips, join_host_tables

if TYPE_CHECKING:
    from spamflow_ensemble.selection import EnsembleSelection

# scikit-learn and skops (a second or more to import) are imported where a run trains, scores
# or saves, not here: every `spamflow` command imports this module to list the detectors

SCORES_SCHEMA = host_schema(
    pa.field("score", pa.float64(), nullable=False),
    pa.field("label", pa.string(), nullable=False),
    pa.field("true_label", pa.string()),
    pa.field("evidence", pa.string(), nullable=False),
)


class ClassifyParams(DetectorParams):
    labels: Annotated[str, InputFile(keep=("demo",))] = "demo"
    """Labels file (Web Spam Challenge or ``host,label`` CSV), relative to the config file, or ``demo``:
    the demo stage's ``labels/hosts.tsv``."""
    hostnames: InputPath | None = None
    """Web Spam Challenge ``hostid hostname`` file, when the labels give host ids."""
    detectors: list[str] | None = None
    """Detectors whose per-host tables are joined; default every other selected detector."""
    train_snapshot: str | None = None
    """Snapshot whose labelled hosts train the model; default the first (in sort order).
    The other snapshots are scored; with one snapshot, hosts get out-of-fold scores."""
    library: Literal["fast", "full"] = "fast"
    folds: int = Field(5, ge=2)
    init: int = Field(5, ge=1)
    """Sorted initialisation: the best N models start every bag's ensemble."""
    iterations: int = Field(100, ge=0)
    bags: int = Field(20, ge=1)
    bag_fraction: float = Field(0.5, gt=0, le=1)
    prune: float = Field(0.3, gt=0, le=1)
    """Library pruning (Caruana 2006): the share of the models, best out-of-fold AUC first, that
    enter selection (1: all)."""
    tree_bins: int | Literal["auto"] = "auto"
    """Tree-based models see each feature cut into at most this many quantile bins (0: raw values;
    ``auto``: raw values up to 250,000 hosts x features, 32 bins above)."""
    compress: int = Field(0, ge=0)
    """Model compression: 0 scores with the ensemble itself; n > 0 trains a fast mimic on the
    ensemble's scores of the training hosts and n times as many synthetic hosts, and scores with it."""
    group_by: Literal["domain+ip", "domain", "ip", "none"] = "domain+ip"
    threshold: float | None = Field(None, ge=0, le=1)
    """Score at or above which a host is labelled spam; default the best-F1 cut of the out-of-fold training scores."""
    explain_hosts: int = Field(1000, ge=0)
    """The highest-scored hosts that get ``top_features`` (occlusion costs one scoring pass per feature)."""
    top_features: int = Field(5, ge=0)
    seed: int = 0
    engine: Engine = "auto"
    """Scoring every host after training: ``memory`` in this process, ``mapreduce`` with the map-only job
    ``mr_score`` on the configured mapreduce runner, ``auto`` that job on a cluster runner or above
    ``mapreduce_above`` hosts to score.  Training stays in this process; the scores are the same."""
    mapreduce_above: int = Field(1_000_000, ge=0)
    """Hosts to score above which ``engine: auto`` runs ``mr_score``."""
    execution_keys: ClassVar[frozenset[str]] = frozenset({"engine", "mapreduce_above"})

    @field_validator("tree_bins")
    @classmethod
    def _bins(cls, value: int | str) -> int | str:
        bins_for(value, 1, 1)  # type: ignore[arg-type]  # refuses 1 and negative counts
        return value


def estimator_from(params: ClassifyParams | Mapping, progress: bool | None = False) -> EnsembleSelection:
    from spamflow_ensemble.selection import EnsembleSelection

    p = params if isinstance(params, BaseModel) else ClassifyParams(**params)
    assert isinstance(p, ClassifyParams)
    return EnsembleSelection(library=p.library, n_folds=p.folds, n_init=p.init, n_iterations=p.iterations,
                             n_bags=p.bags, bag_fraction=p.bag_fraction, prune=p.prune, tree_bins=p.tree_bins,
                             compress=p.compress, random_state=p.seed,
                             progress=progress)


def _save_statistics(model: Path, ctx: StageContext, detectors: dict[str, dict[str, Path]]) -> dict[str, dict]:
    """The frozen statistics of the detectors the model was trained on, beside it, as
    ``spamflow train -c`` keeps them (docs/classify.md, "Incremental scoring"). The run's
    workdir is the parse stage's grandparent folder (``<workdir>/stages/parse-...``)."""
    from spamflow.plugins import get_plugins
    from spamflow_ensemble.frozen import save_statistics

    registry = get_plugins().detectors
    declared = {n: registry[n].cls.frozen_statistics for n in detectors if n in registry}
    return save_statistics(model, detectors, declared, str(Path(ctx.inputs["parse"].directory).parent.parent))


class ClassifyDetector(Detector):
    name = "classify"
    version = "3"  # 3: the model's frozen statistics beside it (incremental scoring)
    # 2: model.skops holds the chosen models only, compressed (format_version 2)
    description = ("Ensemble selection over a scikit-learn model library trained per detector's host features: "
                   "one spam score per host, with evidence.")
    Params = ClassifyParams
    requires = ("parse",)
    uses_mapreduce = True  # engine: mapreduce (or auto above mapreduce_above hosts, or on a cluster runner)

    @classmethod
    def upstream(cls, params: BaseModel, selected: Mapping[str, type]) -> tuple[str, ...]:
        assert isinstance(params, ClassifyParams)
        detectors = params.detectors if params.detectors is not None else [n for n in selected if n != cls.name]
        return ("parse", *(["demo"] if params.labels == "demo" else []), *detectors)

    @classmethod
    def missing_upstream_hint(cls, stage: str, params: BaseModel) -> str:
        """``classify: {}`` outside the demo: its default ``labels: demo`` is the demo's ground truth."""
        if stage != "demo":
            return ""
        return ("classify needs labels: to train on (without it, it takes the demo's ground truth): give "
                "labels: FILE, a host,label CSV (spamflow judge writes one) or a Web Spam Challenge labels "
                "file, or train on spam rankings with `spamflow train --rankings`; see "
                "docs/classify.md#bring-your-own-labels")

    def run(self, ctx: StageContext) -> StageResult:
        p = ctx.params
        assert isinstance(p, ClassifyParams)
        detectors = {n: s.outputs for n, s in ctx.inputs.items() if n not in ("parse", "demo")}
        paths, without = detector_host_tables(detectors, {n: ctx.inputs[n].host_tables for n in detectors})
        if not paths:
            raise BadInputError(f"classify: none of the stages {sorted(detectors)} has a per-host table (hosts)")
        table = join_host_tables(paths)
        labels = self._labels(ctx, p)
        hostnames = read_hostnames(p.hostnames) if p.hostnames else None
        truth = row_labels(table, labels, hostnames)
        snapshots = sorted(set(table.snapshot))
        train_snap = p.train_snapshot or snapshots[0]
        if train_snap not in snapshots:
            raise BadInputError(f"classify: train_snapshot {train_snap!r} is not among the snapshots {snapshots}")
        in_train = np.array([s == train_snap for s in table.snapshot])
        labelled = np.array([t is not None for t in truth])
        train_rows = table.rows(in_train & labelled)
        mask, y = to_binary([truth[i] for i in np.flatnonzero(in_train & labelled)])
        if len(set(y.tolist())) < 2:
            raise BadInputError(f"classify: snapshot {train_snap} has {int(y.sum())} spam and "
                                f"{int(len(y) - y.sum())} nonspam labelled hosts ({labels.path}); need both")
        ips = host_ips(ctx.inputs["parse"]["pages"]) if "ip" in p.group_by else None
        groups = row_groups(train_rows.host, p.group_by, ips)
        from spamflow_ensemble.mapreduce_scoring import score_mapreduce
        from spamflow_ensemble.model import score, train
        from spamflow_ensemble.persist import save_model

        bundle = train(train_rows, y, groups, estimator_from(p, ctx.settings.progress), p.threshold)
        es = bundle["estimator"]
        feature_index = {f: j for j, f in enumerate(table.features)}
        cols = [feature_index[f] for f in bundle["features"]]
        X = table.X[:, cols]

        score_mask = ~in_train if len(snapshots) > 1 else in_train
        scores = np.full(len(table.host), np.nan)
        model = save_model(ctx.outdir / "model.skops", {**bundle, "labels": labels.path})
        kept = _save_statistics(model, ctx, detectors)
        if use_mapreduce(p.engine, ctx.settings, size=int(score_mask.sum()), above=p.mapreduce_above):
            scores[score_mask] = score_mapreduce(model, X[score_mask], ctx.outdir / "work", ctx.settings.runner,
                                                 ctx.settings.runner_args)
        else:
            scores[score_mask] = score(bundle, X[score_mask])
        if len(snapshots) == 1:  # no held-out snapshot: the labelled hosts get their out-of-fold scores
            scores[np.flatnonzero(in_train & labelled)] = es.oof_score_
        rows = np.flatnonzero(~np.isnan(scores))
        test_truth = [truth[i] for i in rows]
        tmask, ty = to_binary(test_truth)
        evaluation = self._evaluate(p, bundle, X, y, train_rows.X[:, [train_rows.features.index(f) for f in
                                                                       bundle["features"]]],
                                    rows[tmask], ty, scores, train_snap, snapshots, table.snapshot)
        self._write_scores(ctx, p, table, rows, scores, truth, X, bundle, detectors)
        (ctx.outdir / "evaluation.json").write_text(json.dumps(evaluation, indent=1) + "\n", encoding="utf-8")
        counts = {"hosts_scored": int(len(rows)), "train_hosts": int(len(y)), "train_spam": int(y.sum()),
                  "test_labelled": int(len(ty)), "features": len(bundle["features"]),
                  "features_dropped_all_missing": len(bundle["train"]["dropped_features"]),
                  "feature_groups": len(bundle["feature_groups"]), "candidates": len(es.candidates_),
                  "ensemble_models": len(es.ensemble_), "stages_without_host_table": len(without),
                  "unlabelled_train_hosts": int((in_train & ~labelled).sum()),
                  "frozen_statistics": sum(len(v) for v in kept.values()),
                  **labels.counts(), **{k: v for k, v in table.skipped.items()}}
        return StageResult(outputs={"scores": "scores.parquet", "evaluation": "evaluation.json",
                                    "model": "model.skops", "model_statistics": "model.skops.statistics"},
                           counts=counts)

    @staticmethod
    def _labels(ctx: StageContext, p: ClassifyParams) -> Labels:
        if p.labels == "demo":
            return read_labels(Path(ctx.inputs["demo"]["labels"]) / "hosts.tsv")
        return read_labels(p.labels)

    @staticmethod
    def _evaluate(p: ClassifyParams, bundle: dict, X: np.ndarray, y_train: np.ndarray, X_train: np.ndarray,
                  test_rows: np.ndarray, y_test: np.ndarray, scores: np.ndarray, train_snap: str,
                  snapshots: list[str], row_snapshot: list[str]) -> dict:
        from spamflow_ensemble.evaluation import baseline_forest, roc
        from spamflow_ensemble.selection import spam_probability

        es = bundle["estimator"]
        has_test = len(y_test) > 0 and 0 < y_test.sum() < len(y_test)
        out: dict = {"threshold": bundle["threshold"], "auc": None, "baseline_auc": None, "roc": None,
                     "auc_by_family": {}, "auc_by_group": {},
                     "ensemble": [{"model": m, "weight": round(w, 6)} for m, w in es.ensemble_],
                     "train": {"snapshot": train_snap, "hosts": int(len(y_train)), "spam": int(y_train.sum()),
                               "oof_auc": bundle["train"]["oof_auc"]},
                     "test": {"snapshot": ",".join(s for s in snapshots if s != train_snap) or train_snap,
                              "hosts": int(len(y_test)), "spam": int(y_test.sum())}}
        if not has_test:
            return out
        out["auc"] = auc(y_test, scores[test_rows])
        out["roc"] = roc(y_test, scores[test_rows])
        if len(snapshots) > 1:
            base = baseline_forest(p.seed).fit(X_train, y_train)
            out["baseline_auc"] = auc(y_test, spam_probability(base, X[test_rows]))
            for key, field in (("family", "auc_by_family"), ("group", "auc_by_group")):
                out[field] = {k: auc(y_test, v) for k, v in sorted(es.best_scores(X[test_rows], key).items())}
        return out

    @staticmethod
    def _write_scores(ctx: StageContext, p: ClassifyParams, table, rows: np.ndarray, scores: np.ndarray,
                      truth: list, X: np.ndarray, bundle: dict, detectors: dict) -> None:
        threshold = bundle["threshold"]
        rules = firing_rules({n: ctx.inputs[n].host_tables for n in detectors})
        evidence = evidence_column(table, rows, scores, X, bundle, detector_details(detectors),
                                   p.explain_hosts, p.top_features, rules)
        out = pa.table({
            "snapshot": [table.snapshot[i] for i in rows],
            "host": [table.host[i] for i in rows],
            "score": scores[rows].astype(np.float64),
            "label": [SPAM if scores[i] >= threshold else NONSPAM for i in rows],
            "true_label": [truth[i] for i in rows],
            "evidence": evidence,
        }, schema=SCORES_SCHEMA).sort_by([("snapshot", "ascending"), ("score", "descending"), ("host", "ascending")])
        pq.write_table(out, ctx.outdir / "scores.parquet")


Classify = ClassifyDetector
"""The old name (detector classes are named ``<Stage>Detector``); kept for existing imports."""

__all__ = ["GROUP_BY", "Classify", "ClassifyDetector", "ClassifyParams", "estimator_from"]
