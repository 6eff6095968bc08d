"""A decision tree whose leaf probabilities are Laplace-smoothed, as J48's ``-A`` option.

scikit-learn's trees return the raw class fractions of a leaf, so a leaf of three spam
hosts says 1.0.  Laplace smoothing, (n_spam + 1) / (n + 2), ranks large pure leaves above
small ones, which matters for AUC.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.tree import DecisionTreeClassifier


class LaplaceTree(ClassifierMixin, BaseEstimator):
    """A ``DecisionTreeClassifier`` with Laplace-smoothed leaf probabilities (binary 0/1 labels)."""

    def __init__(self, criterion: str = "gini", ccp_alpha: float = 0.0, min_samples_leaf: int = 1,
                 random_state: int | None = None) -> None:
        self.criterion = criterion
        self.ccp_alpha = ccp_alpha
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> LaplaceTree:
        y = np.asarray(y)
        self.tree_model_ = DecisionTreeClassifier(criterion=self.criterion, ccp_alpha=self.ccp_alpha,
                                                  min_samples_leaf=self.min_samples_leaf,
                                                  random_state=self.random_state).fit(X, y)
        self.classes_ = self.tree_model_.classes_
        leaves = self.tree_model_.apply(X)
        size = int(leaves.max()) + 1
        total = np.bincount(leaves, minlength=size).astype(np.float64)
        positive = np.bincount(leaves, weights=(y == self.classes_[-1]).astype(np.float64), minlength=size)
        self.leaf_probability_ = (positive + 1.0) / (total + 2.0)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        p = self.leaf_probability_[self.tree_model_.apply(X)]
        if len(self.classes_) == 1:
            return np.ones((len(p), 1))
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        proba = self.predict_proba(X)
        return np.asarray(self.classes_)[proba.argmax(axis=1)]
