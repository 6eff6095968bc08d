"""Report pieces without the demo: the classify section from a stage directory written by hand
in the contract's format (issue 8 builds the real one), the spamflow_report_section hook, the
config switch, and the shared-passage highlighting against a brute-force reference."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from bs4 import BeautifulSoup
from spamflow_quilt.passages import source_marks

from spamflow import hookimpl
from spamflow.config import parse_config
from spamflow.errors import SpamflowError
from spamflow.plan import plan_run
from spamflow.plugins import build_plugins
from spamflow.report import EvidenceSet, ReportSection
from spamflow.report.render import write_report

EVALUATION = {"threshold": 0.5, "auc": 0.875, "baseline_auc": 0.61,
              "roc": {"fpr": [0.0, 0.0, 0.5, 1.0], "tpr": [0.0, 0.5, 1.0, 1.0]},
              "auc_by_family": {"quilt": 1.0, "linkfarm": 0.75}, "auc_by_group": {"links": 0.8, "content": 0.7},
              "ensemble": [{"model": "logistic", "weight": 0.6}, {"model": "forest", "weight": 0.4}],
              "train": {"snapshot": "2026-01", "hosts": 4, "spam": 2}, "test": {"snapshot": "2026-02", "hosts": 4,
                                                                                  "spam": 2}}
SCORES = [("2026-02", "a.example", 0.2, "nonspam", "nonspam", {"detectors": {}, "top_features": []}),
          ("2026-02", "b.example", 0.9, "spam", "spam",
           {"detectors": {"quilt": {"quilted_pages": 3}}, "top_features": [["quilt.quilted_fraction", 1.0, 0.4]]}),
          ("2026-02", "c.example", 0.6, "spam", None, {"detectors": {"spin": {"campaigns": 1}}, "top_features": []})]


def _classify_stage(folder: Path) -> dict:
    folder.mkdir()
    columns = list(zip(*SCORES))
    pq.write_table(pa.table({"snapshot": list(columns[0]), "host": list(columns[1]),
                             "score": pa.array(columns[2], pa.float64()), "label": list(columns[3]),
                             "true_label": pa.array(columns[4], pa.string()),
                             "evidence": [json.dumps(e) for e in columns[5]]}), folder / "scores.parquet")
    (folder / "evaluation.json").write_text(json.dumps(EVALUATION))
    return {"outputs": {"scores": str(folder / "scores.parquet"), "evaluation": str(folder / "evaluation.json")},
            "params": {}, "counts": {"hosts": 3}, "seconds": 0.5, "complete": True}


def test_classify_section_shows_scores_roc_and_auc_tables(tmp_path):
    stages = {"classify": _classify_stage(tmp_path / "classify")}
    path, counts = write_report(stages, tmp_path / "report", title="t")
    soup = BeautifulSoup(path.read_text(), "html.parser")
    assert (tmp_path / "report" / soup.select_one("#classify img")["src"]).is_file()
    text = " ".join(soup.select_one("#classify").get_text(" ", strip=True).split())
    assert "AUC 0.875" in text and "baseline AUC 0.61" in text and "predicted: nonspam 1, spam 2" in text
    groups = {tr.find_all("td")[0].get_text(strip=True): tr.find_all("td")[1].get_text(strip=True) for tr in soup.select("#classify tbody tr")}
    assert groups["links"] == "0.8" and groups["linkfarm"] == "0.75" and groups["logistic"] == "0.6"
    rows = soup.select("#host-table tbody tr")
    assert [r.find_all("td")[0].text for r in rows] == ["b.example", "c.example", "a.example"]  # by score, host first
    header = [th.text for th in soup.select("#host-table thead th")]
    b = [td.get_text(strip=True) for td in rows[0].find_all("td")]
    assert b[header.index("score")] == "0.9" and b[header.index("true label")] == "spam"
    assert b[header.index("fired")] == "quilt"
    assert json.loads(rows[0].select_one("details pre").text)["top_features"][0][0] == "quilt.quilted_fraction"
    assert counts["hosts_shown"] == 3


class _ExtraSection:
    """A third-party plugin contributing a section with a figure of its own."""

    @hookimpl
    def spamflow_report_section(self, stage: str, record: dict, assets: Path) -> ReportSection | None:
        if stage != "classify":
            return None
        (assets / "extra.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>')
        return ReportSection("extra", "Extra", f'<p>{record["counts"]["hosts"]} hosts</p><img src="assets/extra.svg">')


def test_spamflow_report_section_hook_adds_a_plugins_section(tmp_path):
    plugins = build_plugins(entry_points=False, extra={"extra": _ExtraSection()})
    stages = {"classify": _classify_stage(tmp_path / "classify")}
    path, counts = write_report(stages, tmp_path / "report", title="t", plugins=plugins)
    soup = BeautifulSoup(path.read_text(), "html.parser")
    assert soup.select_one("#extra p").text == "3 hosts"
    assert (tmp_path / "report" / "assets" / "extra.svg").is_file()
    assert counts["sections"] == 4  # summary, hosts, classify, extra


def test_a_section_anchor_taken_twice_is_an_error(tmp_path):
    class Clash:
        @hookimpl
        def spamflow_report_section(self, stage: str, record: dict, assets: Path) -> ReportSection:
            return ReportSection("hosts", "Clash", "")

    plugins = build_plugins(entry_points=False, extra={"clash": Clash()})
    stages = {"classify": _classify_stage(tmp_path / "classify")}
    with pytest.raises(SpamflowError, match="anchor"):
        write_report(stages, tmp_path / "report", title="t", plugins=plugins)


def test_sections_are_placed_by_order_after_the_hosts_and_summary(tmp_path):
    """A plugin places its section among the built-ins' (classify is 10) with ``order``; one
    that names none (a three-argument hook written before ``order``) comes after them."""
    class Placed:
        @hookimpl
        def spamflow_report_section(self, stage: str, record: dict, assets: Path, evidence) -> ReportSection | None:
            assert evidence is None  # nothing gave classify evidence
            return ReportSection("early", "Early", "<p>e</p>", order=5) if stage == "classify" else None

    plugins = build_plugins(entry_points=False, extra={"extra": _ExtraSection(), "placed": Placed()})
    stages = {"classify": _classify_stage(tmp_path / "classify")}
    path, counts = write_report(stages, tmp_path / "report", title="t", plugins=plugins)
    soup = BeautifulSoup(path.read_text(), "html.parser")
    assert [s["id"] for s in soup.find_all("section")] == ["hosts", "summary", "early", "classify", "extra"]
    assert [a["href"] for a in soup.select("nav a")] == ["#hosts", "#summary", "#early", "#classify", "#extra"]
    assert counts["sections"] == 5


def test_evidence_for_one_stage_from_two_plugins_is_an_error(tmp_path):
    class Claims:
        def __init__(self, kind: str) -> None:
            self.kind = kind

        @hookimpl
        def spamflow_report_evidence(self, stage: str) -> EvidenceSet | None:
            return EvidenceSet(self.kind, [], 0) if stage == "classify" else None

    plugins = build_plugins(entry_points=False, extra={"one": Claims("a"), "two": Claims("b")})
    stages = {"classify": _classify_stage(tmp_path / "classify")}
    with pytest.raises(SpamflowError, match=r"plugins \['one', 'two'\] all returned evidence for the stage 'classify'"):
        write_report(stages, tmp_path / "report", title="t", plugins=plugins)


def test_a_plugin_answering_a_report_hook_with_the_wrong_type_is_named(tmp_path):
    class Sloppy:
        @hookimpl
        def spamflow_report_section(self, stage: str) -> dict:
            return {"anchor": "x", "title": "X", "html": ""}

    plugins = build_plugins(entry_points=False, extra={"sloppy": Sloppy()})
    stages = {"classify": _classify_stage(tmp_path / "classify")}
    with pytest.raises(SpamflowError, match="plugin 'sloppy' returned a dict from spamflow_report_section for the "
                                            "stage 'classify'; expected a ReportSection or None"):
        write_report(stages, tmp_path / "report", title="t", plugins=plugins)


CONFIG = """
workdir: w
input: {demo: {seed: 0}}
detectors: {obvious: {}, quilt: {}}
"""


def test_report_stage_reads_every_detector_and_can_be_turned_off(tmp_path):
    plugins = build_plugins(entry_points=False)
    plan = plan_run(parse_config(CONFIG, plugins, path=tmp_path / "c.yaml"), plugins)
    assert list(plan)[-1] == "report" and set(plan["report"].requires) == {"parse", "obvious", "quilt"}
    off = parse_config(CONFIG + "report: {enabled: false}\n", plugins, path=tmp_path / "c.yaml")
    assert "report" not in plan_run(off, plugins)
    small = parse_config(CONFIG + "report: {max_items: 3}\n", plugins, path=tmp_path / "c.yaml")
    assert plan_run(small, plugins)["report"].params == {"max_items": 3, "max_hosts": 5000}


def _brute_force(page: list[str], sources: list[list[str]], k: int) -> list[int]:
    """Word j of the page belongs to the first source that contains, as a contiguous run, some
    k-word window of the page covering j."""
    def contains(seq: list[str], window: list[str]) -> bool:
        return any(seq[i:i + k] == window for i in range(len(seq) - k + 1))

    owner = []
    for j in range(len(page)):
        windows = [page[s:s + k] for s in range(max(0, j - k + 1), min(j, len(page) - k) + 1)]
        owner.append(next((i for i, src in enumerate(sources) if any(contains(src, w) for w in windows)), -1))
    return owner


def test_highlighting_matches_a_brute_force_reading_of_shared_k_grams():
    rng = random.Random(7)
    for _ in range(300):
        k = rng.randint(1, 4)
        page = [rng.choice("abcde") for _ in range(rng.randint(0, 25))]
        sources = [[rng.choice("abcde") for _ in range(rng.randint(0, 15))] for _ in range(rng.randint(0, 4))]
        owner, in_sources = source_marks(page, sources, k)
        assert owner == _brute_force(page, sources, k)
        for source, marks in zip(sources, in_sources):
            assert marks == [m == 0 for m in _brute_force(source, [page], k)]


def test_quilt_sweep_section_shows_table_one_and_figure_three(tmp_path):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "table1.csv").write_text("k,m,quilted_pages\n5,50,106\n5,100,80\n")
    (sweep / "figure3.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    stages = {"quilt_sweep": {"outputs": {"table1": str(sweep / "table1.csv"), "figure3": str(sweep / "figure3.png")},
                              "params": {}, "counts": {"points": 2}, "seconds": 1.0, "complete": True}}
    path, _ = write_report(stages, tmp_path / "report", title="t")
    soup = BeautifulSoup(path.read_text(), "html.parser")
    rows = [[td.get_text(strip=True) for td in tr.find_all("td")] for tr in soup.select("#quilt-sweep tbody tr")]
    assert rows == [["5", "50", "106"], ["5", "100", "80"]]
    assert (tmp_path / "report" / soup.select_one("#quilt-sweep img")["src"]).read_bytes() == b"\x89PNG\r\n\x1a\n"
