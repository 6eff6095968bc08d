"""The demo's second snapshot recrawled with ``input.crawl.steer`` pointing at a demo run
(the session's ``demo_once``), beside the same crawl unsteered: fewer fetches on the planted
spam, and not one page less on any honest host (spamflow/demo/steered_recrawl.py;
docs/demo.md, "A recrawl steered by the demo's scores")."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spamflow.demo.steered_recrawl import by_kind, demo_labels, honest_losses, recrawl


@pytest.fixture(scope="module")
def unsteered(demo_once, tmp_path_factory):
    return recrawl(demo_once["workdir"], tmp_path_factory.mktemp("recrawl") / "plain", None, "2026-02")


def test_classifier_scores_budget_every_spam_host_and_no_honest_host_loses_a_page(demo_once, unsteered, tmp_path):
    run = demo_once["workdir"]
    labels = demo_labels(run)
    steered = recrawl(run, tmp_path / "steered", {"run": str(run), "spam_budget": 1}, "2026-02")
    # which hosts must be steered, read straight from the classify stage's scores.parquet
    scores = pq.read_table(demo_once["manifest"]["stages"]["classify"]["outputs"]["scores"]).to_pylist()
    expected = {r["host"] for r in scores if r["score"] >= 0.5}
    assert {r["host"] for r in steered.steer_rows if r["action"] == "budget"} == expected
    assert all(labels[h][0] == "spam" for h in expected) and len(expected) >= 30
    # a steered host gets its robots.txt and one page; every other host what it got unsteered
    spam = [h for h, (label, _) in labels.items() if label == "spam"]
    for host in labels:
        want = min(unsteered.pages[host], 1) if host in expected else unsteered.pages[host]
        assert steered.pages[host] == want, host
    assert honest_losses(labels, unsteered, steered) == {}
    before, after = sum(unsteered.fetches[h] for h in spam), sum(steered.fetches[h] for h in spam)
    assert after < before
    assert steered.counts["urls_steer_over_budget"] == sum(unsteered.pages[h] - 1 for h in expected)
    assert steered.counts["hosts_steered"] == len(expected)
    print(f"\nclassify-steered recrawl of 2026-02: spam fetches {before} -> {after}; by kind "
          f"{by_kind(labels, unsteered)} -> {by_kind(labels, steered)}")


def test_first_snapshot_evidence_caps_a_new_subdomain_and_drops_spam_links(demo_once, unsteered, tmp_path):
    run = demo_once["workdir"]
    labels = demo_labels(run)
    steer = {"run": str(run), "snapshots": ["2026-01"],
             "evidence": ["quilt.hosts.quilted_fraction", "spin.hosts.campaign_fraction"], "spam_budget": 1,
             "subdomain_cap": 0, "link_weight": 0.0}
    steered = recrawl(run, tmp_path / "steered", steer, "2026-02")
    # hosts of 2026-02 on a steered blog platform that 2026-01 never had: capped, never fetched
    stages = demo_once["manifest"]["stages"]
    seen = {r["host"] for stage in ("quilt", "spin") for r in pq.read_table(stages[stage]["outputs"]["hosts"])
            .to_pylist() if r["snapshot"] == "2026-01"}
    spin_2026_01 = pq.read_table(stages["spin"]["outputs"]["hosts"]).to_pylist()
    platforms = {r["host"].split(".", 1)[1] for r in spin_2026_01 if r["snapshot"] == "2026-01"
                 and r["campaign_fraction"] >= 0.5 and r["host"].endswith((".blogvine.org", ".quillpress.net"))}
    new = {h for h in unsteered.pages if h not in seen and h.split(".", 1)[1] in platforms}
    assert new == {"page-turner.blogvine.org"}  # seed 0's new spin blog in 2026-02
    assert {r["host"] for r in steered.steer_rows if r["action"] == "subdomain_capped"} == new
    assert steered.fetches["page-turner.blogvine.org"] == 0 and steered.counts["subdomains_capped"] == 1
    # link_weight 0: the links of steered pages are not followed; still no honest page is lost
    assert steered.counts["links_steer_not_followed"] > 0
    assert honest_losses(labels, unsteered, steered) == {}
    spam = [h for h, (label, _) in labels.items() if label == "spam"]
    assert sum(steered.fetches[h] for h in spam) < sum(unsteered.fetches[h] for h in spam)
    rows = [json.loads(line) for line in (Path(tmp_path / "steered") / "steer.jsonl").read_text().splitlines()]
    assert rows == steered.steer_rows and all(r["reasons"] for r in rows if r["action"] == "budget")
