"""Scoring every host with the map-only job mr_score: the same scores as the in-process
scoring (within 1e-12: BLAS may sum a block's products in another order) on the inline and
local runners, from the classify stage and from ``spamflow score`` (on the inline runner: the
local runner's tasks, each importing scikit-learn to load the model, are tested on the job itself)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spamflow.detector import RunSettings, StageContext, StageOutputs
from spamflow_ensemble.detector import ClassifyDetector, ClassifyParams
from spamflow_ensemble.mapreduce_scoring import score_mapreduce
from spamflow_ensemble.model import score, train
from spamflow_ensemble.persist import save_model
from spamflow_ensemble.selection import EnsembleSelection
from spamflow_ensemble.tables import FeatureTable

from conftest import assert_close


def _features(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    y = (rng.random(n) < 0.25).astype(int)
    X = np.column_stack([y + rng.normal(0, 0.8, n), rng.normal(0, 1, n) * 1e6, 0.7 * y + rng.normal(0, 1, n),
                         rng.exponential(1, n)])
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def trained(rng: np.random.Generator, hosts: int, **selection: int) -> dict:
    """An ensemble trained on ``hosts`` rows of :func:`_features` in two feature groups."""
    X, y = _features(rng, hosts)
    table = FeatureTable(["s"] * hosts, [f"h{i}.org" for i in range(hosts)], X, ["a.x", "a.y", "b.z", "b.w"],
                         {"a": [0, 1], "b": [2, 3]})
    return train(table, y, None, EnsembleSelection(**selection, tree_bins=8, random_state=1))


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> tuple[dict, Path, np.ndarray]:
    """A small trained model (trees, linear models, binned and missing values), its file and
    held-out rows, some with every feature missing."""
    rng = np.random.default_rng(0)
    bundle = trained(rng, 200, n_folds=3, n_bags=4, n_iterations=10)
    held_out, _ = _features(rng, 300)
    held_out[:3] = np.nan
    return bundle, save_model(tmp_path_factory.mktemp("model") / "model.skops", bundle), held_out


@pytest.mark.slow
@pytest.mark.parametrize("runner", ["inline", "local"])
def test_the_job_scores_as_the_trained_ensemble_does(model, tmp_path, runner):
    bundle, path, X = model
    found = score_mapreduce(path, X, tmp_path / "work", runner, ("--block", "64") if runner == "local" else ())
    expected = score(bundle, X)
    assert found.shape == expected.shape and not np.isnan(found).any()
    np.testing.assert_allclose(found, expected, rtol=0, atol=1e-12)
    assert len(set(np.round(expected, 6).tolist())) > 50  # real, varied scores
    assert score_mapreduce(path, X[:0], tmp_path / "none", runner).shape == (0,)  # nothing to score: no job


def _stage_inputs(tmp_path: Path) -> tuple[dict[str, StageOutputs], Path]:
    """Two detector stages' per-host tables over two snapshots (the first trains, the second
    is scored) and a labels file."""
    rng = np.random.default_rng(3)
    hosts = [f"www.site{i}.example" for i in range(150)]
    X, y = _features(rng, 300)
    inputs = {"parse": StageOutputs("parse", tmp_path, {"pages": tmp_path / "no-pages"}, {})}
    for name, columns in (("alpha", [0, 1]), ("beta", [2, 3])):
        folder = tmp_path / name
        folder.mkdir()
        pq.write_table(pa.table({"snapshot": ["s1"] * 150 + ["s2"] * 150, "host": hosts * 2,
                                 **{f"f{j}": X[:, j] for j in columns}}), folder / "hosts.parquet")
        inputs[name] = StageOutputs(name, folder, {"hosts": folder / "hosts.parquet"}, {})
    labels = tmp_path / "labels.csv"
    labels.write_text("host,label\n" + "".join(f"{h},{'spam' if s else 'nonspam'}\n" for h, s in zip(hosts, y)))
    return inputs, labels


@pytest.mark.slow
def test_the_classify_stage_scores_the_same_with_the_job(tmp_path):
    inputs, labels = _stage_inputs(tmp_path)
    results = {}
    for engine in ("memory", "mapreduce"):
        params = ClassifyParams(labels=str(labels), detectors=["alpha", "beta"], group_by="domain", folds=3,
                                bags=3, iterations=10, explain_hosts=20, engine=engine)
        outdir = tmp_path / f"out-{engine}"
        outdir.mkdir()
        result = ClassifyDetector().run(StageContext(params, inputs, outdir, RunSettings(runner="inline")))
        results[engine] = (result.counts, pq.read_table(outdir / "scores.parquet").to_pylist(),
                           json.loads((outdir / "evaluation.json").read_text()))
    assert (outdir / "work" / "scores.tsv").exists()  # the job ran
    memory, mapreduce = results["memory"], results["mapreduce"]
    assert memory[0] == mapreduce[0] and memory[0]["hosts_scored"] == 150
    assert_close(mapreduce[1], memory[1], atol=1e-12, where="scores.parquet")
    assert_close(mapreduce[2], memory[2], atol=1e-12, where="evaluation.json")


@pytest.mark.slow
def test_spamflow_score_runs_the_job_when_asked(model, tmp_path):
    bundle, path, X = model
    hosts = [f"www.h{i}.example" for i in range(len(X))]
    pq.write_table(pa.table({"host": hosts, **{f: X[:, j] for j, f in enumerate(bundle["features"])}}),
                   tmp_path / "table.parquet")
    scores = {}
    for engine in ("memory", "mapreduce"):
        out = subprocess.run([sys.executable, "-m", "spamflow_workflows", "score", "--table",
                              str(tmp_path / "table.parquet"), "-m", str(path), "-o", str(tmp_path / f"{engine}.parquet"),
                              "--engine", engine, "--runner", "inline"], capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stdout + out.stderr
        scores[engine] = pq.read_table(tmp_path / f"{engine}.parquet").to_pylist()
    assert_close(scores["mapreduce"], scores["memory"], atol=1e-12, where="spamflow score")
    assert [r["host"] for r in scores["memory"]] == hosts
