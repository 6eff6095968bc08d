"""Saving and loading a trained classifier with skops, which never unpickles arbitrary code.

A model file holds what scoring needs: the ensemble's chosen models with their weights
(:meth:`EnsembleSelection.for_scoring`; not every library candidate), the feature names and
groups it was trained on, the threshold and a summary of the training data, in a
deflate-compressed zip (skops' JSON schema compresses ~10x).  Loading refuses a file that
needs any type outside :data:`TRUSTED` (skops audits the types a file would construct before
constructing any), or that is not a spamflow model.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import skops.io as sio
from skops.io.exceptions import UntrustedTypesFoundException

from spamflow.atomic import atomic_path
from spamflow.errors import BadInputError

FORMAT = "spamflow-ensemble-model"
FORMAT_VERSION = 2
"""2: the chosen models only, compressed.  1 (every kept candidate, stored): still read."""
READABLE_VERSIONS = frozenset({1, 2})
COMPRESSLEVEL = 6
"""zlib's default (demo model: level 9 is 4 % smaller and slower to write, level 1 17 % larger)."""
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
    """Write ``model`` (a dict with at least ``estimator``, ``features``) atomically, its
    estimator reduced to what scoring needs."""
    path = Path(path)
    slim = {"format": FORMAT, "format_version": FORMAT_VERSION, **model,
            "estimator": model["estimator"].for_scoring()}
    with atomic_path(path) as tmp:
        sio.dump(slim, tmp, compression=zipfile.ZIP_DEFLATED, compresslevel=COMPRESSLEVEL)
    return path


def load_model(path: str | Path) -> dict[str, Any]:
    """The model saved at ``path``; :class:`BadInputError` for a file that is not one or that
    needs a type outside :data:`TRUSTED` (checked before anything is constructed)."""
    path = Path(path)
    if not path.is_file():
        raise BadInputError(f"model file {path} does not exist")
    try:
        model = sio.load(path, trusted=sorted(TRUSTED))  # audits every type, then constructs
    except UntrustedTypesFoundException as exc:
        found = exc.args[0] if exc.args and isinstance(exc.args[0], (set, frozenset, list)) else [str(exc)]
        raise BadInputError(f"{path}: refusing to load a model that needs types spamflow did not write: "
                            f"{sorted(found)}") from exc
    except Exception as exc:  # not a zip, no skops schema, a damaged member
        raise BadInputError(f"{path}: not a skops model file ({type(exc).__name__}: {exc})") from exc
    if not isinstance(model, dict) or model.get("format") != FORMAT:
        raise BadInputError(f"{path}: not a spamflow ensemble model (format {FORMAT!r})")
    if model.get("format_version") not in READABLE_VERSIONS:
        raise BadInputError(f"{path}: model format version {model.get('format_version')}, "
                            f"this spamflow reads {sorted(READABLE_VERSIONS)}; retrain with `spamflow train`")
    return model
