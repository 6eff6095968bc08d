"""Honest evaluation: grouped outer cross-validation (or a given split) of the ensemble, of the
best model of each family and feature group, and of a plain random forest in the same folds.

Every score a host gets comes from models that never saw it nor any host of its group
(registered domain or IP component); the ensemble's inner 5-fold embedded cross-validation
runs inside each outer training fold.  AUC is the headline; ROC curves are kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_curve

from spamflow.progress import progress_bar
from spamflow_ensemble.fastauc import auc
from spamflow_ensemble.selection import EnsembleSelection, make_folds, spam_probability

BASELINE_TREES = 500


def baseline_forest(random_state: int = 0) -> RandomForestClassifier:
    """The plain baseline: scikit-learn's random forest, 500 trees, default parameters
    (missing values split natively)."""
    return RandomForestClassifier(n_estimators=BASELINE_TREES, n_jobs=1, random_state=random_state)


def roc(y: np.ndarray, score: np.ndarray, points: int = 101) -> dict[str, list[float]]:
    """The ROC curve, thinned to at most ``points`` points (first and last kept)."""
    fpr, tpr, _ = roc_curve(y, score)
    if len(fpr) > points:
        keep = np.unique(np.linspace(0, len(fpr) - 1, points).round().astype(int))
        fpr, tpr = fpr[keep], tpr[keep]
    return {"fpr": [round(float(v), 6) for v in fpr], "tpr": [round(float(v), 6) for v in tpr]}


@dataclass
class Evaluation:
    """Held-out scores per host and the AUCs they give."""

    y: np.ndarray
    ensemble: np.ndarray
    baseline: np.ndarray
    by_family: dict[str, np.ndarray] = field(default_factory=dict)
    by_group: dict[str, np.ndarray] = field(default_factory=dict)
    ensembles: list[list[tuple[str, float]]] = field(default_factory=list)
    folds: int = 0

    def summary(self) -> dict[str, Any]:
        return {
            "auc": auc(self.y, self.ensemble),
            "baseline_auc": auc(self.y, self.baseline),
            "roc": roc(self.y, self.ensemble),
            "auc_by_family": {k: auc(self.y, v) for k, v in sorted(self.by_family.items())},
            "auc_by_group": {k: auc(self.y, v) for k, v in sorted(self.by_group.items())},
            "hosts": int(len(self.y)), "spam": int(self.y.sum()), "folds": self.folds,
        }


def feature_aucs(X: np.ndarray, y: np.ndarray, features: list[str]) -> dict[str, dict[str, Any]]:
    """The AUC of each feature column taken as the spam score as it is (no training, higher =
    spammier; below 0.5 the feature points the other way), over the hosts that have a value:
    how far each detector's raw output alone agrees with the labels.  ``auc`` is None when
    those hosts are not of both classes."""
    out = {}
    for j, name in enumerate(features):
        has = ~np.isnan(X[:, j])
        value = auc(y[has], X[has, j]) if has.any() else float("nan")
        out[name] = {"auc": None if np.isnan(value) else value, "hosts": int(has.sum()), "spam": int(y[has].sum())}
    return out


def evaluate_split(estimator: EnsembleSelection, X_train: np.ndarray, y_train: np.ndarray,
                   groups_train: np.ndarray | None, X_test: np.ndarray, y_test: np.ndarray) -> Evaluation:
    """Train on one side, score the other: ensemble, per-family and per-group best models, baseline."""
    from sklearn.base import clone

    es = clone(estimator).fit(X_train, y_train, groups=groups_train)
    base = baseline_forest(estimator.random_state).fit(X_train, y_train)
    return Evaluation(y_test, es.predict_proba(X_test)[:, 1], spam_probability(base, X_test),
                      es.best_scores(X_test, "family"), es.best_scores(X_test, "group"), [es.ensemble_], 1)


def cross_validate(estimator: EnsembleSelection, X: np.ndarray, y: np.ndarray, groups: np.ndarray | None,
                   n_folds: int = 5, progress: bool | None = None) -> Evaluation:
    """Outer (grouped, stratified) k-fold: each host scored by models trained without its group."""
    folds = make_folds(y, groups, n_folds, estimator.random_state + 1)
    ens = np.zeros(len(y))
    base = np.zeros(len(y))
    fam: dict[str, np.ndarray] = {}
    grp: dict[str, np.ndarray] = {}
    chosen = []
    for train, test in progress_bar(folds, desc="outer folds", setting=progress):
        ev = evaluate_split(estimator, X[train], y[train], None if groups is None else groups[train], X[test], y[test])
        ens[test], base[test] = ev.ensemble, ev.baseline
        for store, part in ((fam, ev.by_family), (grp, ev.by_group)):
            for k, v in part.items():
                store.setdefault(k, np.full(len(y), np.nan))[test] = v
        chosen += ev.ensembles
    return Evaluation(y, ens, base, fam, grp, chosen, len(folds))
