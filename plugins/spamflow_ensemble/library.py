"""The model library of section 4.1, in scikit-learn terms.

The paper lets Weka train bagged LogitBoost, J48 trees, bagged cost-sensitive J48 trees,
ridge logistic regression, random forests and naive Bayes, each with several settings, and
lets ensemble selection pick among them.  :func:`build_library` returns those models,
unfitted, for a feature group of ``n_features`` columns:

* ``full``: the paper's grid (about 70 models per feature group);
* ``fast``: one or two settings per family (11 models), for the demo, CI and quick runs; its
  forest, extra trees and boosting use the smoother settings that did best with few spam
  hosts (>= 3 hosts per leaf, a class-balanced forest, half the features per boosting split).

Beyond the paper's list: extremely randomised trees and histogram gradient boosting
(``extratrees``, ``histboost``).  On the UK2007 link features the paper's families are all
weaker than a random forest, so selection had nothing to add to it; these two are nearly as strong
as the forest there and err differently (docs/classify.md, "Link features: the experiments").

Missing values (a host absent from one detector's table or snapshot): the tree families
(trees, bagged trees, forests) split on them natively; boosting, logistic regression and
naive Bayes, which cannot, see the column's training median and a 0/1 "was missing" column
(section 4: "default values" for models that cannot treat missing values).  The tree-based
families, boosting included, are given quantile bins of the features, not raw values
(:mod:`spamflow_ensemble.binning`, ``EnsembleSelection.tree_bins``); histogram boosting bins
the features itself and takes missing values natively.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.ensemble import (
    BaggingClassifier,
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import CategoricalNB, GaussianNB
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, KBinsDiscretizer, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from spamflow_ensemble.smoothing import LaplaceTree

Library = Literal["full", "fast"]
FAMILIES = ("logitboost", "tree", "costtree", "logistic", "forest", "naivebayes", "extratrees", "histboost")
"""Model families, the paper's list and two more; ``evaluation.json``'s ``auc_by_family`` keys."""

SMOOTH_LEAF = 3
"""Hosts at least per leaf of the fast library's forest and extra trees: with ~180 spam hosts
per training fold, leaves of one or two hosts fit noise; 3 lifted both on the UK2007 link
features (forest +0.013, extra trees +0.017 mean AUC over 3 fold seeds; docs/classify.md)."""

BAGS = 10
"""Bagging iterations of bagged LogitBoost and bagged cost-sensitive trees (the paper: 10)."""


@dataclass(frozen=True)
class ModelSpec:
    """One library model: its name (family and settings), family and unfitted estimator.

    ``prefix_of`` names the library model whose first ``stages`` boosting iterations this
    one is (same seed, same bags, same trees): it is cut from that model, not fitted."""

    name: str
    family: str
    estimator: BaseEstimator
    prefix_of: str | None = None
    stages: int = 0


def boosting_prefix(model: Any, stages: int) -> Any:
    """The first ``stages`` iterations of a fitted :func:`logitboost` pipeline.

    Gradient boosting draws from its random state stage by stage, and bagging draws its
    bootstrap samples from its own seed, so these are the models that the same pipeline
    with ``stages`` iterations would fit (tests check it): the full grid's 2, 4, ... 32
    iterations cost no fit of their own, only the 64-iteration model does."""
    (imputer_name, imputer), (bagging_name, bagging) = model.steps
    members = []
    for boost in bagging.estimators_:
        member = copy.copy(boost)
        member.set_params(n_estimators=stages)
        member.estimators_ = boost.estimators_[:stages]
        member.train_score_ = boost.train_score_[:stages]
        member.n_estimators_ = stages
        members.append(member)
    bag = copy.copy(bagging)
    bag.set_params(estimator=clone(bagging.estimator).set_params(n_estimators=stages))
    bag.estimators_ = members
    return Pipeline([(imputer_name, imputer), (bagging_name, bag)])


def signed_log(X: Any) -> Any:
    """sign(x)·log(1 + |x|): link and count features are heavy-tailed (PageRank, degrees); a
    linear or Gaussian model sees them on this scale (the paper's public link set also holds
    log-transformed features).  Monotone, so trees are unaffected and are not given it."""
    return np.sign(X) * np.log1p(np.abs(X))


def _imputed(*steps: Any, log: bool = False) -> Any:
    """Median plus a missing-indicator column, for models that cannot take NaN; ``log`` first
    applies :func:`signed_log`."""
    imputer = SimpleImputer(strategy="median", add_indicator=True, keep_empty_features=True)
    if log:
        return make_pipeline(FunctionTransformer(signed_log), imputer, *steps)
    return make_pipeline(imputer, *steps)


class BootstrapBoost(GradientBoostingClassifier):
    """Gradient boosting that also fits a bootstrap sample holding one class only.

    Bagging gives each member its bootstrap as sample weights; with a handful of spam hosts a
    bag may draw none, and scikit-learn's boosting then refuses to fit ("y contains 1 class
    after sample_weight trimmed classes").  Weka's LogitBoost, the paper's model, fits such a
    sample as the class it holds; so does this, predicting that class with probability 1.
    A sample with both classes is fitted exactly as :class:`GradientBoostingClassifier` fits it."""

    only_class_: int | None = None
    """Index in ``classes_`` of the one class a one-class sample held; None after a usual fit."""

    def fit(self, X: Any, y: Any, sample_weight: Any = None, monitor: Any = None) -> BootstrapBoost:
        y = np.asarray(y)
        weighted = y if sample_weight is None else y[np.asarray(sample_weight) > 0]
        present = np.unique(weighted)
        if len(present) == 1 and len(np.unique(y)) == 2:
            self.classes_ = np.unique(y)
            self.n_classes_ = 2
            self.only_class_ = int(np.searchsorted(self.classes_, present[0]))
            self.n_features_in_ = np.asarray(X).shape[1]
            self.estimators_ = np.empty((0, 1), dtype=object)
            self.train_score_ = np.zeros(0)
            self.n_estimators_ = 0
            return self
        self.only_class_ = None
        super().fit(X, y, sample_weight=sample_weight, monitor=monitor)
        return self

    def predict_proba(self, X: Any) -> Any:
        if getattr(self, "only_class_", None) is None:
            return super().predict_proba(X)
        out = np.zeros((np.asarray(X).shape[0], 2))
        out[:, self.only_class_] = 1.0
        return out

    def decision_function(self, X: Any) -> Any:
        if getattr(self, "only_class_", None) is None:
            return super().decision_function(X)
        return np.full(np.asarray(X).shape[0], np.inf if self.only_class_ == 1 else -np.inf)


def logitboost(iterations: int, seed: int) -> BaseEstimator:
    """Bagged LogitBoost: 10 bags of boosted decision stumps (Weka's default base learner) with
    the logistic loss; scikit-learn's gradient boosting takes a Newton step per leaf for that
    loss, as LogitBoost does.  (HistGradientBoosting, which takes NaN, costs ~100x more per fit
    on a few thousand hosts, so missing values are imputed here.)"""
    boost = BootstrapBoost(n_estimators=iterations, max_depth=1, learning_rate=1.0, random_state=seed)
    return _imputed(BaggingClassifier(boost, n_estimators=BAGS, random_state=seed))


def cost_tree(fp_cost: int, seed: int) -> BaseEstimator:
    """Bagged decision trees where a false positive (a nonspam host called spam) costs
    ``fp_cost`` times a false negative: the nonspam class weighs ``fp_cost``."""
    tree = DecisionTreeClassifier(class_weight={0: float(fp_cost), 1: 1.0}, min_samples_leaf=2, random_state=seed)
    return BaggingClassifier(tree, n_estimators=BAGS, random_state=seed)


def logistic(ridge: float) -> BaseEstimator:
    """L2 logistic regression on standardised, signed-log features; ``ridge`` is Weka's lambda, C = 1/ridge.

    At most 300 L-BFGS iterations: with a tiny ridge on hundreds of correlated features the
    solver otherwise runs for a minute per fit (measured on 3,200 x 300) for no gain in AUC."""
    return _imputed(StandardScaler(), LogisticRegression(C=1.0 / ridge, max_iter=300), log=True)


def forest(max_features: int, trees: int, seed: int, min_leaf: int = 1, balanced: bool = False) -> BaseEstimator:
    """Random forest; ``min_leaf`` hosts at least per leaf and, if ``balanced``, each tree's
    bootstrap reweighted to equal class totals (``class_weight="balanced_subsample"``)."""
    return RandomForestClassifier(n_estimators=trees, max_features=max_features, min_samples_leaf=min_leaf,
                                  class_weight="balanced_subsample" if balanced else None, n_jobs=1,
                                  random_state=seed)


def extra_trees(max_features: int, trees: int, seed: int, min_leaf: int = 1) -> BaseEstimator:
    """Extremely randomised trees (Geurts et al. 2006): split thresholds drawn at random, so
    the trees differ from a random forest's and their errors less correlated with them."""
    return ExtraTreesClassifier(n_estimators=trees, max_features=max_features, min_samples_leaf=min_leaf, n_jobs=1,
                                random_state=seed)


def hist_boost(learning_rate: float, iterations: int, leaves: int, seed: int,
               feature_share: float = 1.0) -> BaseEstimator:
    """Gradient-boosted trees of at most ``leaves`` leaves on 255 quantile bins (scikit-learn's
    histogram boosting; missing values native).  Small trees, at least 40 hosts per leaf and
    an L2 penalty of 1: few spam hosts, so the settings that keep each step small; no early
    stopping (it would hold out part of an already small training fold).  ``feature_share``
    < 1: each split considers that share of the features, drawn at random (as a forest does)."""
    return HistBoost(learning_rate=learning_rate, max_iter=iterations, max_leaf_nodes=leaves, min_samples_leaf=40,
                     l2_regularization=1.0, max_features=feature_share, early_stopping=False, random_state=seed)


class HistBoost(HistGradientBoostingClassifier):
    """Histogram boosting that leaves out the features missing on every training host.

    scikit-learn's binning fails on such a column ("window shape cannot be larger than input
    array shape"), and a training fold can have one even when the whole table has a value
    somewhere (a supporter ratio that one host in 42 has); no split could use it anyway."""

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> HistBoost:
        X = np.asarray(X, dtype=np.float64)
        self.kept_features_ = np.flatnonzero(~np.isnan(X).all(axis=0))
        super().fit(X[:, self.kept_features_], y, sample_weight=sample_weight)
        return self

    def _kept(self, X: Any) -> np.ndarray:
        return np.asarray(X, dtype=np.float64)[:, self.kept_features_]

    def predict_proba(self, X: Any) -> np.ndarray:
        return super().predict_proba(self._kept(X))

    def decision_function(self, X: Any) -> np.ndarray:
        return super().decision_function(self._kept(X))

    def predict(self, X: Any) -> np.ndarray:
        return super().predict(self._kept(X))


def discretised_bayes() -> BaseEstimator:
    """Naive Bayes on features cut into 10 equal-frequency bins (Weka's supervised MDL
    discretisation is not in scikit-learn; quantile bins are our stand-in)."""
    bins = KBinsDiscretizer(n_bins=10, encode="ordinal", strategy="quantile", quantile_method="averaged_inverted_cdf")
    return _imputed(bins, CategoricalNB(min_categories=10))


def forest_max_features(n_features: int) -> list[int]:
    """s/2, s, 2s, 4s, 8s with s = sqrt(features), each at least 1 and at most all features; distinct."""
    s = math.sqrt(n_features)
    out: list[int] = []
    for factor in (0.5, 1, 2, 4, 8):
        m = min(n_features, max(1, round(factor * s)))
        if m not in out:
            out.append(m)
    return out


def build_library(library: Library, n_features: int, random_state: int = 0) -> list[ModelSpec]:
    """The unfitted models for one feature group of ``n_features`` columns."""
    seed = random_state
    specs: list[ModelSpec] = []

    def add(name: str, family: str, estimator: BaseEstimator, prefix_of: str | None = None, stages: int = 0) -> None:
        specs.append(ModelSpec(name, family, estimator, prefix_of, stages))

    full = library == "full"
    if library not in ("full", "fast"):
        raise ValueError(f"library must be 'full' or 'fast', not {library!r}")
    boosting = (2, 4, 8, 16, 32, 64) if full else (8,)
    longest = max(boosting)
    for it in boosting:
        add(f"logitboost_{it}", "logitboost", logitboost(it, seed),
            f"logitboost_{longest}" if it < longest else None, it if it < longest else 0)
    tree_grid = ([(c, a, sm) for c in ("gini", "entropy") for a in (0.0, 0.001) for sm in (False, True)] if full
                 else [("entropy", 0.001, True), ("gini", 0.0, False)])
    for criterion, alpha, smooth in tree_grid:
        name = f"tree_{criterion}_{'pruned' if alpha else 'unpruned'}_{'laplace' if smooth else 'raw'}"
        est: BaseEstimator
        if smooth:
            est = LaplaceTree(criterion=criterion, ccp_alpha=alpha, min_samples_leaf=2, random_state=seed)
        else:
            est = DecisionTreeClassifier(criterion=criterion, ccp_alpha=alpha, min_samples_leaf=2, random_state=seed)
        add(name, "tree", est)
    for cost in (range(10, 301, 10) if full else (10,)):
        add(f"costtree_{cost}", "costtree", cost_tree(cost, seed))
    for exponent in (range(-8, 5) if full else (-4, 0)):
        add(f"logistic_ridge_1e{exponent}", "logistic", logistic(10.0 ** exponent))
    grid = forest_max_features(n_features)
    if full:
        for m in grid:
            add(f"forest_250_mf{m}", "forest", forest(m, 250, seed))
        for m in grid:
            add(f"extratrees_250_mf{m}", "extratrees", extra_trees(m, 250, seed))
        for rate, iterations in ((0.1, 100), (0.05, 200)):
            for leaves in (4, 7, 15):
                add(f"histboost_lr{rate:g}_{iterations}_leaves{leaves}", "histboost",
                    hist_boost(rate, iterations, leaves, seed))
    else:
        s = grid[min(1, len(grid) - 1)]  # sqrt(features); a one-feature group has only 1
        add(f"forest_100_mf{s}_leaf{SMOOTH_LEAF}_balanced", "forest", forest(s, 100, seed, SMOOTH_LEAF, True))
        add(f"extratrees_100_mf{s}_leaf{SMOOTH_LEAF}", "extratrees", extra_trees(s, 100, seed, SMOOTH_LEAF))
        add("histboost_lr0.05_100_leaves7_half", "histboost", hist_boost(0.05, 100, 7, seed, 0.5))
    add("naivebayes_gaussian", "naivebayes", _imputed(GaussianNB(), log=True))
    add("naivebayes_discretised", "naivebayes", discretised_bayes())
    return specs
