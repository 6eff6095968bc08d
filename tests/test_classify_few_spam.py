"""A labelled set with a handful of spam hosts: a bag of bagged LogitBoost may draw no spam
host at all, which scikit-learn's gradient boosting refuses to fit.  The classifier fits such
a bag as the one class it holds (Weka's LogitBoost does the same), so training, saving,
loading and scoring work; a bag with both classes is fitted exactly as before."""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import BaggingClassifier, GradientBoostingClassifier

from spamflow_ensemble.library import BootstrapBoost, boosting_prefix, logitboost
from spamflow_ensemble.model import train
from spamflow_ensemble.persist import load_model, save_model
from spamflow_ensemble.selection import EnsembleSelection
from spamflow_ensemble.tables import FeatureTable


def _few_spam(n: int = 120, spam: tuple[int, ...] = (3, 50, 90), seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = np.zeros(n, dtype=int)
    y[list(spam)] = 1
    X[y == 1, 0] += 2.0
    return X, y


def test_a_one_class_bootstrap_predicts_its_class_and_two_classes_fit_as_before():
    X, y = _few_spam()
    weights = (y == 0).astype(float)  # a bootstrap that drew no spam host
    member = BootstrapBoost(n_estimators=8, max_depth=1, learning_rate=1.0, random_state=0)
    member.fit(X, y, sample_weight=weights)
    assert list(member.classes_) == [0, 1]
    np.testing.assert_allclose(member.predict_proba(X), np.column_stack([np.ones(len(y)), np.zeros(len(y))]),
                               rtol=0, atol=1e-12)
    both = BootstrapBoost(n_estimators=8, max_depth=1, learning_rate=1.0, random_state=0).fit(X, y)
    plain = GradientBoostingClassifier(n_estimators=8, max_depth=1, learning_rate=1.0, random_state=0).fit(X, y)
    np.testing.assert_allclose(both.predict_proba(X), plain.predict_proba(X), rtol=0, atol=1e-12)


def test_bagged_logitboost_fits_when_a_bag_draws_no_spam_and_prefixes_are_cut_from_it():
    X, y = _few_spam(spam=(7,))  # one spam host: most of 10 bootstraps miss it
    model = logitboost(8, seed=0).fit(X, y)
    bagging = model.steps[-1][1]
    assert isinstance(bagging, BaggingClassifier)
    kinds = [m.only_class_ for m in bagging.estimators_]
    assert 0 in kinds and None in kinds, kinds  # some bags saw no spam, some saw it
    p = model.predict_proba(X)[:, 1]
    assert p[7] > np.median(p)  # the spam host still scores above the typical host
    # the full library cuts 2, 4, ... iterations from the longest model: also from one-class bags
    short = boosting_prefix(model, 2)
    assert short.predict_proba(X).shape == (len(y), 2)


def test_training_saving_and_scoring_with_three_spam_hosts(tmp_path):
    X, y = _few_spam()
    n = len(y)
    table = FeatureTable(["s"] * n, [f"h{i}.org" for i in range(n)], X, [f"a.f{j}" for j in range(5)],
                         {"a": list(range(5))})
    es = EnsembleSelection(n_folds=3, n_bags=2, random_state=0)
    bundle = train(table, y, None, es)
    again = load_model(save_model(tmp_path / "m.skops", bundle))["estimator"]
    np.testing.assert_allclose(again.predict_proba(X), bundle["estimator"].predict_proba(X), rtol=0, atol=1e-12)
