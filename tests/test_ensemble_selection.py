"""Ensemble selection on libraries where the answer is known, checked against brute force
(every weighting of the toy models on a grid), plus the estimator's scikit-learn surface."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.metrics import roc_auc_score

from spamflow_ensemble.binning import quantile_edges, to_bins
from spamflow_ensemble.fastauc import auc_columns
from spamflow_ensemble.library import FAMILIES, ModelSpec, build_library
from spamflow_ensemble.selection import EnsembleSelection, hillclimb


class ColumnScore(ClassifierMixin, BaseEstimator):
    """A toy 'model' whose spam probability is one input column: its predictions are known
    exactly, so the best combination of a library of them can be found by brute force."""

    def __init__(self, column: int = 0) -> None:
        self.column = column

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        p = np.asarray(X)[:, self.column]
        return np.column_stack([1 - p, p])


def _toy(seed: int = 0, n: int = 400):
    """Two complementary half-informative scorers, a weak one and an inverted one (it scores
    honest hosts higher): the best ensemble mixes the two complementary ones; the inverted
    one must get no weight."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.15).astype(int)
    half = rng.random(n) < 0.5
    a = np.where(half, 0.8 * y + 0.2 * rng.random(n), rng.random(n))  # good on one half of the hosts
    b = np.where(~half, 0.8 * y + 0.2 * rng.random(n), rng.random(n))  # good on the other half
    weak = 0.15 * y + 0.85 * rng.random(n)
    inverted = 0.5 * (1 - y) + 0.5 * rng.random(n)
    return np.column_stack([a, b, weak, inverted]), y


def test_auc_columns_matches_sklearn_with_ties():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 300)
    S = np.round(rng.random((300, 5)), 1)  # many ties
    assert np.allclose(auc_columns(y, S), [roc_auc_score(y, S[:, j]) for j in range(5)])


def test_hillclimb_reaches_the_brute_force_best_combination():
    X, y = _toy()
    best = max(((w, roc_auc_score(y, X @ np.array(w))) for w in itertools.product(range(4), repeat=4) if sum(w)),
               key=lambda t: t[1])[1]
    counts = hillclimb(X, y, n_init=1, n_iterations=30)
    got = roc_auc_score(y, X @ counts)
    assert got >= best - 1e-9  # at least as good as every weighting with up to 3 copies per model
    assert counts[3] == 0 and counts[0] > 0 and counts[1] > 0  # the two complementary ones, never the inverted one


def test_estimator_on_toy_library_weights_the_complementary_models():
    X, y = _toy(2)
    toy = [ModelSpec(f"col{j}", "toy", ColumnScore(j)) for j in range(4)]
    # every model enters selection (prune=1), so it must match the brute force over all four
    es = EnsembleSelection(models=toy, n_init=1, n_iterations=30, n_bags=1, prune=1.0, random_state=0).fit(X, y)
    weights = dict(es.ensemble_)
    assert min(weights["col0@all"], weights["col1@all"]) > 0.3 and "col3@all" not in weights
    assert abs(sum(weights.values()) - 1) < 1e-9
    # its scores are exactly the weighted average of the toy models' outputs
    w = np.array([weights.get(f"col{j}@all", 0.0) for j in range(4)])
    assert np.allclose(es.predict_proba(X)[:, 1], X @ w)
    brute = max(roc_auc_score(y, X @ np.array(c)) for c in itertools.product(range(4), repeat=4) if sum(c))
    assert roc_auc_score(y, X @ w) >= brute - 1e-9
    assert roc_auc_score(y, X @ w) > max(roc_auc_score(y, X[:, j]) for j in range(4)) + 0.05
    assert es.get_params()["n_iterations"] == 30 and clone(es).get_params()["models"] is not None
    # bagged selection (20 bags of half the models): a bag without both complementary models
    # falls back on the weak one, but the inverted one is never chosen
    bagged = dict(EnsembleSelection(models=toy, n_init=1, n_iterations=30, n_bags=20, bag_fraction=0.5).fit(X, y).ensemble_)
    assert "col3@all" not in bagged and bagged["col0@all"] + bagged["col1@all"] > bagged.get("col2@all", 0.0)


def test_library_families_and_paper_grid():
    full = build_library("full", 100)
    assert {s.family for s in full} == set(FAMILIES)
    names = [s.name for s in full]
    assert [n for n in names if n.startswith("logitboost")] == [f"logitboost_{k}" for k in (2, 4, 8, 16, 32, 64)]
    assert len([n for n in names if n.startswith("costtree")]) == 30  # 10, 20, ..., 300
    assert len([n for n in names if n.startswith("logistic")]) == 13  # 1e-8 .. 1e4
    assert [n for n in names if n.startswith("forest")] == [f"forest_250_mf{m}" for m in (5, 10, 20, 40, 80)]
    assert len([n for n in names if n.startswith("tree_")]) == 8
    assert [n for n in names if n.startswith("extratrees")] == [f"extratrees_250_mf{m}" for m in (5, 10, 20, 40, 80)]
    assert [n for n in names if n.startswith("histboost")] == [
        f"histboost_lr{r}_{i}_leaves{k}" for r, i in (("0.1", 100), ("0.05", 200)) for k in (4, 7, 15)]
    assert {s.family for s in build_library("fast", 10)} == set(FAMILIES)
    with pytest.raises(ValueError):
        build_library("huge", 10)  # type: ignore[arg-type]


@pytest.mark.parametrize("library,n_features", [("full", 3), ("full", 100), ("fast", 3), ("fast", 100)])
def test_every_library_model_passes_scikit_learns_parameter_checks(library, n_features):
    """Selection fits with scikit-learn's parameter validation off (``_fit_one``: it was ~8 %
    of a demo training, run again for each of thousands of fits and trees), so every model of
    both libraries, and every estimator nested in it, is checked here once instead."""
    checked = 0
    for spec in build_library(library, n_features):
        nested = [v for v in spec.estimator.get_params(deep=True).values() if isinstance(v, BaseEstimator)]
        for estimator in [spec.estimator, *nested]:
            if hasattr(estimator, "_parameter_constraints"):
                estimator._validate_params()  # raises InvalidParameterError on a bad value
                checked += 1
    assert checked > len(build_library(library, n_features))


@pytest.mark.slow
def test_real_library_with_missing_values_and_groups():
    rng = np.random.default_rng(0)
    n = 240
    y = (rng.random(n) < 0.2).astype(int)
    X = np.column_stack([y + rng.normal(0, 0.6, n), rng.normal(0, 1, n), y * 0.5 + rng.normal(0, 1, n), rng.random(n)])
    X[rng.random(X.shape) < 0.1] = np.nan
    es = EnsembleSelection(feature_groups={"g1": [0, 1], "g2": [2, 3]}, n_folds=3, n_bags=5, n_iterations=20).fit(X, y)
    assert {c.group for c in es.candidates_} == {"g1", "g2", "all"}
    assert {c.family for c in es.candidates_} == set(FAMILIES)
    p = es.predict_proba(X)[:, 1]
    assert np.all((p >= 0) & (p <= 1)) and not np.isnan(p).any()
    assert es.oof_auc_ > 0.8 and roc_auc_score(y, p) > 0.8
    assert set(es.best_scores(X, "family")) == set(FAMILIES)


def test_quantile_bins_keep_order_and_missing_values():
    """Every value's bin is the number of its column's edges at or below it (counted by
    brute force), bins keep the order of values, NaN stays NaN, and continuous columns get
    bins of near-equal size."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(size=1000), rng.exponential(size=1000), rng.integers(0, 3, 1000)]).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:, 2][:5] = np.nan
    edges = quantile_edges(X, 8)
    B = to_bins(X, edges)
    for j in range(X.shape[1]):
        for x, b in zip(X[:, j], B[:, j]):
            assert (np.isnan(x) and np.isnan(b)) or b == sum(e <= x for e in edges[j])
        present = ~np.isnan(X[:, j])
        order = np.argsort(X[present, j])
        assert np.all(np.diff(B[present, j][order]) >= 0)
    assert len(edges[2]) <= 2  # three distinct values: at most two edges
    sizes = np.bincount(B[~np.isnan(B[:, 0]), 0].astype(int))
    assert len(sizes) == 8 and sizes.min() >= 0.8 * sizes.mean()


def test_tree_families_fit_on_bins_others_on_raw_values():
    """With ``tree_bins`` the tree families see bin numbers: a tree's thresholds are then
    bin boundaries; without, raw values; other families always see raw values."""
    rng = np.random.default_rng(1)
    n = 300
    y = (rng.random(n) < 0.2).astype(int)
    X = np.column_stack([(y * 3 + rng.normal(0, 1, n)) * 100, rng.normal(0, 1, n)])
    for bins in (0, 16):
        es = EnsembleSelection(library="fast", n_folds=3, n_bags=2, n_iterations=5, tree_bins=bins).fit(X, y)
        for i, models in es.fold_models_.items():
            family = es.candidates_[i].family
            if family == "tree":
                tree = models[0]
                tree = getattr(tree, "tree_model_", tree)
                used = tree.tree_.threshold[tree.tree_.feature >= 0]
                on_bins = np.all((used >= 0) & (used <= bins) & (np.round(used * 2) == used * 2))
                assert on_bins if bins else not on_bins
        p = es.predict_proba(X)[:, 1]
        assert roc_auc_score(y, p) > 0.8


def test_library_pruning_selects_among_the_best_share_only():
    """prune=0.5 on the toy library: only the two models of best out-of-fold AUC (checked with
    scikit-learn's AUC) enter selection, and the weights are exactly those of selection run on
    a library holding only those two (same bag draws: the bags are drawn among the pool)."""
    X, y = _toy(2)
    toy = [ModelSpec(f"col{j}", "toy", ColumnScore(j)) for j in range(4)]
    top2 = sorted(np.argsort([-roc_auc_score(y, X[:, j]) for j in range(4)])[:2])
    params = dict(n_init=1, n_iterations=30, n_bags=20, bag_fraction=0.5, random_state=0)
    pruned = EnsembleSelection(models=toy, prune=0.5, **params).fit(X, y)
    alone = EnsembleSelection(models=[toy[j] for j in top2], prune=1.0, **params).fit(X, y)
    assert {name for name, _ in pruned.ensemble_} <= {f"col{j}@all" for j in top2}
    assert dict(pruned.ensemble_).keys() == dict(alone.ensemble_).keys()
    assert dict(pruned.ensemble_) == pytest.approx(dict(alone.ensemble_), abs=1e-12)
    # 0.3 of 4 models rounds up to 2
    assert EnsembleSelection(models=toy, prune=0.3, **params).fit(X, y).ensemble_ == pruned.ensemble_
    unpruned = EnsembleSelection(models=toy, prune=1.0, **params).fit(X, y)
    assert "col2@all" in dict(unpruned.ensemble_)  # without pruning, bags fall back on the weak model
    assert EnsembleSelection(models=toy, **params).fit(X, y).ensemble_ == pruned.ensemble_  # default 0.3


@pytest.mark.parametrize("bad", [0.0, -0.5, 1.5])
def test_prune_outside_zero_one_is_refused(bad):
    import argparse

    from spamflow_ensemble.commands import _share
    from spamflow_ensemble.detector import ClassifyParams

    X, y = _toy(2)
    with pytest.raises(ValueError, match="prune"):
        EnsembleSelection(models=[ModelSpec("col0", "toy", ColumnScore(0))], prune=bad).fit(X, y)
    with pytest.raises(ValueError, match="prune"):
        ClassifyParams(prune=bad)
    with pytest.raises(argparse.ArgumentTypeError, match="prune"):
        _share(str(bad))
    with pytest.raises(argparse.ArgumentTypeError, match="prune"):
        _share("half")
    assert _share("0.3") == 0.3


def test_fast_library_trees_are_smoothed():
    """The fast library's forest keeps >= 3 hosts per leaf and weighs each tree's bootstrap to equal
    class totals; its extra trees keep >= 3 hosts per leaf; its boosting samples half the features."""
    rng = np.random.default_rng(0)
    n = 600
    y = (rng.random(n) < 0.1).astype(int)
    X = np.column_stack([y + rng.normal(0, 1, n), rng.normal(0, 1, (n, 8))])
    specs = {s.family: s for s in build_library("fast", X.shape[1], 0)}
    forest = clone(specs["forest"].estimator).fit(X, y)
    for tree in forest.estimators_:
        t = tree.tree_
        leaves = t.children_left == -1
        assert t.n_node_samples[leaves].min() >= 3
        root = t.value[0, 0] * t.weighted_n_node_samples[0]  # class totals at the root (fractions x total)
        assert root[0] == pytest.approx(root[1], rel=1e-9)  # balanced per bootstrap
    extra = clone(specs["extratrees"].estimator).fit(X, y)
    assert min(t.tree_.n_node_samples[t.tree_.children_left == -1].min() for t in extra.estimators_) >= 3
    assert specs["histboost"].estimator.get_params()["max_features"] == 0.5
