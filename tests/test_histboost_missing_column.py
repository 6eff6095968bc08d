"""The fast library's histogram boosting on a training fold where a feature is missing on every
host (a supporter ratio that one host in 42 has can be all-missing in a fold): scikit-learn's
binning fails on such a column, so ``HistBoost`` leaves it out, and its scores equal those of
plain histogram boosting trained without that column."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from spamflow_ensemble.library import hist_boost


@pytest.mark.slow
def test_a_feature_missing_on_every_training_host_is_left_out():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] + 0.5 * X[:, 3] + rng.normal(scale=0.7, size=300) > 0.8).astype(int)
    X[rng.random(300) < 0.1, 2] = np.nan  # a feature with some values missing: kept
    X[:, 4] = np.nan  # missing on every host of this fold
    model = hist_boost(0.05, 100, 7, seed=1, feature_share=0.5).fit(X, y)
    assert list(model.kept_features_) == [0, 1, 2, 3]
    test = rng.normal(size=(50, 5))
    test[:, 4] = rng.normal(size=50)  # values at scoring time do not matter: it was never learnt
    plain = HistGradientBoostingClassifier(learning_rate=0.05, max_iter=100, max_leaf_nodes=7, min_samples_leaf=40,
                                           l2_regularization=1.0, max_features=0.5, early_stopping=False,
                                           random_state=1).fit(X[:, :4], y)
    assert np.abs(model.predict_proba(test) - plain.predict_proba(test[:, :4])).max() < 1e-12
    assert np.array_equal(model.predict(test), plain.predict(test[:, :4]))
