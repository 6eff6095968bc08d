"""Where the classifier's fit time went, and that cutting it changed no result: BLAS on one
thread inside each library fit, and grouped folds without scikit-learn's per-group loop.
Results are checked against scikit-learn's own classes run the ordinary way."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import StratifiedGroupKFold
from threadpoolctl import threadpool_info

from spamflow_ensemble.fastauc import auc
from spamflow_ensemble.folds import FastStratifiedGroupKFold
from spamflow_ensemble.library import ModelSpec, build_library
from spamflow_ensemble.selection import EnsembleSelection, make_folds, spam_probability


def _grouped(seed: int, n: int = 600, spam: float = 0.08, mean_group: float = 1.3):
    """Labels and groups shaped like hosts in registered domains: mostly singletons, some
    large domains, spam clustered in domains (so class shares differ between groups)."""
    rng = np.random.default_rng(seed)
    sizes = 1 + rng.geometric(1.0 / mean_group, size=n) - 1
    groups = np.repeat(np.arange(len(sizes)), sizes)[:n]
    spammy = rng.random(groups.max() + 1) < spam * 2
    y = ((rng.random(n) < 0.7) & spammy[groups]).astype(np.int64)
    y[:2] = 1  # at least two spam hosts
    return y, rng.permutation(groups)


def _same_folds(a, b) -> bool:
    return len(a) == len(b) and all(np.array_equal(ta, tb) and np.array_equal(sa, sb)
                                    for (ta, sa), (tb, sb) in zip(a, b))


def test_fast_grouped_folds_equal_scikit_learns():
    cases = 0
    for seed in range(12):
        for k in (2, 3, 5):
            y, groups = _grouped(seed, n=300 + 50 * seed, mean_group=1.0 + 0.4 * (seed % 4))
            X = np.zeros((len(y), 1))
            ref = list(StratifiedGroupKFold(k, shuffle=True, random_state=seed).split(X, y, groups))
            fast = list(FastStratifiedGroupKFold(k, shuffle=True, random_state=seed).split(X, y, groups))
            assert _same_folds(ref, fast), (seed, k)
            cases += 1
    # three classes and no shuffle take the same path through the class
    rng = np.random.default_rng(5)
    y3, g3 = rng.integers(0, 3, 400), rng.integers(0, 150, 400)
    X3 = np.zeros((400, 1))
    assert _same_folds(list(StratifiedGroupKFold(4).split(X3, y3, g3)),
                       list(FastStratifiedGroupKFold(4).split(X3, y3, g3)))
    assert cases == 36


def test_make_folds_gives_scikit_learns_grouped_folds():
    """make_folds (grouped) = StratifiedGroupKFold's folds on a UK2007-sized split (3,200 hosts
    in ~2,500 domains); how much faster is measured by benchmarks/bench_classify.py --uk2007."""
    y, groups = _grouped(7, n=3200, mean_group=1.3)
    ref = list(StratifiedGroupKFold(5, shuffle=True, random_state=3).split(np.zeros((len(y), 1)), y, groups))
    assert _same_folds(make_folds(y, groups, 5, 3), ref)


class BlasThreads(ClassifierMixin, BaseEstimator):
    """Records how many BLAS threads it was fitted with; scores the first column."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.blas_threads_ = [int(pool["num_threads"]) for pool in threadpool_info() if pool["user_api"] == "blas"]
        return self

    def predict_proba(self, X):
        p = 1.0 / (1.0 + np.exp(-np.nan_to_num(np.asarray(X)[:, 0])))
        return np.column_stack([1 - p, p])


class OpenmpThreads(ClassifierMixin, BaseEstimator):
    """Records the OpenMP thread limits it was fitted and asked to predict with."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.fit_threads_ = _openmp_threads()
        self.predict_threads_: list[int] = []
        return self

    def predict_proba(self, X):
        self.predict_threads_ += _openmp_threads()
        p = 1.0 / (1.0 + np.exp(-np.nan_to_num(np.asarray(X)[:, 0])))
        return np.column_stack([1 - p, p])


def _openmp_threads() -> list[int]:
    return [int(pool["num_threads"]) for pool in threadpool_info() if pool["user_api"] == "openmp"]


def test_library_fits_and_predictions_run_openmp_on_one_thread():
    """Histogram boosting fits and predicts with OpenMP threads; on the shared machine they
    made its fits 18x and its predictions 28x dearer.  Library fits and every prediction see
    one OpenMP thread (on a one-core machine the default is one too, so this shows nothing there)."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 3)), (rng.random(200) < 0.2).astype(int)
    es = EnsembleSelection(models=[ModelSpec("probe", "probe", OpenmpThreads())], n_folds=3, n_bags=1).fit(X, y)
    es.predict_proba(X)
    assert _openmp_threads(), "scikit-learn loads an OpenMP runtime"
    models = es.fold_models_[0]
    assert {t for m in models for t in m.fit_threads_} == {1}
    assert {t for m in models for t in m.predict_threads_} == {1}


def test_library_fits_run_blas_on_one_thread():
    """L-BFGS makes thousands of tiny BLAS calls; OpenBLAS waking its threads for each made a
    logistic fit 5x slower on a busy machine.  Every library fit sees one BLAS thread."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 3)), (rng.random(200) < 0.2).astype(int)
    es = EnsembleSelection(models=[ModelSpec("probe", "probe", BlasThreads())], n_folds=3, n_bags=1).fit(X, y)
    threads = [t for model in es.fold_models_[0] for t in model.blas_threads_]
    assert threads and set(threads) == {1}


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::sklearn.exceptions.ConvergenceWarning")
def test_library_scores_equal_scikit_learn_fits_made_the_ordinary_way():
    """Each candidate's out-of-fold AUC, and the held-out predictions of the fold models it
    keeps, are what its scikit-learn estimator gives when fitted on scikit-learn's grouped
    folds without any thread limit (within 1e-12): the speed-ups change no fitted model."""
    rng = np.random.default_rng(3)
    y, groups = _grouped(3, n=500, mean_group=1.5)
    X = rng.normal(size=(len(y), 6)) + y[:, None] * rng.normal(0.8, 0.3, 6)
    X[rng.random(X.shape) < 0.05] = np.nan
    specs = [s for s in build_library("fast", 6, 0) if s.family in ("logistic", "naivebayes", "tree")]
    es = EnsembleSelection(models=specs, n_bags=1, tree_bins=0).fit(X, y, groups=groups)
    folds = list(StratifiedGroupKFold(5, shuffle=True, random_state=0).split(X, y, groups))
    assert es.fold_models_
    for i, spec in enumerate(specs):
        expected = np.zeros(len(y))
        for train, test in folds:
            expected[test] = spam_probability(clone(spec.estimator).fit(X[train], y[train]), X[test])
        assert abs(es.model_auc_[i] - auc(y, expected)) <= 1e-12, spec.name
        for f, (_, test) in enumerate(folds if i in es.fold_models_ else []):
            got = spam_probability(es.fold_models_[i][f], X[test])
            assert np.allclose(got, expected[test], rtol=0, atol=1e-12), spec.name
