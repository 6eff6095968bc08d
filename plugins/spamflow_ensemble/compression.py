"""Model compression (Bucilă, Caruana & Niculescu-Mizil, KDD 2006): a fast mimic of the ensemble.

An ensemble selected from a large library is slow to score: on the 4,000 x 300 benchmark it
holds ~20,000 deep trees (each chosen forest is the mean of five fold forests), and no
exact evaluation routes a host through them at 10,000 hosts/s on two cores.  The authors of
ensemble selection proposed the remedy: label a large sample of synthetic hosts with the
ensemble's score and train one small, fast model to reproduce it.  Their synthetic hosts come
from **MUNGE**: each training host is moved towards its nearest neighbour, attribute by
attribute with probability ``p``, by a Gaussian whose spread is the two hosts' distance on
that attribute over ``s``.

Choices (the paper leaves the mimic open; it used neural networks):

* the mimic is scikit-learn's ``HistGradientBoostingRegressor`` (squared error on the
  ensemble's score): it takes missing values natively, as the features have them, and scores
  hundreds of thousands of hosts per second;
* MUNGE's swap is applied to the host being generated only (its neighbour is left as it is,
  which makes a pass one vectorised step); a missing value on either side takes the
  neighbour's value, as MUNGE does for nominal attributes; neighbours are found on
  standardised features with missing values at the column median;
* ``size`` passes over the training hosts (default 9: 10x the training hosts in all).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.neighbors import NearestNeighbors

MUNGE_P = 0.5
"""Probability that an attribute is moved towards the neighbour's (the paper's p)."""
MUNGE_S = 10.0
"""Local variance parameter: the spread is |a - b| / s (the paper's s)."""


def munge(X: np.ndarray, size: int, rng: np.random.Generator, p: float = MUNGE_P, s: float = MUNGE_S) -> np.ndarray:
    """``size`` x len(X) synthetic hosts near the training hosts (MUNGE, one-sided swap)."""
    median = np.nanmedian(np.where(np.isnan(X).all(axis=0), 0.0, X), axis=0)
    filled = np.where(np.isnan(X), median, X)
    scale = filled.std(axis=0)
    scale[scale == 0] = 1.0
    unit = (filled - filled.mean(axis=0)) / scale
    _, nearest = NearestNeighbors(n_neighbors=2).fit(unit).kneighbors(unit)
    # the nearest other host (an exact duplicate may come first: take column 1 unless it is the host itself)
    other = np.where(nearest[:, 0] == np.arange(len(X)), nearest[:, 1], nearest[:, 0])
    Y = X[other]
    centre, spread = np.nan_to_num(Y), np.nan_to_num(np.abs(X - Y) / s)
    either_missing = np.isnan(X) | np.isnan(Y)
    out = []
    for _ in range(size):
        moved = rng.random(X.shape) < p
        drawn = rng.normal(centre, spread)
        out.append(np.where(moved, np.where(either_missing, Y, drawn), X))
    return np.vstack(out) if out else np.empty((0, X.shape[1]))


def fit_mimic(X: np.ndarray, score: Any, size: int, random_state: int) -> tuple[HistGradientBoostingRegressor, int]:
    """A regressor trained to reproduce ``score`` (the ensemble's, a function of rows) on the
    training hosts plus ``size`` MUNGE passes; returns it and the number of synthetic hosts."""
    rng = np.random.default_rng(random_state)
    synthetic = munge(X, size, rng)
    rows = np.vstack([X, synthetic])
    mimic = HistGradientBoostingRegressor(max_iter=300, learning_rate=0.1, max_leaf_nodes=31,
                                          early_stopping=False, random_state=random_state)
    mimic.fit(rows, score(rows))
    return mimic, len(synthetic)
