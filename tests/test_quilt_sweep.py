"""`spamflow quilt-sweep` (a command added through the spamflow_register_commands hook):
one parameter varied at a time, reused intermediates, Table 1 against the reference."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
from spamflow_quilt.params import QuiltParams
from spamflow_quilt.sweep import parse_values, sweep_points

from spamflow.words import words

from quilt_reference import reference_quilts
from warc_factory import Resp, html, write_warc

PASSAGES = [f"passage {i} " + " ".join(f"w{i}x{j}" for j in range(12)) for i in range(6)]


def _corpus() -> list[tuple[str, str]]:
    """(url, text): sources on their own domains, and quilts stitched from them."""
    pages = [(f"http://src{i}.example.org/", PASSAGES[i] + f" own words of source {i}") for i in range(6)]
    for q in range(3):
        pages.append((f"http://quilt.example.net/{q}", " ".join(PASSAGES[(q + j) % 6] for j in range(4))))
    return pages


def test_ranges_and_points():
    assert parse_values("3..6", int) == [3, 4, 5, 6]
    assert parse_values("0.1..0.3:0.1", float) == [0.1, 0.2, 0.3]
    points = sweep_points(QuiltParams(k=5, m=50, c=4, theta=0.5), {"k": [4, 5], "c": [2]})
    assert [(p.k, p.m, p.c, p.theta) for p in points] == [(5, 50, 4, 0.5), (4, 50, 4, 0.5), (5, 50, 2, 0.5)]


@pytest.mark.slow
def test_quilt_sweep_command_writes_table1_and_figure3(tmp_path):
    corpus = _corpus()
    write_warc(tmp_path / "a.warc.gz", [Resp(url, html("t", f"<p>{text}</p>")) for url, text in corpus])
    (tmp_path / "c.yaml").write_text("workdir: out\ninput: {warc: ['*.warc.gz'], snapshot: s1}\n"
                                     "detectors:\n  quilt: {foreign: domain}\n")
    out = subprocess.run([sys.executable, "-m", "spamflow_workflows", "quilt-sweep", "-c", "c.yaml", "--pivot", "3,5,4,0.5",
                          "--c", "2..5", "--k", "2,4"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    manifest = json.loads((tmp_path / "out" / "run.json").read_text())
    sweep = manifest["stages"]["quilt_sweep"]
    rows = list(csv.DictReader(open(sweep["outputs"]["table1"])))
    assert open(sweep["outputs"]["figure3"], "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    pages = [{"doc_id": i, "url": url, "words": words(text), "domain": url.split("/")[2].split(".", 1)[1],
              "ip": "127.0.0.1", "links": []} for i, (url, text) in enumerate(corpus)]
    got = [(int(r["k"]), int(r["c"]), int(r["quilted"])) for r in rows]
    expected = [(k, c, len(reference_quilts(pages, k, 5, c, 0.5, "domain")))
                for k, c in [(3, 4), (2, 4), (4, 4), (3, 2), (3, 3), (3, 5)]]
    assert got == expected
    assert [r["varied"] for r in rows] == ["pivot", "k", "k", "c", "c", "c"]
    assert expected[0][2] == 3  # the three quilts at the pivot
    # intermediates are shared: one shingle file per k, one patch-gram file per (k, m)
    work = next((tmp_path / "out" / "sweeps").glob("quilt-work-*"))
    assert sorted(p.parent.name for p in work.rglob("shingles.tsv")) == ["k2", "k3", "k4"]
    assert len(list(work.rglob("patch_grams.tsv"))) == 3


def test_the_command_is_registered_through_the_hook(plugins):
    assert plugins.pm.hook.spamflow_register_commands.get_hookimpls()[0].plugin_name == "spamflow_quilt"
