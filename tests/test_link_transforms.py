"""Becchetti et al.'s transformed link features: hand-worked values, the public file's
conventions, the links stage's host-level columns, the ``--table`` transform, and (when the
data is here) every named column of WEBSPAM-UK2007's ``lbt-train-gr.csv`` recomputed from
the official raw link features of the same hosts."""

from __future__ import annotations

import argparse
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow.csv as pacsv
import pytest

from spamflow.plugins import build_plugins
from spamflow_ensemble.commands import load_features
from spamflow_ensemble.tables import add_table_transforms, read_table
from spamflow_links.hostgraph import graph_from_edges
from spamflow_links.static_features import RAW_COLUMNS, STATIC_COLUMNS, TRANSFORMED_COLUMNS, static_features
from spamflow_links.transforms import (
    LOG_OF_ZERO,
    safe_div,
    safe_log,
    table_transform,
    table_transforms,
    transformed_features,
)

UK2007 = Path(__file__).resolve().parents[2] / "shared" / "data" / "webspam-uk2007" / "features-train-only"
RAW_ARFF = UK2007 / "uk-2007-05.link_based_features.csv.train.arff.gz"
LBT = UK2007 / "lbt-train-gr.csv.gz"

NEIGHBOUR_AVG_MP = ("log_OP_avg_OP_neighbors_2_mp_div_indegree_mp_neighbors_3_mp_div_neighbors_2_mp"
                    "_neighbors_4_mp_div_neighbors_3_mp_CP__CP_")
TPR_MIN_HP = ("log_OP_min_OP_truncatedpagerank_2_hp_div_truncatedpagerank_1_hp_truncatedpagerank_3_hp_div_"
              "truncatedpagerank_2_hp_truncatedpagerank_4_hp_div_truncatedpagerank_3_hp_CP__CP_")


def test_public_conventions_for_zero_negative_and_missing():
    assert safe_log(np.array([math.e, 1.0, 0.0, -3.0]))[:2] == pytest.approx([1.0, 0.0])
    assert list(safe_log(np.array([0.0, -3.0]))) == [LOG_OF_ZERO, LOG_OF_ZERO] == [-50.0, -50.0]
    assert np.isnan(safe_log(np.array([np.nan]))[0])
    # a/0: 1 when a is 0 too, 0 otherwise (as the public file holds); NaN stays missing
    out = safe_div(np.array([6.0, 0.0, 5.0, np.nan, 1.0]), np.array([3.0, 0.0, 0.0, 1.0, np.nan]))
    assert list(out[:3]) == [2.0, 1.0, 0.0] and np.isnan(out[3]) and np.isnan(out[4])


def _hand_host() -> dict[str, np.ndarray]:
    """One host with every raw hp/mp column; mp values chosen so the formulas work out by hand."""
    mp = {"indegree": 2, "outdegree": 4, "assortativity": 0.5, "avgin_of_out": 3, "avgout_of_in": 5,
          "pagerank": 0.25, "prsigma": 0.1, "trustrank": 0.5, "neighbors_2": 6, "neighbors_3": 12,
          "neighbors_4": 12, "siteneighbors_1": 3, "siteneighbors_2": 1, "siteneighbors_3": 2,
          "siteneighbors_4": 4, "truncatedpagerank_1": 0.2, "truncatedpagerank_2": 0.1,
          "truncatedpagerank_3": 0.05, "truncatedpagerank_4": 0.04, "reciprocity": 0.5}
    cols = {f"{k}_mp": np.array([float(v)]) for k, v in mp.items()}
    cols.update({f"{k}_hp": np.array([2.0 * v]) for k, v in mp.items()})
    cols["neighbors_3_mp"] = np.array([0.0])  # for the hp-over-mp ratio a/0 below
    cols["neighbors_3_hp"] = np.array([7.0])
    return cols


def test_hand_worked_values():
    f = transformed_features(_hand_host())
    assert len(f) == 84
    one = {k: float(v[0]) for k, v in f.items()}
    assert one["L_indegree_mp"] == pytest.approx(math.log(2))
    assert one["log_OP_indegree_mp_div_pagerank_mp_CP_"] == pytest.approx(math.log(2 / 0.25))  # ln 8
    assert one["log_OP_avgin_of_out_mp_mul_outdegree_mp_CP_"] == pytest.approx(math.log(12))
    assert one["log_OP_avgout_of_in_mp_mul_indegree_mp_CP_"] == pytest.approx(math.log(10))
    assert one["log_OP_trustrank_mp_div_indegree_mp_CP_"] == pytest.approx(math.log(0.25))
    # sites at distance 2 fewer than at 1: the difference is negative, its log the public -50
    assert one["log_OP__OP_siteneighbors_2_mp_m_siteneighbors_1_mp_CP__div_pagerank_mp_CP_"] == -50.0
    assert one["log_OP_siteneighbors_2_mp_div_siteneighbors_1_mp_CP_"] == pytest.approx(math.log(1 / 3))
    # neighbour ratios of mp: 6/2 = 3, 0/6 = 0, 12/0 = 0 (public a/0 rule): avg 1, max 3
    assert one[NEIGHBOUR_AVG_MP] == pytest.approx(0.0, abs=1e-12)
    assert one["log_OP_max_OP_neighbors_2_mp_div_indegree_mp_neighbors_3_mp_div_neighbors_2_mp_neighbors_4_mp_"
               "div_neighbors_3_mp_CP__CP_"] == pytest.approx(math.log(3))
    assert one["neighbors_3_hp_div_neighbors_3_mp"] == 0.0  # 7 / 0
    assert one["siteneighbors_1_hp_div_siteneighbors_1_mp"] == pytest.approx(2.0)
    # truncated PageRank ratios of hp (hp = 2 x mp, so the same): 0.5, 0.5, 0.8
    assert one["truncatedpagerank_4_hp_div_truncatedpagerank_3_hp"] == pytest.approx(0.8)
    assert one[TPR_MIN_HP] == pytest.approx(math.log(0.5))
    assert one["log_OP_avg_OP_truncatedpagerank_2_hp_div_truncatedpagerank_1_hp_truncatedpagerank_3_hp_div_"
               "truncatedpagerank_2_hp_truncatedpagerank_4_hp_div_truncatedpagerank_3_hp_CP__CP_"] == pytest.approx(
        math.log(1.8 / 3))


def test_only_features_with_all_inputs_and_not_already_present():
    cols = {"indegree_mp": np.array([4.0]), "pagerank_mp": np.array([2.0]), "L_indegree_mp": np.array([9.0])}
    f = transformed_features(cols)
    assert sorted(f) == ["L_pagerank_mp", "log_OP_indegree_mp_div_pagerank_mp_CP_"]
    assert f["log_OP_indegree_mp_div_pagerank_mp_CP_"][0] == pytest.approx(math.log(2))


def test_links_stage_adds_host_level_transforms_after_its_old_columns():
    version_2 = ("indegree", "outdegree", "reciprocity", "avgin_of_out", "avgout_of_in", "assortativity", "pagerank",
                 "prsigma", "trustrank", "truncatedpagerank_1", "truncatedpagerank_2", "truncatedpagerank_3",
                 "truncatedpagerank_4", "neighbors_2", "neighbors_3", "neighbors_4", "cheirank", "pagerank_index",
                 "cheirank_index", "twodrank_index", "pagerank_over_indegree", "trustrank_over_pagerank",
                 "truncatedpagerank_1_over_pagerank", "truncatedpagerank_2_over_pagerank",
                 "truncatedpagerank_3_over_pagerank", "truncatedpagerank_4_over_pagerank",
                 "neighbors_2_over_indegree", "neighbors_3_over_neighbors_2", "neighbors_4_over_neighbors_3",
                 "cheirank_over_pagerank")
    assert RAW_COLUMNS == version_2 and STATIC_COLUMNS == version_2 + TRANSFORMED_COLUMNS
    assert len(TRANSFORMED_COLUMNS) == 37 and not any("siteneighbors" in c for c in TRANSFORMED_COLUMNS)
    # 0 -> 1 -> 2 -> 0 cycle plus 3 -> 0 (3 has no in-links)
    a = graph_from_edges(4, {(0, 1), (1, 2), (2, 0), (3, 0)}).adjacency
    f = static_features(a, trust_seeds=np.array([True, False, False, False]), tol=1e-14)
    assert set(TRANSFORMED_COLUMNS) <= set(f)
    indeg, pr = f["indegree"], f["pagerank"]
    assert list(indeg) == [2, 1, 1, 0]
    expected_log_in = [math.log(2), 0.0, 0.0, -50.0]
    assert f["L_indegree"] == pytest.approx(expected_log_in)
    assert f["log_OP_indegree_div_pagerank_CP_"][:3] == pytest.approx(np.log(indeg[:3] / pr[:3]))
    assert f["log_OP_indegree_div_pagerank_CP_"][3] == -50.0  # 0 / PageRank
    assert f["log_OP_avgout_of_in_mul_indegree_CP_"][0] == pytest.approx(math.log(1 + 1))  # 2 and 3, 1 out-link each
    assert np.isnan(f["L_avgout_of_in"][3])  # no in-links: avgout_of_in is missing, so is its log
    t = f["truncatedpagerank_2_div_truncatedpagerank_1"]
    assert t == pytest.approx(f["truncatedpagerank_2"] / f["truncatedpagerank_1"])


def _write_link_csv(path: Path, cols: dict[str, np.ndarray]) -> None:
    names = sorted(cols)
    lines = ["hostid," + ",".join(names) + ",class", "7," + ",".join(repr(float(cols[n][0])) for n in names) + ",spam"]
    path.write_text("\n".join(lines) + "\n")


def test_table_transform_adds_columns_to_the_link_group(tmp_path: Path):
    _write_link_csv(tmp_path / "links.csv", _hand_host())
    raw = read_table(tmp_path / "links.csv")
    # the links plugin offers its transform through spamflow_table_transforms (the classifier knows no detector)
    offered = build_plugins().pm.hook.spamflow_table_transforms()
    assert [t for answer in offered if answer for t in answer] == [table_transform]
    out, added = add_table_transforms(raw, [table_transform])
    assert added == 84 and out.X.shape == (1, raw.X.shape[1] + 84)
    assert out.groups == {"links": list(range(raw.X.shape[1] + 84))}
    col = out.features.index("links.log_OP_indegree_mp_div_pagerank_mp_CP_")
    assert out.X[0, col] == pytest.approx(math.log(8))
    assert out.X[0, : raw.X.shape[1]].tolist() == raw.X[0].tolist()
    # a table without raw link columns is left alone
    (tmp_path / "other.csv").write_text("hostid,words\n7,3\n")
    other = read_table(tmp_path / "other.csv")
    assert add_table_transforms(other, [table_transform]) == (other, 0)
    # by default the commands' --table applies it; --no-link-transforms does not
    args = argparse.Namespace(config=None, table=[str(tmp_path / "links.csv")], hostnames=None, no_link_transforms=False)
    assert load_features(args, "evaluate")[0].X.shape[1] == raw.X.shape[1] + 84
    args.no_link_transforms = True
    assert load_features(args, "evaluate")[0].X.shape[1] == raw.X.shape[1]


def _columns(table) -> dict[str, np.ndarray]:
    return {c: table[c].to_numpy(zero_copy_only=False) for c in table.column_names}


@pytest.mark.skipif(not (RAW_ARFF.is_file() and LBT.is_file()),
                    reason="../shared/data/webspam-uk2007/features-train-only is absent (real-data check)")
def test_every_named_public_transform_recomputed_from_the_raw_features():
    """lbt-train-gr.csv has no host id: its rows are matched to the raw ARFF's by five logged raw
    columns (unique for about 3,900 of the 3,998 hosts; ambiguous ones are left out).  The file
    rounds to 6 decimals, so values agree within 1e-5 + 1e-5 * |value|."""
    from spamflow_ensemble.tables import _read_arff

    raw = _columns(_read_arff(RAW_ARFF))
    lbt = _columns(pacsv.read_csv(LBT))
    names = [n for n, _, _ in table_transforms()]
    assert sorted(names) == sorted(c for c in lbt if c not in ("class", "eq_hp_mp"))
    keys = ["indegree_mp", "outdegree_hp", "outdegree_mp", "avgin_of_out_hp", "pagerank_mp"]
    by_key: dict[tuple, list[int]] = defaultdict(list)
    for i, key in enumerate(zip(*(np.round(safe_log(raw[k]), 3) for k in keys))):
        by_key[key].append(i)
    pairs = [(j, by_key[key][0]) for j, key in enumerate(zip(*(np.round(lbt[f"L_{k}"], 3) for k in keys)))
             if len(by_key.get(key, [])) == 1]
    assert len(pairs) > 3800
    lbt_rows, raw_rows = (np.array(p) for p in zip(*pairs))
    assert np.array_equal(raw["class"][raw_rows], lbt["class"][lbt_rows])
    computed = transformed_features({k: v[raw_rows] for k, v in raw.items() if k not in ("class", "hostid")})
    for name in names:
        expected = lbt[name][lbt_rows]
        np.testing.assert_allclose(computed[name], expected, rtol=1e-5, atol=1e-5, err_msg=name)
