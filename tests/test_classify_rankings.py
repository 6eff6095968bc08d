"""Spam rankings (``percentile trec-id``, the Waterloo rankings of ClueWeb09/12) as labels:
reading plain and gzipped files with bad lines counted by file and line, the host rule
(median percentile of a host's ranked pages below the threshold) on a hand-worked example,
pages mapped to hosts by the page table's ``trec_id`` column or a ``trec_id<TAB>url`` file,
and ``spamflow train/score/evaluate --rankings`` with AUCs checked against scikit-learn."""

from __future__ import annotations

import gzip
import json
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sklearn.metrics import roc_auc_score

from spamflow.errors import BadInputError
from spamflow_ensemble.rankings import (
    host_rankings,
    map_from_pages,
    ranking_labels,
    read_rankings,
    read_rankings_map,
)

ID = "clueweb09-en0000-00-{:05d}".format

RANKINGS_WITH_BAD_LINES = (
    f"23 {ID(1)}\n"                  # 1
    f"0 {ID(2)}\n"                   # 2
    "\n"                             # 3 blank: skipped, not a bad line
    f"99 {ID(3)}\n"                  # 4
    f"100 {ID(4)}\n"                 # 5 percentile out of range
    f"{ID(5)} 40\n"                  # 6 fields swapped: percentile not a number
    f"-1 {ID(6)}\n"                  # 7 negative
    f"12.5 {ID(7)}\n"                # 8 not whole
    f"40 {ID(8)} extra\n"            # 9 three fields
    f"55\n"                          # 10 one field
    f"61 {ID(2)}\n"                  # 11 repeated id: the first line (0) is kept
    f"7 {ID(9)}\n"                   # 12
)
GOOD = {ID(1): 23, ID(2): 0, ID(3): 99, ID(9): 7}
BAD = {"percentile": 4, "fields": 2, "duplicate_id": 1}
BAD_LINES = [5, 6, 7, 8, 9, 10, 11]


@pytest.mark.parametrize("gzipped", [False, True])
def test_rankings_file_plain_and_gzipped_bad_lines_counted_with_file_and_line(tmp_path, gzipped):
    path = tmp_path / ("ranks.gz" if gzipped else "ranks.txt")
    data = RANKINGS_WITH_BAD_LINES.encode()
    path.write_bytes(gzip.compress(data) if gzipped else data)
    got = read_rankings([path])
    assert got.percentile == GOOD
    assert got.bad.counts == BAD and got.bad.total == 7
    assert got.lines == 11 and got.ranked_lines == 5  # 11 non-blank lines, 5 well formed (one a repeat)
    assert [int(e.split(":")[1]) for e in got.bad.examples] == BAD_LINES
    assert all(e.startswith(f"{path}:") for e in got.bad.examples)
    # only the ids asked for are kept; bad lines are still all counted
    wanted = read_rankings([path], {ID(9), ID(4)})
    assert wanted.percentile == {ID(9): 7} and wanted.bad.counts == {"percentile": 4, "fields": 2}


def test_truncated_gzip_keeps_what_was_read_and_reports_where_it_broke(tmp_path):
    lines = "".join(f"{i % 100} {ID(i)}\n" for i in range(20000))
    packed = gzip.compress(lines.encode(), compresslevel=1)
    path = tmp_path / "cut.gz"
    path.write_bytes(packed[: len(packed) // 2])
    got = read_rankings([path])
    assert got.bad.counts == {"unreadable": 1}
    assert 0 < len(got.percentile) < 20000
    assert all(got.percentile[ID(i)] == i % 100 for i in range(len(got.percentile)))  # a prefix, correct
    assert got.bad.examples[0].startswith(f"{path}:{len(got.percentile) + 1}: the rest of the file cannot be read")


def test_missing_rankings_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(BadInputError, match=r"nothere\.gz does not exist"):
        read_rankings([tmp_path / "nothere.gz"])


# Hand-worked host rule (threshold 70): a host is spam when the median percentile of its ranked pages is < 70.
#   a.com  pages 10, 80, 60      median 60            -> spam
#   b.org  pages 75, 90          median 82.5          -> nonspam
#   c.net  pages 60, 80          median (60+80)/2=70  -> nonspam (70 is not below 70)
#   d.info page 69               median 69            -> spam
#   e.com  pages 50, 95, 96, 20  median (50+95)/2=72.5 -> nonspam although half its pages are spam
#   f.com  one page, not ranked                       -> no label
HOST_PAGES = {"a.com": [10, 80, 60], "b.org": [75, 90], "c.net": [60, 80], "d.info": [69], "e.com": [50, 95, 96, 20],
              "f.com": [None]}
EXPECTED_70 = {"a.com": ("spam", 60), "b.org": ("nonspam", 82.5), "c.net": ("nonspam", 70), "d.info": ("spam", 69),
               "e.com": ("nonspam", 72.5)}


def _write_corpus(tmp_path: Path, gzipped: bool) -> tuple[Path, Path]:
    """A rankings file and a trec_id<TAB>url map of HOST_PAGES."""
    ranks, mapping, n = [], ["trec_id\turl"], 0
    for host, values in HOST_PAGES.items():
        for value in values:
            n += 1
            mapping.append(f"{ID(n)}\thttp://{host.upper() if n % 2 else host}:80/page{n}.html")
            if value is not None:
                ranks.append(f"{value} {ID(n)}")
    ranks.append(f"3 {ID(999)}")  # ranked but in no crawled page
    rank_path = tmp_path / ("ranks.gz" if gzipped else "ranks.txt")
    data = ("\n".join(reversed(ranks)) + "\n").encode()
    rank_path.write_bytes(gzip.compress(data) if gzipped else data)
    map_path = tmp_path / "map.tsv"
    map_path.write_text("\n".join(mapping) + "\n")
    return rank_path, map_path


@pytest.mark.parametrize("gzipped", [False, True])
def test_host_rule_median_below_threshold_hand_worked(tmp_path, gzipped):
    rank_path, map_path = _write_corpus(tmp_path, gzipped)
    pages = read_rankings_map(map_path)
    assert pages.bad.total == 0 and len(pages.by_id) == 13
    ranked = host_rankings(read_rankings([rank_path], set(pages.by_id)), pages, 70)
    assert {h: (r.label, r.median) for (_, h), r in ranked.items()} == EXPECTED_70
    # independent: the statistics module's median of the lists above
    assert all(ranked[("", h)].median == statistics.median(v) for h, v in HOST_PAGES.items() if h != "f.com")
    at_75 = host_rankings(read_rankings([rank_path]), pages, 75)
    assert {h for (_, h), r in at_75.items() if r.label == "spam"} == {"a.com", "c.net", "d.info", "e.com"}

    hosts = ["a.com", "b.org", "c.net", "d.info", "e.com", "f.com", "g.com"]
    got = ranking_labels([rank_path], ["2009"] * len(hosts), hosts, map_path=map_path)
    assert got.labels() == ["spam", "nonspam", "nonspam", "spam", "nonspam", None, None]
    assert got.medians() == [60, 82.5, 70, 69, 72.5, None, None]
    r = got.report
    assert (r["lines"], r["ranked_lines"], r["bad_lines"], r["map_pages"]) == (13, 13, 0, 13)
    assert (r["pages_ranked"], r["pages_unranked"], r["hosts_ranked"], r["hosts_ranked_spam"]) == (12, 1, 5, 2)
    assert r["rows_labelled"] == 5 and r["threshold"] == 70


def test_rankings_map_bad_lines_counted(tmp_path):
    path = tmp_path / "map.tsv"
    path.write_text(f"{ID(1)}\thttp://a.com/\n{ID(2)} http://b.com/\n{ID(3)}\tnot a url\n{ID(1)}\thttp://c.com/\n"
                    f"{ID(4)}\thttp://d.com/\textra\n{ID(5)}\thttps://WWW.E.com./x\n")
    got = read_rankings_map(path)
    assert got.by_id == {ID(1): ("", "a.com"), ID(5): ("", "www.e.com")}
    assert got.bad.counts == {"fields": 2, "url": 1, "duplicate_id": 1}
    assert [int(e.split(":")[1]) for e in got.bad.examples] == [2, 3, 4, 5]


def _page_table(tmp_path: Path, with_trec_id: bool) -> Path:
    """A page table (a folder of Parquet parts, as parse writes it) with two snapshots."""
    rows = [("2009", "a.com", ID(1)), ("2009", "a.com", ID(2)), ("2009", "a.com", ID(3)),
            ("2012", "a.com", "clueweb12-0000tw-00-00001"), ("2012", "b.org", None), ("2012", "b.org", "clueweb12-0000tw-00-00002")]
    pages = tmp_path / "pages"
    pages.mkdir()
    cols = {"snapshot": [r[0] for r in rows], "host": [r[1] for r in rows], "url": [f"http://{r[1]}/" for r in rows]}
    if with_trec_id:
        cols["trec_id"] = pa.array([r[2] for r in rows], pa.string())
    pq.write_table(pa.table(cols), pages / "part-00000.parquet")
    return pages


def test_page_table_trec_id_maps_pages_per_snapshot(tmp_path):
    pages = _page_table(tmp_path, with_trec_id=True)
    ranks = tmp_path / "ranks.txt"
    ranks.write_text(f"10 {ID(1)}\n20 {ID(2)}\n90 {ID(3)}\n85 clueweb12-0000tw-00-00001\n5 clueweb12-0000tw-00-00002\n")
    mapped = map_from_pages(pages)
    assert mapped is not None and mapped.pages_without_id == 1 and len(mapped.by_id) == 5
    got = ranking_labels([ranks], ["2009", "2012", "2012", "2009"], ["a.com", "a.com", "b.org", "b.org"], pages)
    # a.com: spam in 2009 (median of 10, 20, 90 is 20), nonspam in 2012 (85); b.org ranked in 2012 only
    assert got.labels() == ["spam", "nonspam", "spam", None]
    assert got.medians() == [20, 85, 5, None]


def test_no_way_to_map_trec_ids_is_an_error_saying_what_to_give(tmp_path):
    pages = _page_table(tmp_path, with_trec_id=False)
    ranks = tmp_path / "ranks.txt"
    ranks.write_text(f"10 {ID(1)}\n")
    assert map_from_pages(pages) is None
    with pytest.raises(BadInputError, match="has no trec_id column: give --rankings-map"):
        ranking_labels([ranks], ["2009"], ["a.com"], pages)
    with pytest.raises(BadInputError, match="there is no page table: give --rankings-map"):
        ranking_labels([ranks], [""], ["a.com"])
    for bad in (0, 101):
        with pytest.raises(BadInputError, match=f"threshold must be a percentile in 1..100, not {bad}"):
            ranking_labels([ranks], [""], ["a.com"], threshold=bad)


def _spamflow(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    out = subprocess.run([sys.executable, "-m", "spamflow_workflows", *args], capture_output=True, text=True, timeout=600)
    assert (out.returncode == 0) == ok, out.stdout + out.stderr
    return out


@pytest.mark.slow
def test_train_score_evaluate_with_rankings_labels(tmp_path):
    """120 hosts with 1-4 ranked pages each; the host labels, the classifier's AUC and each
    feature's AUC are recomputed here from the written files (median by hand, AUC by sklearn)."""
    rng = np.random.default_rng(7)
    n = 120
    hosts = [f"www.site{i}.com" if i % 3 else f"site{i}.org" for i in range(n)]
    spammy = rng.random(n) < 0.35
    ranks, mapping, page_values = [], [], {}
    page = 0
    for host, spam in zip(hosts, spammy):
        values = []
        for _ in range(int(rng.integers(1, 5))):
            page += 1
            value = int(rng.integers(0, 60) if spam else rng.integers(50, 100))
            ranks.append(f"{value} {ID(page)}")
            mapping.append(f"{ID(page)}\thttp://{host}/p{page}")
            values.append(value)
        page_values[host] = values
    ranks.insert(5, "this line is bad")
    ranks.insert(40, f"123 {ID(1)}")
    (tmp_path / "ranks.gz").write_bytes(gzip.compress(("\n".join(ranks) + "\n").encode()))
    (tmp_path / "map.tsv").write_text("\n".join(mapping) + "\n")
    truth = np.array([statistics.median(page_values[h]) < 70 for h in hosts])  # the documented rule, by hand
    signal = (truth + rng.normal(0, 0.7, n)).round(4)
    noise = rng.random(n).round(4)
    noise[::10] = np.nan  # hosts without a value are left out of that feature's AUC
    pq.write_table(pa.table({"host": hosts, "signal": signal, "noise": noise}), tmp_path / "feats.parquet")
    common = ["--table", str(tmp_path / "feats.parquet"), "--rankings", str(tmp_path / "ranks.gz"),
              "--rankings-map", str(tmp_path / "map.tsv")]
    knobs = ["--bags", "3", "--iterations", "10", "--folds", "3"]

    out = _spamflow("train", *common, *knobs, "-o", str(tmp_path / "m.skops"))
    assert f"{tmp_path / 'ranks.gz'}:6: expected 'percentile trec-id'" in out.stderr
    assert f"{tmp_path / 'ranks.gz'}:41: percentile is not a whole number 0..99" in out.stderr
    report = json.loads((tmp_path / "m.skops.json").read_text())
    assert report["labelled"] == n and report["rankings"]["bad"] == {"fields": 1, "percentile": 1}
    assert report["rankings"]["hosts_ranked_spam"] == int(truth.sum())

    out = _spamflow("score", *common, "-m", str(tmp_path / "m.skops"), "-o", str(tmp_path / "scores.parquet"))
    scores = pq.read_table(tmp_path / "scores.parquet")
    assert scores.column_names == ["snapshot", "host", "score", "label", "true_label", "rankings_percentile", "evidence"]
    rows = scores.to_pylist()
    assert [r["host"] for r in rows] == hosts
    assert [r["true_label"] for r in rows] == ["spam" if t else "nonspam" for t in truth]
    assert [r["rankings_percentile"] for r in rows] == [float(statistics.median(page_values[h])) for h in hosts]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    expected_auc = roc_auc_score(truth, [r["score"] for r in rows])
    assert abs(result["auc"] - expected_auc) < 1e-12

    _spamflow("evaluate", *common, *knobs, "--outer-folds", "2", "--no-progress", "-o", str(tmp_path / "ev"))
    ev = json.loads((tmp_path / "ev" / "evaluation.json").read_text())
    assert ev["hosts"] == n and ev["spam"] == int(truth.sum()) and 0.5 < ev["auc"] <= 1
    has = ~np.isnan(noise)
    by_feature = ev["auc_by_feature"]
    assert sorted(by_feature) == ["feats.noise", "feats.signal"]
    assert abs(by_feature["feats.signal"]["auc"] - roc_auc_score(truth, signal)) < 1e-12
    assert abs(by_feature["feats.noise"]["auc"] - roc_auc_score(truth[has], noise[has])) < 1e-12
    assert by_feature["feats.noise"]["hosts"] == int(has.sum()) and by_feature["feats.signal"]["hosts"] == n
    assert ev["rankings"]["rule"].startswith("host spam when the median percentile")


@pytest.mark.slow
def test_commands_refuse_labels_with_rankings_and_rankings_without_a_map(tmp_path):
    pq.write_table(pa.table({"host": ["a.com", "b.com"], "f": [1.0, 2.0]}), tmp_path / "t.parquet")
    (tmp_path / "ranks.txt").write_text(f"1 {ID(1)}\n")
    (tmp_path / "labels.csv").write_text("host,label\na.com,spam\nb.com,nonspam\n")
    common = ["evaluate", "--table", str(tmp_path / "t.parquet"), "--rankings", str(tmp_path / "ranks.txt")]
    out = _spamflow(*common, "--labels", str(tmp_path / "labels.csv"), ok=False)
    assert "give --labels or --rankings, not both" in out.stderr
    out = _spamflow(*common, ok=False)
    assert "there is no page table: give --rankings-map" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.slow
def test_demo_rankings_reproduce_the_demo_labels_and_the_stage_model(demo_once, demo_model, tmp_path):
    """Rankings written from the demo's labels (every page of a spam host below 60, of an honest
    host 70 or above, plus one outlier page on hosts with 3 or more pages) and a TREC-id map of
    the demo's page table give exactly the labels of labels/hosts.tsv, host for host: so
    ``train -c --rankings`` trains on what ``train -c --labels`` does (conftest's ``demo_model``,
    the stage's model; ``train --rankings`` itself runs in test_train_score_evaluate_with_rankings_labels),
    and `score -c --rankings` with that model gives the stage's scores and those labels."""
    import pyarrow.dataset as pads

    from spamflow.cli import demo_config_path
    from spamflow_ensemble.labels import read_labels

    stages = demo_once["manifest"]["stages"]
    labels = read_labels(Path(stages["demo"]["outputs"]["labels"]) / "hosts.tsv").by_key
    pages = pads.dataset(stages["parse"]["outputs"]["pages"], format="parquet").to_table(
        columns=["snapshot", "url", "host"])
    per_host = Counter(pages["host"].to_pylist())
    ranks, mapping, seen = [], [], Counter()
    for i, (url, host) in enumerate(zip(pages["url"].to_pylist(), pages["host"].to_pylist())):
        mapping.append(f"clueweb-demo-{i:08d}\t{url}")
        if host not in labels:
            continue
        seen[host] += 1
        spam = labels[host] == "spam"
        outlier = seen[host] == 1 and per_host[host] >= 3
        value = (99 if spam else 0) if outlier else (i % 60 if spam else 70 + i % 30)
        ranks.append(f"{value} clueweb-demo-{i:08d}")
    (tmp_path / "ranks.gz").write_bytes(gzip.compress(("\n".join(ranks) + "\n").encode()))
    (tmp_path / "map.tsv").write_text("\n".join(mapping) + "\n")
    rows = sorted(set(zip(pages["snapshot"].to_pylist(), pages["host"].to_pylist())))
    derived = ranking_labels([tmp_path / "ranks.gz"], [s for s, _ in rows], [h for _, h in rows],
                             map_path=tmp_path / "map.tsv")  # what train --rankings labels its rows with
    assert derived.labels() == [labels.get(h) for _, h in rows]
    assert derived.report["bad_lines"] == 0 and derived.report["map_pages"] == pages.num_rows
    where = ["-c", str(demo_config_path()), "--workdir", str(demo_once["workdir"]),
             "--rankings", str(tmp_path / "ranks.gz"), "--rankings-map", str(tmp_path / "map.tsv")]
    model, scores = demo_model, tmp_path / "scores.parquet"
    out = _spamflow("score", *where, "-m", str(model), "-o", str(scores))
    got = {(r["snapshot"], r["host"]): r for r in pq.read_table(scores).to_pylist()}
    assert all(r["true_label"] == labels.get(h) for (_, h), r in got.items())
    ranked = [r for r in got.values() if r["true_label"] is not None]
    assert abs(json.loads(out.stdout.strip().splitlines()[-1])["auc"]
               - roc_auc_score([r["true_label"] == "spam" for r in ranked], [r["score"] for r in ranked])) < 1e-12
    expected = pq.read_table(stages["classify"]["outputs"]["scores"]).to_pylist()
    assert expected
    for r in expected:
        mine = got[(r["snapshot"], r["host"])]
        assert abs(mine["score"] - r["score"]) < 1e-12 and mine["true_label"] == r["true_label"], r["host"]
