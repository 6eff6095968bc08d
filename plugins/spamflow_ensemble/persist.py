"""Saving and loading a trained classifier with skops, which never unpickles arbitrary code.

A model file holds the fitted :class:`EnsembleSelection`, the feature names and groups it was
trained on, the threshold and a summary of the training data.  Loading refuses a file that
needs any type outside :data:`TRUSTED` (skops lists the types a file would construct before
constructing them), or that is not a spamflow model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import skops.io as sio

from spamflow.atomic import atomic_path
from spamflow.errors import BadInputError

FORMAT = "spamflow-ensemble-model"
FORMAT_VERSION = 1
TRUSTED = frozenset({
    "numpy.dtype",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "sklearn.tree._tree.Tree",
    "spamflow_ensemble.library.signed_log",
    "spamflow_ensemble.selection.Candidate",
    "spamflow_ensemble.selection.EnsembleSelection",
    "spamflow_ensemble.smoothing.LaplaceTree",
})
"""Types a spamflow model needs beyond skops' own default-trusted scikit-learn and numpy types."""


def save_model(path: str | Path, model: dict[str, Any]) -> Path:
    """Write ``model`` (a dict with at least ``estimator``, ``features``) atomically."""
    path = Path(path)
    with atomic_path(path) as tmp:
        sio.dump({"format": FORMAT, "format_version": FORMAT_VERSION, **model}, tmp)
    return path


def load_model(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise BadInputError(f"model file {path} does not exist")
    try:
        untrusted = set(sio.get_untrusted_types(file=path))
    except Exception as exc:  # not a zip / not skops
        raise BadInputError(f"{path}: not a skops model file ({exc})") from exc
    unexpected = sorted(untrusted - TRUSTED)
    if unexpected:
        raise BadInputError(f"{path}: refusing to load a model that needs types spamflow did not write: "
                            f"{unexpected}")
    model = sio.load(path, trusted=sorted(untrusted))
    if not isinstance(model, dict) or model.get("format") != FORMAT:
        raise BadInputError(f"{path}: not a spamflow ensemble model (format {FORMAT!r})")
    if model.get("format_version") != FORMAT_VERSION:
        raise BadInputError(f"{path}: model format version {model.get('format_version')}, "
                            f"this spamflow reads {FORMAT_VERSION}; retrain with `spamflow train`")
    return model
