"""The array form of a fitted ensemble (compiled.py) against scikit-learn's own predictions,
model by model: every family of the library, on raw values and on bins, with missing values
in training and in scoring, a missing value only seen at scoring time, a constant column and
a fold without spam."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from sklearn.datasets import make_classification

from spamflow_ensemble.binning import bins_for
from spamflow_ensemble.commands import _tree_bins
from spamflow_ensemble.detector import ClassifyParams
from spamflow_ensemble.library import FAMILIES
from spamflow_ensemble.selection import EnsembleSelection


def _data():
    X, y = make_classification(n_samples=700, n_features=10, n_informative=5, weights=[0.85], random_state=3)
    rng = np.random.default_rng(0)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:, 3] *= 1e4  # heavy-tailed, for the signed log
    X[:, 7] = 2.5  # constant in training
    train, test = X[:500], X[500:].copy()
    test[:, 8] = np.nan  # missing at scoring time everywhere
    return train, y[:500], test


def _spec(name: str, n_features: int):
    from spamflow_ensemble.library import build_library

    return next(s.estimator for s in build_library("fast", n_features) if s.name == name)


def _kind(compiled) -> str:
    return "sklearn" if compiled.other else "linear" if compiled.linear.columns else \
        "trees" if compiled.trees else "bayes" if compiled.bayes else "stumps"


@pytest.mark.slow
@pytest.mark.parametrize("bins", [0, 8])
def test_every_kept_model_scores_as_scikit_learn_does(bins):
    X, y, Xt = _data()
    es = EnsembleSelection(library="fast", feature_groups={"a": list(range(5)), "b": list(range(5, 10))},
                           n_folds=3, n_bags=2, n_iterations=5, tree_bins=bins).fit(X, y)
    kinds = {}
    for i in es.fold_models_:  # the ensemble's models plus the best of each family and group
        compiled = es.compiled({i: 1.0})
        kinds.setdefault(es.candidates_[i].family, set()).add(_kind(compiled))
        np.testing.assert_allclose(es.scores(Xt, compiled), es.candidate_scores(Xt, i), rtol=0, atol=1e-12)
    assert set(kinds) == set(FAMILIES)
    assert all(kinds[f] == {"trees"} for f in ("tree", "costtree", "forest", "extratrees"))
    assert kinds["logistic"] == {"linear"} and kinds["logitboost"] == {"stumps"}
    # every family of the library is compiled but histogram boosting, whose own predictor is arrays already
    assert kinds["histboost"] == {"sklearn"}
    assert "sklearn" not in set().union(*(k for f, k in kinds.items() if f != "histboost"))
    by_hand = sum(w * es.candidate_scores(Xt, int(i)) for i, w in enumerate(es.weights_) if w > 0)
    np.testing.assert_allclose(es.predict_proba(Xt)[:, 1], np.clip(by_hand, 0, 1), rtol=0, atol=1e-12)


def test_naive_bayes_gaussian_is_linear_discretised_is_tables():
    X, y, Xt = _data()
    es = EnsembleSelection(library="fast", n_folds=3, n_bags=1, n_iterations=3).fit(X, y)
    i = next(i for i in es.fold_models_ if es.candidates_[i].family == "naivebayes")
    Xt = np.vstack([Xt, X[:50]])  # also values exactly on the training bin edges
    # the expanded square (x - θ)²/σ² rounds differently from scikit-learn's: ~1e-10; the bin
    # tables sum the same log-probabilities in another order: 1e-12
    for name, kind, tolerance in (("naivebayes_gaussian", "linear", 1e-9), ("naivebayes_discretised", "bayes", 1e-12)):
        es.fold_models_[i] = [_spec(name, X.shape[1]).fit(X[k::2], y[k::2]) for k in range(2)]
        compiled = es.compiled({i: 1.0})
        assert _kind(compiled) == kind
        np.testing.assert_allclose(es.scores(Xt, compiled), es.candidate_scores(Xt, i), rtol=0, atol=tolerance)


def test_models_fitted_without_spam_score_as_scikit_learn_does():
    """A tree, bagged trees or forest fitted on honest hosts only says P(spam) = 0, in both paths."""
    X, y, Xt = _data()
    es = EnsembleSelection(library="fast", n_folds=3, n_bags=1, n_iterations=3, tree_bins=0).fit(X, y)
    honest = y == 0
    checked = set()
    for i, models in es.fold_models_.items():
        cand = es.candidates_[i]
        if cand.family in ("forest", "tree", "costtree"):
            models[0] = _spec(cand.name.split("@")[0], X.shape[1]).fit(X[honest], y[honest])
            got = es.scores(Xt, es.compiled({i: 1.0}))
            np.testing.assert_allclose(got, es.candidate_scores(Xt, i), rtol=0, atol=1e-12)
            checked.add(cand.family)
    assert checked == {"forest", "tree", "costtree"}


def test_tree_bins_refuses_counts_below_two_but_zero():
    assert bins_for("auto", 100, 10) == 0 and bins_for("auto", 10_000, 300) == 32
    assert bins_for(0, 1, 1) == 0 and bins_for(2, 1, 1) == 2
    for bad in (1, -1, "x", 2.5):
        with pytest.raises(ValueError, match="tree_bins"):
            bins_for(bad, 1, 1)
        with pytest.raises(ValueError, match="tree_bins"):
            ClassifyParams(tree_bins=bad)
    for text in ("1", "-3", "many"):
        with pytest.raises(argparse.ArgumentTypeError, match="tree_bins"):
            _tree_bins(text)
    assert _tree_bins("auto") == "auto" and _tree_bins("16") == 16 and _tree_bins("0") == 0


@pytest.mark.parametrize("stages", [2, 16])
def test_boosting_prefix_is_the_shorter_model(stages):
    """The full grid's shorter boosting models are cut from the 64-iteration one: the cut must
    predict exactly what fitting the shorter model gives."""
    from spamflow_ensemble.library import boosting_prefix, build_library, logitboost

    X, y, Xt = _data()
    longest = logitboost(64, 0).fit(X, y)
    cut = boosting_prefix(longest, stages)
    fresh = logitboost(stages, 0).fit(X, y)
    # same trees, so the same scores up to the order of floating-point sums (stated tolerance 1e-12)
    np.testing.assert_allclose(cut.predict_proba(Xt), fresh.predict_proba(Xt), rtol=0, atol=1e-12)
    assert cut.get_params()["baggingclassifier__estimator__n_estimators"] == stages
    np.testing.assert_allclose(longest.predict_proba(Xt), logitboost(64, 0).fit(X, y).predict_proba(Xt),
                               rtol=0, atol=1e-12)
    full = {s.name: s for s in build_library("full", 10)}
    assert full[f"logitboost_{stages}"].prefix_of == "logitboost_64" and full["logitboost_64"].prefix_of is None


def test_fit_cuts_boosting_prefixes_instead_of_fitting_them():
    from spamflow_ensemble.library import build_library

    X, y, Xt = _data()
    specs = [s for s in build_library("full", 10) if s.family == "logitboost" and s.name in
             ("logitboost_4", "logitboost_64")] + [s for s in build_library("fast", 10) if s.family == "tree"]
    es = EnsembleSelection(models=specs, n_folds=3, n_bags=1, n_iterations=3).fit(X, y)
    i = next(i for i, c in enumerate(es.candidates_) if c.name == "logitboost_4@all")
    plain = EnsembleSelection(models=[s.__class__(s.name, s.family, s.estimator) for s in specs],
                              n_folds=3, n_bags=1, n_iterations=3).fit(X, y)
    # fits in threads may sum in another order than a second fit: equal to 1e-12, not bit for bit
    np.testing.assert_allclose(es.model_auc_, plain.model_auc_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(es.weights_, plain.weights_, rtol=0, atol=1e-12)
    if i in es.fold_models_:
        np.testing.assert_allclose(es.candidate_scores(Xt, i), plain.candidate_scores(Xt, i), rtol=0, atol=1e-12)


def test_scoring_in_blocks_equals_scoring_at_once(monkeypatch):
    import spamflow_ensemble.selection as selection

    X, y, Xt = _data()
    es = EnsembleSelection(library="fast", n_folds=3, n_bags=2, n_iterations=5, tree_bins=8).fit(X, y)
    whole = es.scores(Xt)
    monkeypatch.setattr(selection, "SCORE_BLOCK", 7)  # 200 hosts in 29 blocks, the last one short
    # BLAS sums a matrix product in an order that depends on its shape (3 of 200 scores one ulp
    # apart with OpenBLAS 0.3.31): equal to 1e-12, not bit for bit
    np.testing.assert_allclose(es.scores(Xt), whole, rtol=0, atol=1e-12)
