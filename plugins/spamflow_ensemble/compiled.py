"""Exact, fast scoring of a fitted ensemble: its fold models rewritten as plain arrays.

Scoring through scikit-learn costs one pipeline per fold model (five per chosen model, 655
on the 4,000 x 300 benchmark): every call validates and copies the input, imputes, scales
and allocates its own output.  Here the same arithmetic is regrouped, with the same result
up to floating-point rounding (tests compare the two paths model by model):

* **logistic regression and Gaussian naive Bayes** (signed log, median imputation with
  missing indicators, scaling) are each a function of three shared matrices: L = signed log
  of the features with missing values at 0, L², and the missing-value mask M.  Logistic
  regression is linear in [L, M]; Gaussian naive Bayes' log-odds is linear in [L, L², M].
  All of them are one matrix product;
* **trees** (single, bagged cost-sensitive, forests) become one list of (tree, P(spam) per
  node, weight); each tree routes the shared float32 input once (``Tree.apply``, which
  releases the GIL, so trees run in threads);
* **boosted stumps** become arrays of (column, threshold, side for a missing value, leaf
  values) per boosted model, summed in numpy;
* **discretised naive Bayes** becomes, per input column, its bin edges and the log-odds of
  each bin: a host's log-odds is the sum of one table look-up per column (a ``searchsorted``
  over all hosts per column, no per-host Python);
* anything else (models a user passes in) is scored by scikit-learn as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from scipy.special import expit
from sklearn.ensemble import BaggingClassifier, ExtraTreesClassifier, GradientBoostingClassifier, RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import CategoricalNB, GaussianNB
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, KBinsDiscretizer, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from spamflow_ensemble.library import signed_log
from spamflow_ensemble.smoothing import LaplaceTree

Inputs = Callable[[bool, tuple[int, ...]], np.ndarray]
"""``inputs(binned, columns)``: the float64 features (or their bins) of a candidate's group."""


@dataclass
class LinearPart:
    """Fold models whose log-odds are linear in [L, L², M] (logistic regression, Gaussian NB)."""

    n_features: int
    columns: list[np.ndarray] = field(default_factory=list)  # one (3F,) coefficient vector each
    intercepts: list[float] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)

    def add(self, coef: np.ndarray, intercept: float, weight: float) -> None:
        self.columns.append(coef)
        self.intercepts.append(intercept)
        self.weights.append(weight)

    def score(self, X: np.ndarray) -> np.ndarray:
        if not self.columns:
            return np.zeros(len(X))
        missing = np.isnan(X)
        L = signed_log(np.where(missing, 0.0, X))  # signed_log(0) = 0: a missing value adds nothing here
        basis = np.hstack([L, L * L, missing.astype(np.float64)])
        z = basis @ np.column_stack(self.columns) + np.asarray(self.intercepts)
        return expit(z) @ np.asarray(self.weights)


@dataclass(frozen=True)
class TreePart:
    """One tree: the columns it reads (of the raw features or their bins), P(spam) per node."""

    tree: Any  # sklearn.tree._tree.Tree
    leaf: np.ndarray
    weight: float
    binned: bool
    columns: tuple[int, ...]


@dataclass(frozen=True)
class StumpPart:
    """One boosted-stumps model: raw = constant + Σ (left if x <= threshold else right),
    a missing value going to the side ``missing_left``; P = expit(raw)."""

    source: np.ndarray  # feature index (of the candidate's columns)
    threshold: np.ndarray
    missing_left: np.ndarray
    left: np.ndarray
    right: np.ndarray
    constant: float
    weight: float
    binned: bool
    columns: tuple[int, ...]

    def raw(self, X: np.ndarray) -> np.ndarray:
        """The log-odds of the rows of ``X`` (float32, the candidate's columns)."""
        values = X[:, self.source]
        go_left = np.where(np.isnan(values), self.missing_left, values <= self.threshold)
        return self.constant + np.where(go_left, self.left, self.right).sum(axis=1)

    def score(self, X: np.ndarray) -> np.ndarray:
        return self.weight * expit(self.raw(X))


@dataclass(frozen=True)
class BayesPart:
    """One discretised naive Bayes model: log-odds = constant + Σ_c table_c[bin of column c],
    where column c is feature ``source[c]`` (its median if missing) or, if ``indicator[c]``,
    that feature's missing indicator (0/1), cut at ``edges[c]``; P = expit(log-odds)."""

    source: np.ndarray  # feature index into the full feature matrix, per imputed column
    indicator: np.ndarray
    median: np.ndarray
    edges: list[np.ndarray]  # inner bin edges (KBinsDiscretizer.bin_edges_[c][1:-1])
    tables: list[np.ndarray]  # log P(bin | spam) - log P(bin | nonspam)
    constant: float
    weight: float

    def score(self, X: np.ndarray) -> np.ndarray:
        raw = np.full(len(X), self.constant)
        for j, indicator, median, edges, table in zip(self.source, self.indicator, self.median, self.edges,
                                                      self.tables):
            column = X[:, j]
            missing = np.isnan(column)
            value = missing.astype(np.float64) if indicator else np.where(missing, median, column)
            raw += table[np.searchsorted(edges, value, side="right")]
        return self.weight * expit(raw)


def spam_column(classes: Any) -> int | None:
    """The position of the spam class (label 1) among ``classes``; None if absent."""
    classes = list(classes)
    return classes.index(1) if 1 in classes else None


def _imputed_columns(imputer: SimpleImputer, width: int) -> tuple[np.ndarray, np.ndarray]:
    """For each output column of ``imputer``: the input feature it reads, and whether it is
    the feature's missing indicator (else the feature, its missing values at the median)."""
    source = np.arange(width)
    indicator = np.zeros(width, dtype=bool)
    if imputer.indicator_ is not None:
        extra = np.asarray(imputer.indicator_.features_)
        source = np.concatenate([source, extra])
        indicator = np.concatenate([indicator, np.ones(len(extra), dtype=bool)])
    return source, indicator


def _steps(model: Any) -> list[Any]:
    return [step for _, step in model.steps] if isinstance(model, Pipeline) else [model]


def _signed_log_front(steps: list[Any]) -> bool:
    return isinstance(steps[0], FunctionTransformer) and steps[0].func is signed_log


def _linear(model: Any, columns: tuple[int, ...], n_features: int) -> tuple[np.ndarray, float] | None:
    """(coefficients on [L, L², M], intercept) of the log-odds of a signed-log pipeline ending
    in logistic regression or Gaussian naive Bayes; None for any other model."""
    steps = _steps(model)
    if not (len(steps) in (3, 4) and _signed_log_front(steps) and isinstance(steps[1], SimpleImputer)):
        return None
    imputer, last = steps[1], steps[-1]
    if list(getattr(last, "classes_", [])) != [0, 1]:
        return None
    source, indicator = _imputed_columns(imputer, len(columns))
    median = np.asarray(imputer.statistics_, dtype=np.float64)
    F = n_features
    coef = np.zeros(3 * F)
    cols = np.asarray(columns)

    def add(term: int, at: np.ndarray, values: np.ndarray) -> None:
        np.add.at(coef, term * F + at, values)

    if len(steps) == 4 and isinstance(steps[2], StandardScaler) and isinstance(last, LogisticRegression):
        # z = Σ w_j (x̃_j - μ_j) / σ_j + b, x̃_j = L_j, or the median (or 1 for an indicator) if missing
        scaler = steps[2]
        mean = scaler.mean_ if scaler.mean_ is not None else np.zeros(len(source))
        scale = scaler.scale_ if scaler.scale_ is not None else np.ones(len(source))
        a = last.coef_[0] / scale
        intercept = float(last.intercept_[0] - a @ mean)
        plain = ~indicator
        add(0, cols[source[plain]], a[plain])
        add(2, cols[source[plain]], a[plain] * median[source[plain]])
        add(2, cols[source[indicator]], a[indicator])
        return coef, intercept
    if len(steps) == 3 and isinstance(last, GaussianNB):
        # log-odds = Σ_j [α_j x̃_j² + β_j x̃_j] + γ, with x̃² = L² (+ median² if missing) and x̃ likewise
        theta, var = last.theta_, last.var_
        alpha = -0.5 * (1.0 / var[1] - 1.0 / var[0])
        beta = theta[1] / var[1] - theta[0] / var[0]
        gamma = float(np.log(last.class_prior_[1]) - np.log(last.class_prior_[0])
                      - 0.5 * np.sum(np.log(var[1] / var[0]))
                      - 0.5 * np.sum(theta[1] ** 2 / var[1] - theta[0] ** 2 / var[0]))
        plain = ~indicator
        m = median[source[plain]]
        add(0, cols[source[plain]], beta[plain])
        add(1, cols[source[plain]], alpha[plain])
        add(2, cols[source[plain]], alpha[plain] * m * m + beta[plain] * m)
        add(2, cols[source[indicator]], alpha[indicator] + beta[indicator])
        return coef, gamma
    return None


def _discretised_bayes(model: Any, columns: tuple[int, ...], weight: float) -> BayesPart | None:
    """The table form of an imputer + ordinal quantile bins + categorical naive Bayes pipeline
    (:func:`~spamflow_ensemble.library.discretised_bayes`); None for any other model."""
    steps = _steps(model)
    if not (len(steps) == 3 and isinstance(steps[0], SimpleImputer) and isinstance(steps[1], KBinsDiscretizer)
            and steps[1].encode == "ordinal" and isinstance(steps[2], CategoricalNB)
            and list(steps[2].classes_) == [0, 1]):
        return None
    imputer, bins, bayes = steps
    source, indicator = _imputed_columns(imputer, len(columns))
    median = np.asarray(imputer.statistics_, dtype=np.float64)
    prior = bayes.class_log_prior_
    return BayesPart(np.asarray(columns, dtype=np.int64)[source], indicator, median[source],
                     [np.asarray(e[1:-1], dtype=np.float64) for e in bins.bin_edges_],
                     [np.asarray(t[1] - t[0], dtype=np.float64) for t in bayes.feature_log_prob_],
                     float(prior[1] - prior[0]), weight)


def _node_probability(tree: DecisionTreeClassifier, spam: int | None) -> np.ndarray:
    """P(spam) at every node of a fitted tree, as its ``predict_proba`` gives it."""
    value = tree.tree_.value[:, 0, :]
    if spam is None:
        return np.zeros(len(value))
    total = value.sum(axis=1)
    total[total == 0] = 1.0
    return value[:, spam] / total


def _trees(model: Any, weight: float) -> list[tuple[Any, np.ndarray, float, np.ndarray | None]] | None:
    """(tree, P(spam) per node, weight, its feature subset or None) for every tree of a tree
    model (tree, Laplace tree, forest, extra trees, bagged trees); None for any other model."""
    if isinstance(model, LaplaceTree):
        tree = model.tree_model_.tree_
        leaf = np.full(tree.node_count, float(list(model.classes_) == [1]))
        if len(model.classes_) > 1:
            leaf[: len(model.leaf_probability_)] = model.leaf_probability_
        return [(tree, leaf, weight, None)]
    if isinstance(model, DecisionTreeClassifier):
        return [(model.tree_, _node_probability(model, spam_column(model.classes_)), weight, None)]
    if isinstance(model, (RandomForestClassifier, ExtraTreesClassifier, BaggingClassifier)):
        members = model.estimators_
        if not all(isinstance(m, DecisionTreeClassifier) for m in members):
            return None
        spam = spam_column(model.classes_)  # members learn the encoded labels 0..k-1
        features = getattr(model, "estimators_features_", [None] * len(members))
        out = []
        for member, feats in zip(members, features):
            column = list(member.classes_).index(spam) if spam is not None and spam in member.classes_ else None
            out.append((member.tree_, _node_probability(member, column), weight / len(members),
                        None if feats is None else np.asarray(feats)))
        return out
    return None


def _stumps(model: Any, weight: float, columns: tuple[int, ...], binned: bool) -> list[StumpPart] | None:
    """The boosted-stumps models of an imputer + bagged gradient boosting pipeline, or None.

    Gradient boosting compares float32 values (scikit-learn's tree input type), so a missing
    value's side is decided by the float32 median, as it would be after imputation."""
    steps = _steps(model)
    if not (len(steps) == 2 and isinstance(steps[0], SimpleImputer) and isinstance(steps[1], BaggingClassifier)):
        return None
    imputer, bagging = steps
    if list(bagging.classes_) != [0, 1] or not all(
            isinstance(b, GradientBoostingClassifier) and list(b.classes_) == [0, 1]
            and getattr(b, "only_class_", None) is None for b in bagging.estimators_):  # one-class bag: not compiled
        return None
    source_of, indicator = _imputed_columns(imputer, len(columns))
    median = np.asarray(imputer.statistics_, dtype=np.float32)
    probe = np.zeros((1, len(columns)), dtype=np.float32)
    parts = []
    for boost, feats in zip(bagging.estimators_, bagging.estimators_features_):
        if not np.array_equal(feats, np.arange(len(source_of))):
            return None
        rows = []
        for stage in boost.estimators_[:, 0]:
            t = stage.tree_
            if t.node_count == 1:  # no split: the same value for every host
                rows.append((0, np.inf, True, boost.learning_rate * float(t.value[0, 0, 0]), 0.0))
                continue
            if t.node_count != 3:
                return None
            f, threshold = int(t.feature[0]), float(t.threshold[0])
            left, right = (boost.learning_rate * float(t.value[k, 0, 0])
                           for k in (t.children_left[0], t.children_right[0]))
            j = int(source_of[f])
            if indicator[f]:  # the missing indicator: 1 if missing, 0 if present
                rows.append((j, np.inf if 0.0 <= threshold else -np.inf, 1.0 <= threshold, left, right))
            else:
                rows.append((j, threshold, bool(median[j] <= threshold), left, right))
        source, thresh, missing_left, lefts, rights = (np.array(c) for c in zip(*rows)) if rows else (
            np.zeros(0, np.int64), np.zeros(0), np.zeros(0, bool), np.zeros(0), np.zeros(0))
        part = StumpPart(source.astype(np.int64), thresh.astype(np.float64), missing_left.astype(bool),
                         lefts.astype(np.float64), rights.astype(np.float64), 0.0,
                         weight / len(bagging.estimators_), binned, columns)
        # the initial log-odds: the model's own decision function on one row, less its stumps
        constant = float(boost.decision_function(imputer.transform(probe))[0]) - float(part.raw(probe)[0])
        parts.append(replace(part, constant=constant))
    return parts


@dataclass
class CompiledEnsemble:
    """The weighted sum of the kept candidates' fold-model means, as arrays."""

    linear: LinearPart
    trees: list[TreePart]
    stumps: list[StumpPart]
    other: list[tuple[int, float]]  # (candidate index, weight) scored by scikit-learn
    candidates: list[int]  # every candidate index it scores
    bayes: list[BayesPart] = field(default_factory=list)  # discretised naive Bayes

    def score(self, inputs: Inputs, X: np.ndarray, other_scores: Callable[[int], np.ndarray],
              n_jobs: int = 1) -> np.ndarray:
        """Σ weight x P(spam) over every part; ``other_scores(i)`` scores candidate ``i``."""
        shared: dict[tuple[bool, tuple[int, ...]], np.ndarray] = {}

        def tree_input(part: TreePart | StumpPart) -> np.ndarray:
            key = (part.binned, part.columns)
            if key not in shared:
                shared[key] = np.ascontiguousarray(inputs(*key), dtype=np.float32)
            return shared[key]

        parts: list[TreePart | StumpPart] = [*self.trees, *self.stumps]
        for part in parts:  # the shared float32 inputs, before the threads
            tree_input(part)

        def trees(chunk: list[TreePart]) -> np.ndarray:
            return np.sum([p.weight * p.leaf[p.tree.apply(tree_input(p))] for p in chunk], axis=0)

        def stumps(part: StumpPart) -> np.ndarray:
            return part.score(tree_input(part))

        def other(i: int, w: float) -> np.ndarray:
            return w * other_scores(i)

        batch = max(1, len(self.trees) // (8 * max(1, n_jobs)))
        tasks = [delayed(self.linear.score)(X)]
        tasks += [delayed(trees)(self.trees[start:start + batch]) for start in range(0, len(self.trees), batch)]
        tasks += [delayed(stumps)(part) for part in self.stumps]
        tasks += [delayed(part.score)(X) for part in self.bayes]
        tasks += [delayed(other)(i, w) for i, w in self.other]
        return np.sum(Parallel(n_jobs=n_jobs, prefer="threads")(tasks), axis=0)


def compile_ensemble(candidates: list[Any], fold_models: dict[int, list[Any]], weights: dict[int, float],
                     binned_families: frozenset[str], n_features: int) -> CompiledEnsemble:
    """Rewrite the fold models of the candidates in ``weights`` (index -> weight)."""
    linear = LinearPart(n_features)
    trees: list[TreePart] = []
    stumps: list[StumpPart] = []
    other: list[tuple[int, float]] = []
    bayes: list[BayesPart] = []
    for i, w in weights.items():
        cand = candidates[i]
        binned = cand.family in binned_families
        models = fold_models[i]
        share = w / len(models)
        compiled: list[Any] = []
        for model in models:
            lin = _linear(model, cand.columns, n_features)
            if lin is not None:
                compiled.append(("linear", lin))
                continue
            tr = _trees(model, share)
            if tr is not None:
                compiled.append(("trees", tr))
                continue
            nb = _discretised_bayes(model, cand.columns, share)
            if nb is not None:
                compiled.append(("bayes", nb))
                continue
            st = _stumps(model, share, cand.columns, binned)
            if st is None:
                break
            compiled.append(("stumps", st))
        if len(compiled) < len(models):
            other.append((i, w))
            continue
        for kind, item in compiled:
            if kind == "linear":
                linear.add(item[0], item[1], share)
            elif kind == "bayes":
                bayes.append(item)
            elif kind == "trees":
                for tree, leaf, weight, feats in item:
                    cols = cand.columns if feats is None else tuple(cand.columns[k] for k in feats)
                    if tree.n_features != len(cols):  # Tree.apply does not check the input's width
                        raise ValueError(f"{cand.name}: a tree of {tree.n_features} features is given {len(cols)}")
                    trees.append(TreePart(tree, leaf, weight, binned, cols))
            else:
                stumps.extend(item)
    return CompiledEnsemble(linear, trees, stumps, other, list(weights), bayes)
