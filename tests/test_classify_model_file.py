"""The saved model file holds what scoring needs and nothing else: the chosen models with
their weights (not every kept library candidate), deflate-compressed; it scores exactly as
the ensemble in memory did, and it still refuses pickles and types spamflow does not write."""

from __future__ import annotations

import io
import json
import pickle
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import skops.io as sio
from sklearn.tree._tree import Tree

from spamflow.errors import BadInputError
from spamflow_ensemble.compiled import compile_ensemble
from spamflow_ensemble.model import train
from spamflow_ensemble.persist import check_trees, load_model, save_model
from spamflow_ensemble.selection import BINNED_FAMILIES, EnsembleSelection
from spamflow_ensemble.tables import FeatureTable


def _table(n: int = 240, seed: int = 0) -> tuple[FeatureTable, np.ndarray, np.ndarray]:
    """Two feature groups, one informative column in each, missing values; and held-out rows."""
    rng = np.random.default_rng(seed)
    y = (rng.random(2 * n) < 0.25).astype(int)
    X = np.column_stack([y + rng.normal(0, 0.8, 2 * n), rng.normal(0, 1, 2 * n),
                         0.7 * y + rng.normal(0, 1, 2 * n), rng.exponential(1, 2 * n)])
    X[rng.random(X.shape) < 0.08] = np.nan
    table = FeatureTable(["s"] * n, [f"h{i}.org" for i in range(n)], X[:n], ["a.x", "a.y", "b.z", "b.w"],
                         {"a": [0, 1], "b": [2, 3]})
    return table, y[:n], X[n:]


@pytest.fixture(scope="module")
def bundle() -> dict:
    table, y, _ = _table()
    return train(table, y, None, EnsembleSelection(n_folds=3, n_bags=4, n_iterations=10, random_state=1))


def _trees_in(models: list) -> int:
    """Fitted sklearn Tree structures under ``models`` (counted by walking the objects)."""
    seen: set[int] = set()

    def walk(obj: object) -> int:
        if id(obj) in seen:
            return 0
        seen.add(id(obj))
        if isinstance(obj, Tree):
            return 1
        if isinstance(obj, (list, tuple)):
            return sum(walk(o) for o in obj)
        if isinstance(obj, np.ndarray) and obj.dtype == object:
            return sum(walk(o) for o in obj.ravel())
        if hasattr(obj, "__dict__") and type(obj).__module__.startswith(("sklearn", "spamflow")):
            return sum(walk(v) for v in vars(obj).values())
        return 0
    return walk(models)


def _trees_in_file(path: Path) -> int:
    schema = json.loads(zipfile.ZipFile(path).read("schema.json"))

    def walk(node: object) -> int:
        if isinstance(node, dict):
            here = node.get("__class__") == "Tree" and node.get("__module__") == "sklearn.tree._tree"
            return int(here) + sum(walk(v) for v in node.values())
        if isinstance(node, list):
            return sum(walk(v) for v in node)
        return 0
    return walk(schema)


@pytest.mark.slow
def test_file_holds_only_the_chosen_models_compressed(bundle, tmp_path):
    es = bundle["estimator"]
    chosen = [i for i, w in enumerate(es.weights_) if w > 0]
    # the trained ensemble keeps more: the best model of each family and group, for evaluation
    assert len(es.fold_models_) > len(chosen) and len(es.candidates_) > len(chosen)
    path = save_model(tmp_path / "m.skops", bundle)
    with zipfile.ZipFile(path) as z:
        assert {m.compress_type for m in z.infolist()} == {zipfile.ZIP_DEFLATED}
    # the file's trees are exactly the chosen candidates' (counted in memory, independently)
    assert _trees_in_file(path) == _trees_in([es.fold_models_[i] for i in chosen])
    again = load_model(path)["estimator"]
    assert [c.name for c in again.candidates_] == [es.candidates_[i].name for i in chosen]
    assert sorted(again.fold_models_) == list(range(len(chosen)))
    assert again.weights_.tolist() == es.weights_[chosen].tolist()  # copied, not computed
    assert again.ensemble_ == es.ensemble_
    with pytest.raises(ValueError, match="keeps only the chosen models"):
        again.best_scores(np.zeros((2, 4)), "family")
    assert set(es.best_scores(np.zeros((2, 4)), "family"))  # the trained ensemble still has them


@pytest.mark.slow
def test_saved_scores_equal_the_ensemble_in_memory(bundle, tmp_path):
    _, _, X_new = _table()
    es = bundle["estimator"]
    again = load_model(save_model(tmp_path / "m.skops", bundle))["estimator"]
    # same arithmetic in the same order; compared to 1e-12 all the same, as every BLAS result is
    np.testing.assert_allclose(again.predict_proba(X_new), es.predict_proba(X_new), rtol=0, atol=1e-12)
    # and both equal the weighted mean of the chosen models scored one by one through scikit-learn
    by_hand = sum(w * es.candidate_scores(X_new, i) for i, w in enumerate(es.weights_) if w > 0)
    np.testing.assert_allclose(again.predict_proba(X_new)[:, 1], by_hand, rtol=0, atol=1e-12)
    assert not hasattr(es, "scoring_only_")  # saving did not slim the trained ensemble


@pytest.mark.slow
def test_a_compressed_ensemble_saves_its_mimic_only(tmp_path):
    table, y, X_new = _table(seed=3)
    bundle = train(table, y, None, EnsembleSelection(n_folds=3, n_bags=2, n_iterations=5, compress=1))
    es = bundle["estimator"]
    path = save_model(tmp_path / "m.skops", bundle)
    again = load_model(path)["estimator"]
    assert again.fold_models_ == {} and again.mimic_ is not None
    np.testing.assert_allclose(again.predict_proba(X_new), es.predict_proba(X_new), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="keeps only its mimic"):
        again.scores(X_new)
    # the mimic's histogram trees are checked like scikit-learn's other trees
    assert check_trees(again) is None
    k, nodes = next((k, p[0].nodes) for k, p in enumerate(again.mimic_._predictors) if not p[0].nodes["is_leaf"][0])
    root_left = int(nodes["left"][0])
    nodes["left"][0] = len(nodes)
    assert f"mimic_._predictors[{k}][0]: a child index out of order or range" in check_trees(again)
    nodes["left"][0] = root_left
    nodes["feature_idx"][0] = X_new.shape[1]
    assert "feature index out of range" in check_trees(again)


@pytest.mark.slow
def test_version_1_files_still_load(bundle, tmp_path):
    """A model file as spamflow wrote it before (every kept candidate, stored uncompressed)."""
    _, _, X_new = _table()
    old = tmp_path / "v1.skops"
    sio.dump({"format": "spamflow-ensemble-model", "format_version": 1, **bundle}, old)
    again = load_model(old)
    np.testing.assert_allclose(again["estimator"].predict_proba(X_new), bundle["estimator"].predict_proba(X_new),
                               rtol=0, atol=1e-12)
    sio.dump({"format": "spamflow-ensemble-model", "format_version": 99}, tmp_path / "v99.skops")  # refused on its version
    with pytest.raises(BadInputError, match="retrain"):
        load_model(tmp_path / "v99.skops")


@pytest.mark.slow
def test_pickles_and_forged_types_are_refused(bundle, tmp_path):
    pickled = tmp_path / "pickled.skops"
    pickled.write_bytes(pickle.dumps(bundle))
    with pytest.raises(BadInputError, match="not a skops model"):
        load_model(pickled)
    # a genuine compressed model file whose schema is edited to build subprocess.Popen objects
    path = save_model(tmp_path / "m.skops", bundle)
    with zipfile.ZipFile(path) as z:
        members = {m.filename: z.read(m) for m in z.infolist()}
    text = members["schema.json"].decode()
    assert '"__class__": "Candidate"' in text
    members["schema.json"] = text.replace('"__class__": "Candidate"', '"__class__": "Popen"').replace(
        '"__module__": "spamflow_ensemble.selection"', '"__module__": "subprocess"').encode()
    forged = tmp_path / "forged.skops"
    with zipfile.ZipFile(forged, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    with pytest.raises(BadInputError, match=r"refusing to load .*subprocess\.Popen"):
        load_model(forged)


def _first_tree_nodes(members: dict[str, bytes]) -> tuple[str, np.ndarray]:
    """The zip member holding the node array of the model file's first scikit-learn tree whose
    root splits, and that array."""
    def trees(node: object):
        if isinstance(node, dict):
            if node.get("__class__") == "Tree":
                yield node["content"]["content"]["nodes"]["file"]
                return
            node = list(node.values())
        if isinstance(node, list):
            for child in node:
                yield from trees(child)
    for name in trees(json.loads(members["schema.json"])):
        nodes = np.load(io.BytesIO(members[name]))
        if nodes["left_child"][0] != -1:
            return name, nodes
    raise AssertionError("no tree with a split in the model file")


def _forge_first_tree(path: Path, out: Path, field: str, value: int | None) -> None:
    """Copy the model file at ``path`` to ``out`` with ``field`` of the root of its first split
    tree set to ``value`` (None: unchanged); the file's types all stay trusted."""
    with zipfile.ZipFile(path) as z:
        members = {m.filename: z.read(m) for m in z.infolist()}
    name, nodes = _first_tree_nodes(members)
    if value is not None:
        nodes[field][0] = value
    buffer = io.BytesIO()
    np.save(buffer, nodes)
    members[name] = buffer.getvalue()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for member, data in members.items():
            z.writestr(member, data)


@pytest.fixture(scope="module")
def saved(bundle, tmp_path_factory) -> Path:
    """The bundle saved once for the forging tests; the same file rewritten by the forger with
    nothing changed still loads (the forger itself changes nothing else)."""
    folder = tmp_path_factory.mktemp("saved-model")
    path = save_model(folder / "m.skops", bundle)
    _forge_first_tree(path, folder / "same.skops", "feature", None)
    load_model(folder / "same.skops")
    return path


@pytest.mark.parametrize(("field", "value", "message"), [
    ("left_child", 10**9, "child index out of order or range"),
    ("right_child", 0, "child index out of order or range"),  # a cycle: routing would never end
    ("feature", 10**6, "feature index out of range"),
])
@pytest.mark.slow
def test_forged_tree_indices_are_refused_before_any_scoring(saved, tmp_path, field, value, message):
    """scikit-learn follows a tree's node indices unchecked: a forged one would read out of
    bounds (or loop) when a host is scored, so the model is refused when it is loaded."""
    _forge_first_tree(saved, tmp_path / "forged.skops", field, value)
    with pytest.raises(BadInputError, match=f"forged.skops: refusing a forged or damaged model: .*{message}"):
        load_model(tmp_path / "forged.skops")


def test_a_tree_given_the_wrong_number_of_columns_is_refused(bundle):
    """The array form routes hosts with Tree.apply, which does not check the input's width."""
    es = bundle["estimator"]
    i = next(i for i in es.fold_models_ if es.candidates_[i].family in ("forest", "tree", "costtree"))
    candidates = list(es.candidates_)
    candidates[i] = replace(es.candidates_[i], columns=es.candidates_[i].columns[:-1])
    with pytest.raises(ValueError, match="features is given"):
        compile_ensemble(candidates, es.fold_models_, {i: 1.0}, BINNED_FAMILIES, es.n_features_in_)


def test_extra_trees_and_histogram_boosting_save_and_score_as_in_memory(tmp_path):
    """The two families beyond the paper's list: a model file that chose them loads with
    spamflow's trusted types (the boosting trees are checked like the mimic's) and scores
    exactly as the ensemble in memory, which is scikit-learn's own average of them."""
    table, y, held_out = _table()
    es = EnsembleSelection(n_folds=3, n_bags=1, n_iterations=5, tree_bins=0).fit(table.X, y)
    best = es._best_by("family")
    es.weights_[:] = 0.0
    es.weights_[best["extratrees"]] = es.weights_[best["histboost"]] = 0.5
    path = save_model(tmp_path / "m.skops", {"estimator": es, "features": list(table.features)})
    loaded = load_model(path)["estimator"]
    assert sorted(c.family for c in loaded.candidates_) == ["extratrees", "histboost"]
    by_hand = 0.5 * sum(np.mean([m.predict_proba(held_out)[:, 1] for m in es.fold_models_[best[f]]], axis=0)
                        for f in ("extratrees", "histboost"))
    np.testing.assert_allclose(loaded.predict_proba(held_out)[:, 1], by_hand, rtol=0, atol=1e-12)
