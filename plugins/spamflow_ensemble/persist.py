"""Saving and loading a trained classifier with skops, which never unpickles arbitrary code.

A model file holds what scoring needs: the ensemble's chosen models with their weights
(:meth:`EnsembleSelection.for_scoring`; not every library candidate), the feature names and
groups it was trained on, the threshold and a summary of the training data, in a
deflate-compressed zip (skops' JSON schema compresses ~10x).  Loading refuses a file that
needs any type outside :data:`TRUSTED` (skops audits the types a file would construct before
constructing any), or that is not a spamflow model.  skops trusts no tree by default because
scikit-learn follows a tree's node indices without bounds checks (a forged index reads out of
bounds, or crashes); every tree of a loaded model is therefore checked (:func:`check_trees`).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import skops.io as sio
from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor
from sklearn.tree._tree import Tree
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
    "spamflow_ensemble.library.BootstrapBoost",
    "spamflow_ensemble.library.HistBoost",
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
    problem = check_trees(model)
    if problem:
        raise BadInputError(f"{path}: refusing a forged or damaged model: {problem}")
    return model


def _tree_problem(tree: Tree, width: int | None) -> str | None:
    """Why scikit-learn could read out of bounds routing a row through ``tree``, or None.
    A fitted tree numbers every child after its parent (so routing ends)."""
    n = tree.node_count
    if not 0 < n <= tree.capacity:  # checked first: the node arrays are views of node_count rows
        return f"node_count {n} outside 1..{tree.capacity}"
    left, right, feature = tree.children_left, tree.children_right, tree.feature
    node = np.arange(n)
    leaf = left == -1
    if np.any(right[leaf] != -1):
        return "a node with a right child only"
    inner = ~leaf
    if np.any((left[inner] <= node[inner]) | (right[inner] <= node[inner]) | (left[inner] >= n) | (right[inner] >= n)):
        return "a child index out of order or range"
    if np.any((feature[inner] < 0) | (feature[inner] >= tree.n_features)):
        return "a split on a feature index out of range"
    if width is not None and tree.n_features != width:
        return f"a tree of {tree.n_features} features in an estimator of {width}"
    return None


def _predictor_problem(predictor: TreePredictor, width: int | None) -> str | None:
    """The same for a histogram gradient boosting tree (the compression mimic's)."""
    nodes = predictor.nodes
    n = len(nodes)
    node = np.arange(n)
    inner = nodes["is_leaf"] == 0
    left, right = nodes["left"].astype(np.int64), nodes["right"].astype(np.int64)
    if n == 0 or np.any((left[inner] <= node[inner]) | (right[inner] <= node[inner]) | (left[inner] >= n)
                        | (right[inner] >= n)):
        return "a child index out of order or range"
    if np.any(nodes["is_categorical"] != 0):
        return "a categorical split (spamflow fits none)"
    feature = nodes["feature_idx"][inner]
    if np.any(feature < 0) or (width is not None and np.any(feature >= width)):
        return "a split on a feature index out of range"
    return None


def check_trees(obj: Any, where: str = "model", width: int | None = None, seen: set[int] | None = None) -> str | None:
    """The first tree under ``obj`` (walking containers and scikit-learn/spamflow objects) that
    scikit-learn could not route safely, as "where: why"; None if every tree is sound.
    ``width``: the feature count of the estimator that holds the tree."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return None
    seen.add(id(obj))
    if isinstance(obj, Tree):
        problem = _tree_problem(obj, width)
        return problem and f"{where}: {problem}"
    if isinstance(obj, TreePredictor):
        problem = _predictor_problem(obj, width)
        return problem and f"{where}: {problem}"
    if isinstance(obj, dict):
        items: list[tuple[str, Any]] = [(f"{where}[{k!r}]", v) for k, v in obj.items()]
    elif isinstance(obj, (list, tuple)):
        items = [(f"{where}[{i}]", v) for i, v in enumerate(obj)]
    elif isinstance(obj, np.ndarray) and obj.dtype == object:
        items = [(f"{where}[{i}]", v) for i, v in enumerate(obj.ravel())]
    elif type(obj).__module__.startswith(("sklearn.", "spamflow_ensemble.")) and hasattr(obj, "__dict__"):
        width = getattr(obj, "n_features_in_", width)
        items = [(f"{where}.{k}", v) for k, v in vars(obj).items()]
    else:
        return None
    for place, value in items:
        problem = check_trees(value, place, width, seen)
        if problem:
            return problem
    return None
