"""Incremental scoring (docs/classify.md, "Incremental scoring"; Erdélyi et al. 6.2) on the demo.

The demo's second snapshot is split by host: three quarters are the model's known hosts, one
quarter (every fourth in name order) the new crawl. Content and links run on the known hosts,
then on the new hosts with the known run's frozen statistics, then on all hosts (the full
recomputation). Features claimed exact must equal the full recomputation (1e-9); approximated
ones must stay within the bounds docs/classify.md states; and the commands must carry the
statistics from `train -c` to `score -c` on another run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spamflow_links.incremental import exact_columns
from spamflow_links.static_features import STATIC_COLUMNS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_incremental import compare, demo_runs, demo_scores, demo_settings, split_hosts  # noqa: E402

EXACT = 1e-9
RANK_BOUND = 0.5
"""Max relative error of PageRank, TrustRank, CheiRank and truncated PageRank on the demo
(13 new hosts of 55, a quarter of the snapshot: far more than the small update the
approximation is for; measured 0.39)."""
SCORE_BOUND = 0.05
"""Max difference of a new host's score (measured 0.012)."""


@pytest.fixture(scope="module")
def runs(demo_once, tmp_path_factory) -> dict:
    stages = demo_once["manifest"]["stages"]
    return demo_runs(Path(stages["parse"]["outputs"]["pages"]), tmp_path_factory.mktemp("incremental"),
                     demo_settings(demo_once["workdir"]))


def test_classify_stage_keeps_its_statistics_beside_its_model(demo_once):
    """The demo's classify stage keeps content's and links' frozen statistics with its model,
    byte for byte, and names the demo run's workdir (so scoring that run freezes nothing)."""
    from spamflow.cli import demo_config_path
    from spamflow.config import load_config
    from spamflow.plugins import build_plugins
    from spamflow_ensemble.frozen import load_statistics

    stages = demo_once["manifest"]["stages"]
    assert stages["classify"]["counts"]["frozen_statistics"] == 2
    data = load_statistics(stages["classify"]["outputs"]["model"])
    assert Path(stages["classify"]["outputs"]["model_statistics"]).is_dir()
    assert Path(data["detectors"]["content"]["corpus_stats"]).read_bytes() == Path(
        stages["content"]["outputs"]["corpus_stats"]).read_bytes()
    assert Path(data["detectors"]["links"]["frozen_links"]).read_bytes() == Path(
        stages["links"]["outputs"]["frozen"]).read_bytes()
    config = load_config(demo_config_path(), build_plugins(), workdir=demo_once["workdir"])
    assert data["workdir"] == config.workdir_location


def test_split_is_by_name_order():
    assert split_hosts(["d", "a", "c", "b", "e", "h", "g", "f"]) == (["a", "b", "c", "e", "f", "g"], ["d", "h"])


def test_content_with_frozen_statistics_is_exact_but_for_the_most_linked_page(runs):
    """With the same corpus statistics, the home-page (HST), mean (AVG) and deviation (STD)
    features of a new host are the full run's; the most-linked page's (HMG) may differ, since
    links from the known hosts' pages to it are not in the new crawl."""
    r = runs["content"]
    assert len(r["incremental"]) == len(runs["new"]) == 13
    errors = compare(r["incremental"], r["frozen_full"])
    for feature, e in errors.items():
        if feature.startswith("HMG_"):
            assert e["max_rel"] <= 1.0 and e["missing_mismatch"] == 0, (feature, e)
        else:
            assert e["max_abs"] <= EXACT and e["missing_mismatch"] == 0, (feature, e)
    assert any(e["max_abs"] > 0 for f, e in errors.items() if f.startswith("HMG_"))  # the demo shows the effect


def test_links_exact_on_the_union_graph_and_ranks_within_the_bound(runs):
    r = runs["links"]
    errors = compare(r["incremental"], r["full"])
    assert set(errors) == set(STATIC_COLUMNS)
    for feature in exact_columns():
        assert errors[feature]["max_abs"] <= EXACT and errors[feature]["missing_mismatch"] == 0, feature
    for name in ("pagerank", "trustrank", "cheirank", *(f"truncatedpagerank_{t}" for t in (1, 2, 3, 4))):
        assert 0 < errors[name]["max_rel"] <= RANK_BOUND, (name, errors[name])
    # the indices place a new host among 55: at most the 13 new hosts' shifts plus one apart
    for name in ("pagerank_index", "cheirank_index", "twodrank_index"):
        assert errors[name]["max_abs"] <= len(runs["new"]) + 1, (name, errors[name])
    # independent check of one exact value: a new host's in-degree counts the known hosts' links to it
    host = max(r["full"], key=lambda h: r["full"][h]["indegree"])
    assert r["incremental"][host]["indegree"] == r["full"][host]["indegree"] > 0


def test_scores_of_new_hosts_barely_move(demo_once, runs):
    s = demo_scores(demo_once["workdir"], runs)
    assert s["hosts"] == 13 and 0 < s["spam"] < 13
    assert s["score_max_abs_diff"] <= SCORE_BOUND, s
    assert s["auc_incremental"] >= s["auc_full"] - 0.02, s


# --- the commands: train -c keeps the statistics, score -c on another run uses them ---


def _split_warcs(sources: list[Path], hosts: set[str], out: Path) -> Path:
    """The records of ``sources`` whose target URI's host is in ``hosts`` (and warcinfo)."""
    from urllib.parse import urlsplit

    from warcio.archiveiterator import ArchiveIterator
    from warcio.warcwriter import WARCWriter

    with open(out, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for path in sources:
            with open(path, "rb") as src:
                for record in ArchiveIterator(src):
                    uri = record.rec_headers.get_header("WARC-Target-URI")
                    if uri is None or (urlsplit(uri).hostname or "") in hosts:
                        writer.write_record(record)
    return out


def _config(path: Path, warc: Path, workdir: Path, seeds: list[str]) -> Path:
    path.write_text(f"workdir: {workdir}\ninput:\n  warc: [{warc}]\n  snapshot: '2026-02'\nmapreduce:\n  runner: inline\n"
                    f"detectors:\n  obvious: {{}}\n  links: {{trust_seeds: {json.dumps(seeds)}}}\n  content: {{}}\n",
                    encoding="utf-8")
    return path


def _spamflow(*argv: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "spamflow_workflows", *argv], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_train_keeps_statistics_and_score_uses_them_on_a_new_crawl(demo_once, demo_model, runs, tmp_path):
    """`train -c` on the demo run keeps its content corpus statistics and links graph beside
    the model; `score -c` on a crawl of the new hosts (their 2026-02 WARC records only) runs
    content and links with them, and gets the link features computed in process above;
    scoring the training run itself, or with --statistics run, freezes nothing."""
    from spamflow.cli import demo_config_path

    stages = demo_once["manifest"]["stages"]
    warcs = sorted((Path(stages["demo"]["outputs"]["warc"]) / "2026-02").glob("*.warc.gz"))
    new = _split_warcs(warcs, set(runs["new"]), tmp_path / "new.warc.gz")
    score = _config(tmp_path / "new.yaml", new, tmp_path / "new-run", stages["links"]["params"]["trust_seeds"])
    demo = ["-c", str(demo_config_path()), "--workdir", str(demo_once["workdir"])]
    model = demo_model  # `train -c` on the demo run with its labels (conftest)
    folder = model.parent / "model.skops.statistics"
    kept = json.loads((folder / "statistics.json").read_text())
    assert kept["detectors"] == {"content": {"corpus_stats": "content/corpus_stats.json"},
                                 "links": {"frozen_links": "links/frozen.npz"}}
    assert (folder / "content/corpus_stats.json").read_bytes() == Path(
        stages["content"]["outputs"]["corpus_stats"]).read_bytes()
    result = _spamflow("score", "-c", str(score), "-m", str(model), "-o", str(tmp_path / "scores.parquet"))
    assert result["frozen_statistics"] == {"content": {"corpus_stats": str(folder / "content/corpus_stats.json")},
                                           "links": {"frozen_links": str(folder / "links/frozen.npz")}}
    run = json.loads((tmp_path / "new-run" / "run.json").read_text())["stages"]
    assert run["content"]["params"]["corpus_stats"] == str(folder / "content/corpus_stats.json")
    assert run["links"]["params"]["frozen_links"] == str(folder / "links/frozen.npz")
    scores = pq.read_table(tmp_path / "scores.parquet").to_pylist()
    assert sorted(r["host"] for r in scores) == sorted(runs["new"])
    # the new hosts are in the demo's frozen graph already: re-crawled, their rows are replaced by
    # the new crawl's, so their in-degree is still the full snapshot's (the demo run's own value)
    links = {r["host"]: r for r in pq.read_table(run["links"]["outputs"]["hosts"]).to_pylist()}
    assert {h: links[h]["indegree"] for h in runs["new"]} == {h: runs["links"]["full"][h]["indegree"]
                                                             for h in runs["new"]}
    # scoring the training run itself freezes nothing (auto), as before; --statistics run opts out
    again = _spamflow("score", *demo, "-m", str(model), "-o", str(tmp_path / "again.parquet"))
    assert "frozen_statistics" not in again
    plain = _spamflow("score", "-c", str(score), "-m", str(model), "--statistics", "run",
                      "-o", str(tmp_path / "plain.parquet"))
    assert "frozen_statistics" not in plain
    run = json.loads((tmp_path / "new-run" / "run.json").read_text())["stages"]
    assert run["content"]["params"]["corpus_stats"] is None and run["links"]["params"]["frozen_links"] is None
