"""`spamflow demo` end to end: run.json, and a page table with one row per HTML page (response,
or revisit of one) of the demo WARCs (counted here independently with warcio), locally and through luigid."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow.dataset as ds
import pyarrow.parquet as pq
from warcio.archiveiterator import ArchiveIterator

from spamflow.cli import demo_config_path

ROOT = Path(__file__).resolve().parents[1]


def _html_pages(warc_dir: Path) -> dict[str, int]:
    """Per snapshot folder: WARC response records with an HTML Content-Type, and revisit
    records referring (WARC-Refers-To) to one of those."""
    counts: dict[str, int] = {}
    html_ids: set[str] = set()
    revisits: list[tuple[str, str]] = []
    for path in sorted(warc_dir.glob("*/*.warc.gz")):
        with open(path, "rb") as fh:
            for record in ArchiveIterator(fh):
                if record.rec_type == "revisit":
                    revisits.append((path.parent.name, record.rec_headers.get_header("WARC-Refers-To")))
                if record.rec_type != "response":
                    continue
                ctype = (record.http_headers.get_header("Content-Type") or "").split(";")[0].strip().lower()
                if ctype in ("text/html", "application/xhtml+xml"):
                    counts[path.parent.name] = counts.get(path.parent.name, 0) + 1
                    html_ids.add(record.rec_headers.get_header("WARC-Record-ID"))
    for snapshot, refers_to in revisits:
        if refers_to in html_ids:
            counts[snapshot] += 1
    return counts


def _demo(workdir: Path, *extra: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "spamflow_workflows", "demo", "--workdir", str(workdir), "--no-progress", *extra],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"run.json: {workdir / 'run.json'}" in out.stdout
    return json.loads((workdir / "run.json").read_text())


def test_demo_writes_run_json_and_one_page_row_per_html_page(demo_once):
    manifest = demo_once["manifest"]  # the shared `spamflow demo` run (conftest)
    assert manifest["status"] == "success"
    assert list(manifest["stages"]) == ["demo", "crawl", "ingest", "parse", "obvious", "quilt", "hss", "links", "content",
                                       "spin", "classify", "report"]
    stages = manifest["stages"]
    expected = _html_pages(Path(stages["demo"]["outputs"]["warc"]))
    assert expected == {"2026-01": 349, "2026-02": 374}  # docs/demo.md
    pages = ds.dataset(stages["parse"]["outputs"]["pages"]).to_table(columns=["snapshot", "host", "domain", "ip"])
    got: dict[str, int] = {}
    for snapshot in pages["snapshot"].to_pylist():
        got[snapshot] = got.get(snapshot, 0) + 1
    assert got == expected
    assert stages["parse"]["counts"]["pages"] == sum(expected.values())
    assert stages["parse"]["bad_records_total"] == 0
    labels = Path(stages["demo"]["outputs"]["labels"]) / "hosts.tsv"
    labelled = {line.split("\t")[0] for line in labels.read_text().splitlines()[1:]}
    assert set(pages["host"].to_pylist()) <= labelled
    _check_quilts(stages)
    again = _demo(demo_once["workdir"])
    assert not any(s["ran_now"] for s in again["stages"].values())


def _check_quilts(stages: dict) -> None:
    """Every planted quilted page is found with exactly its planted sources; no honest page is."""
    labels = Path(stages["demo"]["outputs"]["labels"]) / "pages.tsv"
    kind = {}
    for line in labels.read_text().splitlines()[1:]:
        snapshot, url, _label, page_kind = line.split("\t")
        kind[(snapshot, url)] = page_kind
    truth = json.loads(Path(stages["demo"]["outputs"]["truth"]).read_text())["quilts"]
    found = {(q["snapshot"], q["url"]): q for q in map(json.loads, open(stages["quilt"]["outputs"]["quilts"]))}
    assert not [key for key in found if kind[key] == "honest"]
    planted = {(snap, url): {p["source"] for p in quilt["passages"]}
               for snap, quilts in truth.items() for url, quilt in quilts.items()}
    assert len(planted) == 48
    for key, sources in planted.items():
        assert key in found, key
        assert {s["url"] for s in found[key]["sources"]} == sources, key
    hosts = pq.read_table(stages["quilt"]["outputs"]["hosts"]).to_pylist()
    pages_per_host = Counter((snap, urlsplit(url).hostname) for snap, url in kind)
    quilted_per_host = Counter((q["snapshot"], q["host"]) for q in found.values())
    assert {(h["snapshot"], h["host"]): (h["pages"], h["quilted_pages"]) for h in hosts} == {
        key: (n, quilted_per_host[key]) for key, n in pages_per_host.items()}
    assert all(h["quilted_fraction"] == h["quilted_pages"] / h["pages"] for h in hosts)


def test_demo_config_is_the_shipped_one():
    assert (ROOT / "configs" / "demo.yaml").read_text() == demo_config_path().read_text()


def test_demo_through_a_real_luigid(demo_once):
    """The shared demo run (conftest) goes through a real luigid: every stage is a DONE task there."""
    assert demo_once["manifest"]["status"] == "success"
    done = demo_once["luigid_done"]
    assert sorted(t["params"]["stage"] for t in done.values()) == ["classify", "content", "crawl", "demo", "hss", "ingest", "links",
                                                                     "obvious", "parse", "quilt", "report", "spin"]
