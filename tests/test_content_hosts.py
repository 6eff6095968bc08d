"""Sampling (home page, most linked-to page, at most N pages) and the 96-feature host layout,
against per-page values aggregated by hand."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from spamflow_content.detector import featurise
from spamflow_content.host_features import feature_names
from spamflow_content.measures import MEASURES
from spamflow_content.params import ContentParams
from spamflow_content.sampling import choose_sample, home_rank

from content_pages import page_row, write_pages


def test_home_rank():
    assert [home_rank(u) for u in ("http://a.example", "http://a.example/", "http://a.example/INDEX.HTML",
                                   "http://a.example/?q=1", "http://a.example/about.html")] == [0, 0, 1, 2, 2]


def test_choose_sample_keeps_home_and_most_linked_and_caps():
    groups = np.array([0, 0, 0, 0, 0, 1, 1])
    home = np.array([2, 0, 2, 2, 2, 2, 1])
    degree = np.array([0, 1, 5, 5, 0, 0, 0])
    doc_ids = np.array([50, 40, 30, 20, 10, 2, 1])
    sampled, is_home, is_max = choose_sample(groups, home, degree, doc_ids, max_pages=3)
    assert is_home.tolist() == [False, True, False, False, False, False, True]
    # group 0: pages 2 and 3 tie on 5 in-links; neither is the home page, so the smaller doc_id (page 3) wins
    # group 1: no links at all, so the home page is also the most linked-to
    assert is_max.tolist() == [False, False, False, True, False, False, True]
    # group 0 keeps home (1), max (3), then the smallest other doc_id (page 4, id 10)
    assert sampled.tolist() == [False, True, False, True, True, True, True]


def test_host_features_layout_and_values(tmp_path):
    rows = [
        page_row("http://a.example/", "welcome to our garden shop".split(), title="Garden shop",
                 links=[("http://a.example/roses.html", "roses")]),
        page_row("http://a.example/roses.html", "roses roses and more roses".split(), title="Roses",
                 links=[("http://a.example/tools.html", "tools")]),
        page_row("http://a.example/tools.html", "garden tools for sale".split(),
                 links=[("http://a.example/roses.html", "roses")]),
        page_row("http://b.example/index.html", "just one page here".split(), title="B"),
    ]
    dataset = ds.dataset(write_pages(rows, tmp_path / "pages"), format="parquet")
    result = featurise(dataset, tmp_path, ContentParams(), None, Counter())
    hosts = pq.read_table(tmp_path / result.outputs["hosts"]).to_pylist()
    pages = pq.read_table(tmp_path / result.outputs["pages"]).to_pylist()
    assert [h["host"] for h in hosts] == ["a.example", "b.example"]
    assert list(hosts[0])[:4] == ["snapshot", "host", "pages", "sampled_pages"]
    assert list(hosts[0])[4:] == feature_names() and len(feature_names()) == 96
    by_url = {p["url"]: p for p in pages}
    a = hosts[0]
    home, roses = by_url["http://a.example/"], by_url["http://a.example/roses.html"]
    a_pages = [p for p in pages if p["host"] == "a.example"]
    for i, m in enumerate(MEASURES):
        assert a[f"HST_{i + 1}"] == home[m]
        assert a[f"HMG_{i + 25}"] == roses[m]  # two in-links, the most of the host
        values = [p[m] for p in a_pages]
        assert a[f"AVG_{i + 49}"] == pytest.approx(np.mean(values))
        assert a[f"STD_{i + 73}"] == pytest.approx(np.std(values))  # population std
    b = hosts[1]
    assert b["pages"] == 1 and all(b[f"STD_{i + 73}"] == 0 for i in range(24))
    assert b["HST_1"] == b["HMG_25"] == b["AVG_49"] == 4
    assert result.counts["sampled_pages"] == 4 and result.counts["skipped_no_host"] == 0


def test_max_pages_caps_the_sample(tmp_path):
    rows = [page_row("http://a.example/", ["home"])] + [
        page_row(f"http://a.example/p{i}.html", [f"w{i}", "x"]) for i in range(10)]
    dataset = ds.dataset(write_pages(rows, tmp_path / "pages"), format="parquet")
    result = featurise(dataset, tmp_path, ContentParams(max_pages=4), None, Counter())
    hosts = pq.read_table(tmp_path / result.outputs["hosts"]).to_pylist()
    assert hosts[0]["pages"] == 11 and hosts[0]["sampled_pages"] == 4
    pages = pq.read_table(tmp_path / result.outputs["pages"])
    assert "http://a.example/" in pages["url"].to_pylist()
    expected_others = sorted((r["doc_id"], r["url"]) for r in rows[1:])[:3]
    assert sorted(set(pages["url"].to_pylist()) - {"http://a.example/"}) == sorted(u for _, u in expected_others)


def test_pages_without_a_host_are_counted_and_an_empty_table_gives_empty_outputs(tmp_path):
    rows = [page_row("http://a.example/", ["one", "two", "three"]), page_row("http://x/", ["lost"])]
    rows[1]["host"] = ""
    dataset = ds.dataset(write_pages(rows, tmp_path / "pages"), format="parquet")
    result = featurise(dataset, tmp_path, ContentParams(), None, Counter())
    assert result.counts["skipped_no_host"] == 1 and result.counts["sampled_pages"] == 1
    assert pq.read_table(tmp_path / result.outputs["hosts"])["host"].to_pylist() == ["a.example"]
    (tmp_path / "empty").mkdir()
    empty = ds.dataset(write_pages([], tmp_path / "none"), format="parquet")
    result = featurise(empty, tmp_path / "empty", ContentParams(), None, Counter())
    assert result.counts["pages"] == 0 and result.counts["hosts"] == 0
    assert pq.read_table(tmp_path / "empty" / result.outputs["hosts"]).num_rows == 0
