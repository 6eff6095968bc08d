"""The content stage on the demo web: outputs in run.json, one host row per (snapshot, host)
of the page table, and the keyword-stuffed link farm apart from the honest sites in the
features Ntoulas et al. found strongest (compression rate, corpus precision)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp


@pytest.fixture(scope="module")
def content_run(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("content-demo")
    config = folder / "content.yaml"
    config.write_text("workdir: run\ninput:\n  demo: {seed: 0}\nmapreduce:\n  runner: inline\n"
                      "detectors:\n  content: {}\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "spamflow_workflows", "run", "-c", str(config), "--no-progress"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads((folder / "run" / "run.json").read_text())


def _auc(positive: list[float], negative: list[float]) -> float:
    """Probability that a positive scores above a negative (ties count half), by all pairs."""
    pairs = [(p > n) + 0.5 * (p == n) for p in positive for n in negative]
    return sum(pairs) / len(pairs)


def test_outputs_are_in_run_json(content_run):
    stage = content_run["stages"]["content"]
    outputs = stage["outputs"]
    for name in ("hosts", "pages", "corpus_stats", "bm25_hosts", "bm25_vocabulary", "bm25_2026-01", "bm25_2026-02",
                 "temporal_ave", "temporal_ave_diff", "temporal_dev", "temporal_decay"):
        assert Path(outputs[name]).exists(), name
    assert "temporal_dev_diff" not in outputs  # two snapshots: DevDiff is undefined
    pages = ds.dataset(content_run["stages"]["parse"]["outputs"]["pages"]).to_table(columns=["snapshot", "host"])
    keys = set(zip(pages["snapshot"].to_pylist(), pages["host"].to_pylist()))
    hosts = pq.read_table(outputs["hosts"])
    assert set(zip(hosts["snapshot"].to_pylist(), hosts["host"].to_pylist())) == keys
    assert stage["counts"]["sampled_pages"] == pages.num_rows  # demo hosts have far fewer than 400 pages
    names = Path(outputs["bm25_hosts"]).read_text().split()
    vocab = Path(outputs["bm25_vocabulary"]).read_text().split()
    assert names == sorted({h for _, h in keys})
    for snapshot in ("2026-01", "2026-02"):
        assert sp.load_npz(outputs[f"bm25_{snapshot}"]).shape == (len(names), len(vocab))


def test_link_farm_differs_from_honest_sites(content_run):
    stages = content_run["stages"]
    kind = {}
    for line in (Path(stages["demo"]["outputs"]["labels"]) / "hosts.tsv").read_text().splitlines()[1:]:
        host, _ip, _label, host_kind = line.split("\t")
        kind[host] = host_kind
    rows = pq.read_table(stages["content"]["outputs"]["hosts"]).to_pylist()
    farm = [r for r in rows if kind[r["host"]] == "linkfarm"]
    honest = [r for r in rows if kind[r["host"]] == "honest"]
    assert len(farm) == 30 and len(honest) == 40
    # AVG_54: mean compression rate (stuffed keywords repeat); AVG_55: mean corpus precision, top 100 words
    assert _auc([r["AVG_54"] for r in farm], [r["AVG_54"] for r in honest]) >= 0.95
    assert _auc([r["AVG_55"] for r in farm], [r["AVG_55"] for r in honest]) >= 0.95
