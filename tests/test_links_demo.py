"""The ``links`` stage on the demo web: its host graphs are the planted ones (truth.json), and
the link-farm hosts whose links were rewired between the snapshots stand apart from the honest
hosts in the temporal features; TrustRank from honest seeds never reaches spam."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp
from hits_reference import dense_hits, dense_ppr


@pytest.fixture(scope="module")
def demo_run(demo_once) -> dict:
    stages = dict(demo_once["manifest"]["stages"])
    stages["truth"] = json.loads(Path(stages["demo"]["outputs"]["truth"]).read_text())
    return stages


def test_host_graphs_are_the_planted_host_edges(demo_run):
    links, truth = demo_run["links"], demo_run["truth"]
    assert set(links["outputs"]) == {"graphs", "hosts", "temporal", "summary", "rank_density", "frozen"}
    density = np.load(links["outputs"]["rank_density"])
    assert all(density[f"{s}/density"].sum() == pytest.approx(1.0) for s in truth["host_edges"])
    nodes = pq.read_table(Path(links["outputs"]["graphs"]) / "nodes.parquet")["host"].to_pylist()
    for snapshot, planted in truth["host_edges"].items():
        a = sp.load_npz(Path(links["outputs"]["graphs"]) / f"{snapshot}.npz").tocoo()
        got = {(nodes[i], nodes[j]) for i, j in zip(a.row, a.col)}
        want = {tuple(edge) for edge in planted}
        assert got == want  # revisited pages included: parse makes revisit records pages
    assert links["counts"]["self_links"] > 0 and links["counts"]["links_to_uncrawled"] == 0


def _temporal_by_kind(demo_run) -> tuple[dict, dict]:
    truth = demo_run["truth"]
    rows = pq.read_table(demo_run["links"]["outputs"]["temporal"]).to_pylist()
    farm = truth["linkfarm"]["hosts"]
    kept = set(farm["2026-01"]) & set(farm["2026-02"])
    churned = set(farm["2026-01"]) ^ set(farm["2026-02"])
    assert len(kept) == 12 and len(churned) == 6
    honest = {h for h, v in truth["hosts"].items() if v["kind"] == "honest"}
    by_host = {r["host"]: r for r in rows}
    assert all(v is None for h in churned for k, v in by_host[h].items() if k not in ("host", "snapshot_t0", "snapshot_t1"))
    return {h: by_host[h] for h in kept}, {h: by_host[h] for h in honest}


def test_rewired_farm_hosts_stand_apart_in_the_temporal_features(demo_run):
    farm, honest = _temporal_by_kind(demo_run)

    def values(rows, name):
        return np.array([r[name] for r in rows.values()], dtype=float)

    # the growth and death of the in-neighbours' links separates the two groups completely
    for name in ("IDRMean", "ODRMean", "IGRMean"):
        assert values(farm, name).min() > values(honest, name).max(), name
    # the in-link neighbourhood of a farm host changes more than any honest host's, at every length
    for ell in (1, 2, 3, 4):
        assert values(farm, f"xjac_in_{ell}").max() < values(honest, f"xjac_in_{ell}").min(), ell
    for name in ("IDR", "IGR", "ODR", "OGR"):
        assert np.median(values(farm, name)) > np.median(values(honest, name)), name
    assert np.median(values(farm, "psim_in_4")) < np.median(values(honest, "psim_in_4"))


def test_static_features_rows_and_trustrank(demo_run):
    truth = demo_run["truth"]
    pages = ds.dataset(demo_run["parse"]["outputs"]["pages"]).to_table(columns=["snapshot", "host"])
    rows = pq.read_table(demo_run["links"]["outputs"]["hosts"]).to_pylist()
    assert {(r["snapshot"], r["host"]) for r in rows} == set(zip(pages["snapshot"].to_pylist(), pages["host"].to_pylist()))
    for r in rows:
        kind = truth["hosts"][r["host"]]["kind"]
        assert (r["trustrank"] > 0) == (kind == "honest"), r["host"]  # no honest host links to spam
    for snapshot in truth["host_edges"]:
        pr = [r["pagerank"] for r in rows if r["snapshot"] == snapshot]
        assert math.fsum(pr) <= 1.0 + 1e-9
    summary = json.loads(Path(demo_run["links"]["outputs"]["summary"]).read_text())
    assert set(summary["snapshots"]) == {"2026-01", "2026-02"}
    assert summary["pairs"]["2026-01..2026-02"]["hosts_in_one"] == 8  # 3 + 3 farm hosts, 2 new spin blogs


def test_personalized_hits_on_the_demo(demo_run):
    """HitsAuth / HitsHub (and ChangePPR, eq. 3, against its dense linear solution): finite for every host crawled in both snapshots, missing for the
    others; equal within 1e-9 to the dense iteration of eqs. (7)-(8) on the demo's 2026-02 host
    graph personalized on its change(u); every host that changed has more authority than every
    host that did not (unchanged spin blogs get no in-links and no supersource share: 0), and
    the honest sites, whose text and links grow, have more than the farm (medians)."""
    links = demo_run["links"]
    params = links["params"]
    assert params["rank_weights"] == "binary"  # so w(uv) = 1 on every host edge
    rows = pq.read_table(links["outputs"]["temporal"]).to_pylist()
    nodes = pq.read_table(Path(links["outputs"]["graphs"]) / "nodes.parquet")["host"].to_pylist()
    position = {h: i for i, h in enumerate(nodes)}
    both = [r for r in rows if r["change"] is not None]
    assert len(both) == len(rows) - 8  # the 6 churned farm hosts and 2 new spin blogs are missing
    assert all(r["HitsAuth"] is None and r["HitsHub"] is None for r in rows if r["change"] is None)
    assert all(math.isfinite(r["HitsAuth"]) and math.isfinite(r["HitsHub"]) for r in both)
    change = np.zeros(len(nodes))  # 0 for hosts not in both snapshots: no share of the supersource
    for r in both:
        change[position[r["host"]]] = r["change"]
    s = change / (change + params["change_T"])
    w = (sp.load_npz(Path(links["outputs"]["graphs"]) / "2026-02.npz").toarray() > 0).astype(float)
    want_a, want_h = dense_hits(w, s / s.sum(), params["hits_c"])
    want_ppr = dense_ppr(w, s / s.sum(), params["ppr_c"])
    for r in both:
        i = position[r["host"]]
        assert abs(r["HitsAuth"] - want_a[i]) < 1e-9 and abs(r["HitsHub"] - want_h[i]) < 1e-9, r["host"]
        assert abs(r["ChangePPR"] - want_ppr[i]) < 1e-9, r["host"]
    changed = [r["HitsAuth"] for r in both if r["change"] > 0]
    unchanged = [r["HitsAuth"] for r in both if r["change"] == 0]
    assert len(changed) >= 30 and len(unchanged) >= 10
    assert min(changed) > max(unchanged)
    farm, honest = _temporal_by_kind(demo_run)
    assert np.median([r["HitsAuth"] for r in honest.values()]) > np.median([r["HitsAuth"] for r in farm.values()])
