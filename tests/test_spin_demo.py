"""The spin detector on the demo web: each planted campaign comes out whole, with its
promoted site, and no honest page is called spun (ground truth: labels/ and truth.json)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow.parquet as pq
import pytest

from spamflow.domains import registered_domain


@pytest.fixture(scope="module")
def demo_run(demo_once) -> dict:
    return demo_once["manifest"]


def _labels(stages: dict) -> dict[tuple[str, str], str]:
    rows = (Path(stages["demo"]["outputs"]["labels"]) / "pages.tsv").read_text().splitlines()[1:]
    return {(snap, url): kind for snap, url, _label, kind in (row.split("\t") for row in rows)}


def test_each_planted_campaign_is_one_campaign_with_its_promoted_site(demo_run):
    stages = demo_run["stages"]
    truth = json.loads(Path(stages["demo"]["outputs"]["truth"]).read_text())
    campaigns = [json.loads(line) for line in open(stages["spin"]["outputs"]["campaigns"])]
    for snapshot, copies in truth["spin"]["copies"].items():
        holding = [c for c in campaigns if c["snapshot"] == snapshot and {p["url"] for p in c["pages"]} & set(copies)]
        assert len(holding) == 1, (snapshot, [c["campaign"] for c in holding])
        campaign = holding[0]
        assert {p["url"] for p in campaign["pages"]} == set(copies)  # whole, and nothing else
        assert campaign["articles"] == campaign["hosts"] == len(copies)
        assert campaign["domains"] == len({registered_domain(p["host"]) for p in campaign["pages"]})
        assert [s["host"] for s in campaign["promoted_sites"]] == [truth["spin"]["promoted_host"]]


def test_no_honest_page_is_spun_and_pairs_are_well_formed(demo_run):
    stages = demo_run["stages"]
    kind = _labels(stages)
    pairs = [json.loads(line) for line in open(stages["spin"]["outputs"]["pairs"])]
    spun = [p for p in pairs if p["kind"] == "spun"]
    assert spun and not [p for p in spun if "honest" in (kind[(p["snapshot"], p["url_a"])],
                                                          kind[(p["snapshot"], p["url_b"])])]
    params = stages["spin"]["params"]
    for p in pairs:
        assert p["doc_a"] != p["doc_b"]
        if p["kind"] == "spun":
            assert p["immutable_jaccard"] >= params["immutable_threshold"]
            assert p["mutable_overlap"] >= params["verifier_threshold"]
    planted = {(snap, url) for snap, urls in json.loads(Path(stages["demo"]["outputs"]["truth"]).read_text())
               ["spin"]["copies"].items() for url in urls}
    found = {(p["snapshot"], u) for p in spun for u in (p["url_a"], p["url_b"])}
    assert planted <= found


def test_host_features_match_the_labels(demo_run):
    stages = demo_run["stages"]
    kind = _labels(stages)
    truth = json.loads(Path(stages["demo"]["outputs"]["truth"]).read_text())
    hosts = pq.read_table(stages["spin"]["outputs"]["hosts"]).to_pylist()
    pages_per_host = Counter((snap, urlsplit(url).hostname) for snap, url in kind)
    assert {(h["snapshot"], h["host"]): h["pages"] for h in hosts} == dict(pages_per_host)
    spin_hosts = {(snap, urlsplit(u).hostname) for snap, urls in truth["spin"]["copies"].items() for u in urls}
    for h in hosts:
        key = (h["snapshot"], h["host"])
        assert h["campaign_fraction"] == h["campaign_pages"] / h["pages"]
        if key in spin_hosts:
            assert h["campaign_pages"] >= 1 and h["max_campaign_hosts"] >= 15
        if truth["hosts"][h["host"]]["kind"] == "honest":
            assert h["spun_pages"] == 0 and not h["is_promoted"]
    promoted = [h for h in hosts if h["host"] == truth["spin"]["promoted_host"]]
    assert len(promoted) == 2 and all(h["is_promoted"] and h["promoted_by_campaigns"] >= 1 for h in promoted)
