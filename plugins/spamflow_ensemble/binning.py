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

from typing import Literal

import numpy as np

AUTO_BINS = 32
"""Bins per feature that ``tree_bins="auto"`` uses on a large table."""
AUTO_RAW_CELLS = 250_000
"""``tree_bins="auto"`` keeps raw values up to this many cells (hosts x features): there exact
splits are affordable (the full library on the UK2007 link features, 3,998 x 41, fits in
minutes) and they ranked better on real data: a 250-tree forest on those link features scored
AUC 0.731/0.731/0.733 on raw values against 0.714/0.711/0.701 on 32 bins (3 seeds, grouped
5-fold; docs/classify.md)."""


def bins_for(tree_bins: int | Literal["auto"], n_hosts: int, n_features: int) -> int:
    """The bin count to use: ``tree_bins`` itself (0: raw values), or for ``"auto"`` raw values
    on a table of at most :data:`AUTO_RAW_CELLS` cells and :data:`AUTO_BINS` bins above."""
    if tree_bins == "auto":
        return 0 if n_hosts * n_features <= AUTO_RAW_CELLS else AUTO_BINS
    if isinstance(tree_bins, bool) or not isinstance(tree_bins, (int, np.integer)) or tree_bins == 1 or tree_bins < 0:
        raise ValueError(f"tree_bins must be 'auto', 0 (raw values) or at least 2, not {tree_bins!r}")
    return int(tree_bins)


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
