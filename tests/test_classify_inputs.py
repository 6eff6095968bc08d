"""The classifier's inputs and outputs: labels in both formats, domain/IP groups that no
split separates, joined and external feature tables, and skops models that reload and
score identically (and refuse what spamflow did not write)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spamflow.domains import registered_domain
from spamflow.errors import BadInputError
from spamflow_ensemble.dataset import row_groups
from spamflow_ensemble.groups import host_groups
from spamflow_ensemble.labels import read_labels
from spamflow_ensemble.model import f1_threshold, train
from spamflow_ensemble.persist import load_model, save_model
from spamflow_ensemble.selection import EnsembleSelection, make_folds
from spamflow_ensemble.tables import join_host_tables, read_table

ROOT = Path(__file__).resolve().parents[1]
UK2007 = ROOT.parent / "shared" / "data" / "webspam-uk2007"


def test_labels_webspam_challenge_format(tmp_path):
    p = tmp_path / "set1.txt"
    p.write_text("4 nonspam 0.00000 NNNN\n7 spam 1.0 SSS\n9 undecided 0.5 SN\n11 undecided - -\n")
    labels = read_labels(p)
    assert labels.by_key == {"4": "nonspam", "7": "spam"} and labels.format == "webspam-challenge"
    assert labels.counts()["labels_dropped_undecided"] == 2


def test_labels_csv_format_and_bad_value(tmp_path):
    p = tmp_path / "labels.csv"
    p.write_text("host,label\nA.example.com,spam\nb.example.com,normal\nc.org,0\nd.org,1\ne.org,unsure\n")
    labels = read_labels(p)
    assert labels.by_key == {"a.example.com": "spam", "b.example.com": "nonspam", "c.org": "nonspam", "d.org": "spam"}
    assert labels.counts()["labels_dropped_unsure"] == 1
    p.write_text("host,label\nx.org,maybe\n")
    with pytest.raises(BadInputError, match=r"labels.csv:2: label 'maybe'"):
        read_labels(p)


def test_host_groups_join_by_domain_and_ip_transitively():
    hosts = ["www.a.co.uk", "blog.a.co.uk", "b.com", "c.net", "d.org"]
    ips = [["1.1.1.1"], ["2.2.2.2"], ["2.2.2.2"], ["3.3.3.3"], []]
    got = host_groups(hosts, [registered_domain(h) for h in hosts], ips)
    assert got[0] == got[1] == got[2]  # a.co.uk's two hosts, and b.com through blog's IP
    assert len({got[0], got[3], got[4]}) == 3


def test_grouped_folds_never_split_a_domain_or_an_ip():
    rng = np.random.default_rng(0)
    hosts, ips = [], {}
    for d in range(120):
        for h in range(rng.integers(1, 5)):
            host = f"h{h}.site{d}.co.uk"
            hosts.append(host)
            ips[host] = [f"10.0.{d % 37}.1"]  # shared hosting: several domains per address
    y = (rng.random(len(hosts)) < 0.15).astype(int)
    groups = row_groups(hosts, "domain+ip", ips)
    folds = make_folds(y, groups, 5, 0)
    assert len(folds) == 5
    for train_idx, test_idx in folds:
        for key in (lambda h: registered_domain(h), lambda h: ips[h][0]):
            assert not {key(hosts[i]) for i in train_idx} & {key(hosts[i]) for i in test_idx}
        assert y[test_idx].sum() > 0


def test_join_host_tables_outer_join_and_temporal(tmp_path):
    pq.write_table(pa.table({"snapshot": ["s1", "s1", "s2"], "host": ["a", "b", "a"], "pages": [3, 1, 4],
                             "flag": [True, False, True], "note": ["x", "y", "z"]}), tmp_path / "one.parquet")
    pq.write_table(pa.table({"snapshot": ["s2"], "host": ["c"], "quilted": [0.5]}), tmp_path / "two.parquet")
    pq.write_table(pa.table({"snapshot_t0": ["s1", "s1"], "snapshot_t1": ["s2", "s2"], "host": ["a", "b"],
                             "IGR": [0.1, 0.2]}), tmp_path / "temporal.parquet")
    t = join_host_tables({"one": (tmp_path / "one.parquet", "snapshot"), "two": (tmp_path / "two.parquet", "snapshot"),
                          "one_temporal": (tmp_path / "temporal.parquet", "snapshot_t1")})
    rows = {(s, h): dict(zip(t.features, x)) for s, h, x in zip(t.snapshot, t.host, t.X.tolist())}
    assert set(rows) == {("s1", "a"), ("s1", "b"), ("s2", "a"), ("s2", "c")}  # (s2, b) only in temporal: dropped
    assert rows[("s2", "a")]["one.pages"] == 4 and rows[("s2", "a")]["one_temporal.IGR"] == 0.1
    assert np.isnan(rows[("s1", "a")]["one_temporal.IGR"]) and np.isnan(rows[("s2", "c")]["one.pages"])
    assert rows[("s1", "a")]["one.flag"] == 1.0 and t.skipped == {"non_numeric_column:one.note": 1,
                                                                   "rows_not_in_snapshot:one_temporal": 1}
    assert set(t.groups) == {"one", "two", "one_temporal"}
    # the same rows and columns in the same order however the dict was built (a set of stage
    # names in `spamflow train -c` made the model depend on the process's hash seed)
    shuffled = join_host_tables({"one_temporal": (tmp_path / "temporal.parquet", "snapshot_t1"),
                                 "two": (tmp_path / "two.parquet", "snapshot"),
                                 "one": (tmp_path / "one.parquet", "snapshot")})
    assert (shuffled.snapshot, shuffled.host, shuffled.features) == (t.snapshot, t.host, t.features)
    assert np.array_equal(shuffled.X, t.X, equal_nan=True)


def test_external_arff_and_csv_tables(tmp_path):
    arff = tmp_path / "feat.arff.gz"
    with gzip.open(arff, "wt") as fh:
        fh.write("@RELATION x\n@ATTRIBUTE hostid NUMERIC\n@ATTRIBUTE f1 NUMERIC\n@ATTRIBUTE class {spam,nonspam}\n"
                 "@ATTRIBUTE assessmentscore NUMERIC\n@DATA\n4,1.5,nonspam,0\n7,?,spam,1\n")
    t = read_table(arff)
    assert t.host == ["4", "7"] and t.features == ["feat.f1"] and t.labels == ["nonspam", "spam"]
    assert t.X[0, 0] == 1.5 and np.isnan(t.X[1, 0])  # assessmentscore is never a feature
    csv = tmp_path / "f.csv"
    csv.write_text("host,a,b\nx.org,1,2\n")
    assert read_table(csv).features == ["f.a", "f.b"]
    (tmp_path / "f.txt").write_text("host,a\n")
    with pytest.raises(BadInputError, match="unknown table format"):
        read_table(tmp_path / "f.txt")


def test_f1_threshold_against_brute_force():
    rng = np.random.default_rng(3)
    y = (rng.random(200) < 0.2).astype(int)
    s = np.round(0.4 * y + rng.random(200), 2)

    def f1(t):
        pred = s >= t
        tp = (pred & (y == 1)).sum()
        return 2 * tp / (pred.sum() + y.sum())
    assert f1(f1_threshold(y, s)) == pytest.approx(max(f1(t) for t in np.unique(s)))


def _small_model(tmp_path: Path):
    from spamflow_ensemble.tables import FeatureTable

    rng = np.random.default_rng(0)
    n = 150
    y = (rng.random(n) < 0.2).astype(int)
    X = np.column_stack([y + rng.normal(0, 0.7, n), rng.normal(0, 1, n), rng.random(n)])
    X[rng.random(X.shape) < 0.1] = np.nan
    table = FeatureTable(["s"] * n, [f"h{i}.org" for i in range(n)], X, ["g1.a", "g1.b", "g2.c"],
                         {"g1": [0, 1], "g2": [2]})
    bundle = train(table, y, None, EnsembleSelection(n_bags=4, n_iterations=15, n_folds=3))
    return bundle, X


@pytest.mark.slow
def test_saved_model_reloads_and_scores_identically(tmp_path):
    bundle, X = _small_model(tmp_path)
    path = save_model(tmp_path / "m.skops", bundle)
    again = load_model(path)
    np.testing.assert_allclose(again["estimator"].predict_proba(X), bundle["estimator"].predict_proba(X),
                               rtol=0, atol=1e-12)  # BLAS sums may differ in order: 1e-12
    assert again["features"] == bundle["features"] and again["threshold"] == bundle["threshold"]
    assert again["estimator"].ensemble_ == bundle["estimator"].ensemble_


def test_load_refuses_foreign_types_and_non_models(tmp_path):
    import skops.io as sio

    sio.dump({"format": "spamflow-ensemble-model", "format_version": 1, "x": Path("/")}, tmp_path / "evil.skops")
    with pytest.raises(BadInputError, match="refusing to load"):
        load_model(tmp_path / "evil.skops")
    (tmp_path / "junk.skops").write_bytes(b"not a zip")
    with pytest.raises(BadInputError, match="not a skops model"):
        load_model(tmp_path / "junk.skops")
    sio.dump({"something": 1}, tmp_path / "other.skops")
    with pytest.raises(BadInputError, match="not a spamflow ensemble model"):
        load_model(tmp_path / "other.skops")
    assert zipfile.is_zipfile(tmp_path / "other.skops")


@pytest.mark.slow
def test_train_score_evaluate_commands_on_a_csv_table(tmp_path):
    rng = np.random.default_rng(1)
    n = 160
    y = rng.random(n) < 0.2
    hosts = [f"www.site{i}.co.uk" for i in range(n)]
    cols = {"host": hosts, "signal": (y + rng.normal(0, 0.6, n)).round(4), "noise": rng.random(n).round(4)}
    pq.write_table(pa.table(cols), tmp_path / "feats.parquet")
    (tmp_path / "labels.csv").write_text("host,label\n" + "".join(f"{h},{'spam' if s else 'nonspam'}\n"
                                                                 for h, s in zip(hosts, y)))
    common = ["--table", str(tmp_path / "feats.parquet")]
    knobs = ["--bags", "3", "--iterations", "10", "--folds", "3"]

    def spamflow(*args):
        out = subprocess.run([sys.executable, "-m", "spamflow_workflows", *args], capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout
    spamflow("train", *common, "--labels", str(tmp_path / "labels.csv"), *knobs, "--compress", "2",
             "-o", str(tmp_path / "m.skops"))
    report = json.loads((tmp_path / "m.skops.json").read_text())
    assert report["labelled"] == n and report["group_by"] == "domain" and report["groups"] == n
    spamflow("score", *common, "-m", str(tmp_path / "m.skops"), "-o", str(tmp_path / "scores.parquet"))
    scores = pq.read_table(tmp_path / "scores.parquet").to_pylist()
    model = load_model(tmp_path / "m.skops")
    assert model["estimator"].mimic_ is not None and model["train"]["compression_hosts"] == 2 * n
    X = np.column_stack([cols["signal"], cols["noise"]])
    assert np.allclose([r["score"] for r in scores], model["estimator"].predict_proba(X)[:, 1], rtol=0, atol=1e-12)
    out = spamflow("evaluate", *common, "--labels", str(tmp_path / "labels.csv"), *knobs, "--outer-folds", "2",
                   "--no-progress", "-o", str(tmp_path / "ev"))
    ev = json.loads((tmp_path / "ev" / "evaluation.json").read_text())
    assert ev["folds"] == 2 and ev["hosts"] == n and 0.5 < ev["auc"] <= 1 and "random forest" in out


@pytest.mark.skipif(not UK2007.is_dir(), reason="../shared/data/webspam-uk2007 is absent (real-data check)")
def test_uk2007_arff_labels_and_hostnames_line_up():
    from spamflow_ensemble.dataset import name_hosts, row_labels
    from spamflow_ensemble.labels import read_hostnames

    table = read_table(UK2007 / "features-train-only" / "uk-2007-05.obvious_features.csv.train.arff.gz")
    names = read_hostnames(UK2007 / "labels" / "WEBSPAM-UK2007-hostnames.txt.gz")
    own = list(table.labels or [])
    labels = read_labels(UK2007 / "labels" / "WEBSPAM-UK2007-SET1-labels.txt")
    table = name_hosts(table, names)
    got = row_labels(table, labels, names)
    assert len(got) == 3998 and got == own  # the ARFF's class column agrees with the official labels file
    assert sum(v == "spam" for v in got) == 222
    lengths = dict(zip(table.host, table.X[:, table.features.index("obvious_features.length_of_hostname")]))
    assert all(lengths[h] == len(h) for h in list(lengths)[:500])  # ids map to the right host names


def test_classify_without_labels_outside_the_demo_says_to_give_labels(tmp_path, capsys):
    """Issue 39 item 5: ``classify: {}`` on one's own WARC files said only that it reads stage
    'demo'; now the one line says it needs ``labels:``, which kinds, and where the docs are."""
    from spamflow_workflows.cli import main

    from warc_factory import write_two_months

    write_two_months(tmp_path)
    config = tmp_path / "my.yaml"
    config.write_text("workdir: runs\ninput: {warc: [jan/*.warc.gz]}\ndetectors: {obvious: {}, classify: {}}\n")
    assert main(["validate", "-c", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"spamflow: config error: {config}: detectors.classify"), err
    for words in ("needs labels:", "host,label CSV", "--rankings", "docs/classify.md#bring-your-own-labels"):
        assert words in err, (words, err)
    (tmp_path / "labels.csv").write_text("host,label\nsite0.example.co.uk,spam\nsite1.example.co.uk,nonspam\n")
    config.write_text(config.read_text().replace("classify: {}", "classify: {labels: labels.csv}"))
    assert main(["validate", "-c", str(config)]) == 0


def test_ensemble_flags_default_to_the_config_classify_stage_then_to_its_defaults():
    """``spamflow train -c`` trains what the config's classify stage trains: a flag not given
    takes the stage's value from the config, and without a config the stage's default."""
    import argparse

    from spamflow_ensemble.commands import ESTIMATOR_KEYS, estimator_settings
    from spamflow_ensemble.detector import ClassifyParams

    unset = {key: None for key in ESTIMATOR_KEYS}
    stage = ClassifyParams(labels="labels.csv", folds=3, library="full", seed=7)
    assert estimator_settings(argparse.Namespace(**unset, classify_params=stage)) == {
        **{key: getattr(ClassifyParams(labels="x"), key) for key in ESTIMATOR_KEYS}, "folds": 3, "library": "full",
        "seed": 7}
    given = estimator_settings(argparse.Namespace(**{**unset, "folds": 4}, classify_params=stage))
    assert given["folds"] == 4 and given["library"] == "full"
    assert estimator_settings(argparse.Namespace(**unset)) == {key: ClassifyParams.model_fields[key].default
                                                               for key in ESTIMATOR_KEYS}
