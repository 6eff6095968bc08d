"""Training a classifier bundle and scoring with it: the pure core of the ``classify`` stage
and of ``spamflow train|score|evaluate``.

A bundle is a plain dict (saved with skops by :mod:`spamflow_ensemble.persist`): the fitted
:class:`EnsembleSelection`, the feature names and groups it was trained on, their training
medians (for evidence), the decision threshold and a summary of the training data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spamflow_ensemble.fastauc import auc
from spamflow_ensemble.selection import EnsembleSelection
from spamflow_ensemble.tables import FeatureTable


def f1_threshold(y: np.ndarray, score: np.ndarray) -> float:
    """The score threshold of best F1 on (out-of-fold) training predictions: spam is rare
    (5-8 %), so 0.5 on averaged probabilities would call almost nothing spam."""
    order = np.argsort(-score, kind="stable")
    s, t = score[order], y[order]
    tp = np.cumsum(t)
    k = np.arange(1, len(t) + 1)
    f1 = 2 * tp / (k + t.sum())
    last = np.r_[s[1:] != s[:-1], True]  # only cut between distinct scores
    f1 = np.where(last, f1, -1.0)
    best = int(np.argmax(f1))
    return float(s[best])


def train(table: FeatureTable, y: np.ndarray, groups: np.ndarray | None, estimator: EnsembleSelection,
          threshold: float | None = None) -> dict[str, Any]:
    """Fit on every row of ``table`` (all labelled) and return the bundle.  Columns with no
    value in any training row are dropped (counted in ``train.dropped_features``)."""
    present = [j for j in range(table.X.shape[1]) if not np.isnan(table.X[:, j]).all()]
    dropped = [table.features[j] for j in range(table.X.shape[1]) if j not in set(present)]
    table = table.columns(present)
    es = estimator.set_params(feature_groups=table.groups).fit(table.X, y, groups=groups)
    oof = es.oof_score_
    medians = np.array([np.nanmedian(table.X[:, j]) for j in range(table.X.shape[1])])
    return {
        "estimator": es,
        "features": list(table.features),
        "feature_groups": {g: list(c) for g, c in table.groups.items()},
        "medians": medians,
        "threshold": float(threshold) if threshold is not None else f1_threshold(y, oof),
        "train": {"hosts": int(len(y)), "spam": int(y.sum()), "snapshots": sorted(set(table.snapshot)),
                  "oof_auc": float(auc(y, oof)), "dropped_features": dropped,
                  "groups": None if groups is None else int(len(np.unique(groups))),
                  "compression_hosts": int(getattr(es, "mimic_hosts_", 0))},
    }


def align(bundle: dict[str, Any], table: FeatureTable) -> tuple[np.ndarray, list[str]]:
    """The table's columns in the bundle's feature order (NaN for a feature the table lacks),
    and the names of the features it lacks."""
    index = {f: j for j, f in enumerate(table.features)}
    X = np.full((len(table.host), len(bundle["features"])), np.nan)
    missing = []
    for k, f in enumerate(bundle["features"]):
        if f in index:
            X[:, k] = table.X[:, index[f]]
        else:
            missing.append(f)
    return X, missing


def score(bundle: dict[str, Any], X: np.ndarray) -> np.ndarray:
    return bundle["estimator"].predict_proba(X)[:, 1]
