"""Quantile bins: what the tree families see instead of raw feature values.

scikit-learn grows a tree by sorting each feature's values at every node; on a few thousand
hosts, imbalanced classes make deep, narrow trees, and the sorting makes the full library
(thousands of trees) take hours (benchmarks/README.md).  Cutting each feature at the
training hosts' quantiles into at most ``n_bins`` bins (``n_bins`` − 1 edges) leaves a
tree only ``n_bins`` thresholds per feature: a feature's order is kept between bins, and
the fits run 5-13x faster (FastRandomForest, which the paper used for the same reason,
and histogram learners such as LightGBM bin the same way).

Binning is fitted once on all training hosts' features, before the folds: it reads no
label, so no fold learns anything about another fold's labels.  A missing value stays
missing (NaN), for the trees to split on.

>>> edges = quantile_edges(np.array([[1.0], [2.0], [3.0], [np.nan]]), 2)
>>> [e.tolist() for e in edges]
[[2.0]]
>>> to_bins(np.array([[0.5], [2.0], [9.0], [np.nan]]), edges)[:, 0].tolist()
[0.0, 1.0, 1.0, nan]
"""

from __future__ import annotations

import numpy as np


def quantile_edges(X: np.ndarray, n_bins: int) -> list[np.ndarray]:
    """Per column, the distinct inner quantiles (1/n_bins ... (n_bins-1)/n_bins) of its
    non-missing values above its minimum; no edge for a column with no value."""
    inner = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
    edges = []
    for j in range(X.shape[1]):
        column = X[:, j]
        present = column[~np.isnan(column)]
        if len(present) == 0:
            edges.append(np.empty(0))
            continue
        cuts = np.unique(np.quantile(present, inner))
        edges.append(cuts[cuts > present.min()])  # an edge at the minimum would leave bin 0 empty
    return edges


def to_bins(X: np.ndarray, edges: list[np.ndarray]) -> np.ndarray:
    """Each value's bin: the number of the column's edges at or below it (float32, NaN kept)."""
    out = np.empty(X.shape, np.float32)
    for j, column_edges in enumerate(edges):
        column = X[:, j]
        out[:, j] = np.searchsorted(column_edges, column, side="right")
        out[np.isnan(column), j] = np.nan
    return out
