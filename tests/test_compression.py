"""Model compression: MUNGE's synthetic hosts checked against a brute-force nearest
neighbour, and the mimic against the ensemble it compresses (ranking, AUC, reload)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.datasets import make_classification
from sklearn.metrics import roc_auc_score

from spamflow_ensemble.compression import munge
from spamflow_ensemble.detector import ClassifyParams
from spamflow_ensemble.model import train
from spamflow_ensemble.persist import load_model, save_model
from spamflow_ensemble.selection import EnsembleSelection
from spamflow_ensemble.tables import FeatureTable


def _nearest_by_brute_force(X):
    filled = np.where(np.isnan(X), np.nanmedian(X, axis=0), X)
    unit = (filled - filled.mean(axis=0)) / filled.std(axis=0)
    d = ((unit[:, None, :] - unit[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(d, np.inf)
    return d.argmin(axis=1)


def test_munge_moves_hosts_towards_their_nearest_neighbour():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4)) * [1, 10, 100, 0.1]
    X[rng.random(X.shape) < 0.1] = np.nan
    nn = _nearest_by_brute_force(X)
    # p = 0: copies; p = 1 with no spread (s = inf): exactly the neighbour
    assert np.array_equal(munge(X, 2, np.random.default_rng(1), p=0.0), np.vstack([X, X]), equal_nan=True)
    assert np.array_equal(munge(X, 1, np.random.default_rng(1), p=1.0, s=np.inf), X[nn], equal_nan=True)
    # p = 0.5, s = 10: each value is the host's own, or near the neighbour's within 6 spreads
    out = munge(X, 3, np.random.default_rng(2))
    assert out.shape == (180, 4)
    own = np.vstack([X] * 3)
    near = np.vstack([X[nn]] * 3)
    spread = np.abs(own - near) / 10
    kept = (out == own) | (np.isnan(out) & np.isnan(own))
    moved = np.where(np.isnan(own) | np.isnan(near), (out == near) | (np.isnan(out) & np.isnan(near)),
                     np.abs(out - near) <= 6 * spread + 1e-12)
    assert np.all(kept | moved)
    assert 0.35 < (~kept).mean() < 0.65  # about half the attributes move
    assert np.array_equal(out, munge(X, 3, np.random.default_rng(2)), equal_nan=True)


@pytest.mark.slow
def test_mimic_ranks_like_the_ensemble_and_reloads(tmp_path):
    X, y = make_classification(n_samples=900, n_features=12, n_informative=6, weights=[0.85], random_state=5)
    X[np.random.default_rng(0).random(X.shape) < 0.05] = np.nan
    train_rows, test_rows = slice(0, 600), slice(600, None)
    es = EnsembleSelection(n_folds=3, n_bags=4, n_iterations=15, compress=4).fit(X[train_rows], y[train_rows])
    assert es.mimic_ is not None and es.mimic_hosts_ == 4 * 600
    exact = es.scores(X[test_rows])
    fast = es.predict_proba(X[test_rows])[:, 1]
    assert not np.allclose(fast, exact)  # the mimic scores, not the ensemble
    assert spearmanr(fast, exact)[0] > 0.9
    assert roc_auc_score(y[test_rows], fast) > roc_auc_score(y[test_rows], exact) - 0.05
    table = FeatureTable(["s"] * 600, [f"h{i}.org" for i in range(600)], X[train_rows],
                         [f"f{j}" for j in range(12)], {"all": list(range(12))})
    bundle = train(table, y[train_rows], None, EnsembleSelection(n_folds=3, n_bags=2, n_iterations=5, compress=1))
    again = load_model(save_model(tmp_path / "m.skops", bundle))
    np.testing.assert_allclose(again["estimator"].predict_proba(X[test_rows]),  # BLAS sums: 1e-12
                               bundle["estimator"].predict_proba(X[test_rows]), rtol=0, atol=1e-12)


@pytest.mark.slow
def test_negative_compression_is_refused_everywhere(tmp_path):
    X, y = make_classification(n_samples=120, n_features=4, random_state=1)
    es = EnsembleSelection(n_folds=2, n_bags=1, n_iterations=2, compress=-1)
    with pytest.raises(ValueError, match="compress must be 0"):
        es.fit(X, y)
    assert not hasattr(es, "fold_models_")  # refused before any model is fitted
    with pytest.raises(ValueError, match="compress"):
        ClassifyParams(compress=-1)
    for flag in (["train", "--compress", "-2"], ["score", "-m", "m.skops", "-o", "s.parquet", "--top-features", "-1"]):
        out = subprocess.run([sys.executable, "-m", "spamflow_workflows", *flag], capture_output=True, text=True,
                             cwd=tmp_path, timeout=120)
        assert out.returncode == 2 and "expected a whole number >= 0" in out.stderr, out.stderr
