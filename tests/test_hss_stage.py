"""The hss stage outside the demo: the map-only mrjob fingerprint job gives the same
fingerprint table as the in-process streaming map (inline and local runners; local also
checks the package zip) and the same clusters; P_miss above 1% is warned about."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spamflow_hss.fingerprint import fingerprint
from spamflow_hss.fingerprint_table import fingerprint_pages, fingerprint_pages_mapreduce, read_fingerprints
from spamflow_hss.mr_fingerprint import fingerprint_line


def _page_part(path, count: int, rng: np.random.Generator) -> None:
    noises = ["".join(rng.choice(list('<>="/ \n\t-.;:&«»\u00a0')) for _ in range(int(rng.integers(0, 600))))
              for _ in range(count)]
    pq.write_table(pa.table({
        "doc_id": pa.array(rng.choice(1 << 62, count, replace=False), pa.int64()),
        "snapshot": ["2026-01"] * count, "url": [f"http://h{i % 7}.example/p{i}" for i in range(count)],
        "host": [f"h{i % 7}.example" for i in range(count)], "domain": [f"h{i % 7}.example" for i in range(count)],
        "ip": [None if i % 5 == 0 else f"127.0.0.{i % 3}" for i in range(count)], "noise": noises}), path)


def test_fingerprint_line_is_procedure_1():
    noise = "<a href=\"\">\t\n</a>" * 4
    doc_id, value = fingerprint_line("17\t" + json.dumps(noise), 8, 16, 3)
    ngrams, hexed = value.split("\t")
    expected = fingerprint(noise, 8, 16, 3)
    assert doc_id == "17" and int(ngrams) == len(noise) - 8 + 1
    assert np.frombuffer(bytes.fromhex(hexed), ">u8").astype(np.uint64).tolist() == expected.tolist()


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_mrjob_fingerprints_equal_the_streaming_map(tmp_path, runner):
    rng = np.random.default_rng(4)
    parts = []
    for i in range(2):
        parts.append(tmp_path / f"pages-{i}.parquet")
        _page_part(parts[-1], 30, rng)
    local_counts = fingerprint_pages(parts, tmp_path / "local", 32, 128, 0)
    mr_counts = fingerprint_pages_mapreduce(parts, tmp_path / "mr", tmp_path / "work", 32, 128, 0, runner)
    assert mr_counts == local_counts and local_counts["pages"] == 60 and local_counts["short_pages"] > 0
    for i in range(2):
        a = pq.read_table(tmp_path / "local" / f"part-{i:05d}.parquet")
        b = pq.read_table(tmp_path / "mr" / f"part-{i:05d}.parquet")
        assert a.equals(b)
        assert np.array_equal(read_fingerprints(a, 128), read_fingerprints(b, 128))


def _template_pages(folder, rng: np.random.Generator) -> None:
    """Three 'templates' (1,000 noise characters) on 5 hosts each, every page with 3 random
    edits, plus 10 unrelated pages: one page-table part."""
    alphabet = list('<>="/ \n\t-.;:&#')
    templates = ["".join(rng.choice(alphabet, 1000)) for _ in range(3)]
    noises, hosts = [], []
    for t, template in enumerate(templates):
        for page in range(10):
            text = list(template)
            for _ in range(3):
                text.insert(int(rng.integers(0, len(text))), str(rng.choice(alphabet)))
            noises.append("".join(text))
            hosts.append(f"t{t}-h{page % 5}.example")
    noises += ["".join(rng.choice(alphabet, 1000)) for _ in range(10)]
    hosts += [f"other{i}.example" for i in range(10)]
    folder.mkdir()
    pq.write_table(pa.table({
        "doc_id": pa.array(np.arange(len(noises)) + 1000, pa.int64()), "snapshot": ["2026-01"] * len(noises),
        "url": [f"http://{h}/{i}" for i, h in enumerate(hosts)], "host": hosts, "domain": hosts,
        "ip": ["127.0.0.1"] * len(noises), "noise": noises}), folder / "part-00000.parquet")


def test_the_stage_gives_the_same_clusters_with_and_without_mapreduce(tmp_path):
    from spamflow.detector import StageContext, StageOutputs
    from spamflow_hss.detector import HSSDetector
    from spamflow_hss.params import HSSParams

    _template_pages(tmp_path / "pages", np.random.default_rng(6))
    parse = StageOutputs("parse", tmp_path, {"pages": tmp_path / "pages"}, {})
    results = {}
    for mapreduce in (False, True):
        outdir = tmp_path / f"out-{mapreduce}"
        outdir.mkdir()
        result = HSSDetector().run(StageContext(HSSParams(mapreduce=mapreduce), {"parse": parse}, outdir))
        clusters = [json.loads(line) for line in open(outdir / result.outputs["clusters"])]
        results[mapreduce] = (clusters, pq.read_table(outdir / result.outputs["page_clusters"]))
    assert results[False][0] == results[True][0]
    assert results[False][1].equals(results[True][1])
    clusters = results[False][0]
    assert sorted(c["size"] for c in clusters) == [10, 10, 10] and all(c["domains"] == 5 for c in clusters)
    for cluster in clusters:  # one cluster per template, nothing else in it
        assert len({(doc_id - 1000) // 10 for doc_id in cluster["members"]}) == 1


def test_a_p_miss_above_one_percent_is_warned_about_and_counted(tmp_path, caplog):
    from spamflow.detector import StageContext, StageOutputs
    from spamflow_hss.detector import HSSDetector
    from spamflow_hss.params import HSSParams

    _template_pages(tmp_path / "pages", np.random.default_rng(7))
    parse = StageOutputs("parse", tmp_path, {"pages": tmp_path / "pages"}, {})
    (tmp_path / "out").mkdir()
    with caplog.at_level("WARNING"):
        result = HSSDetector().run(StageContext(HSSParams(p=3, t=35), {"parse": parse}, tmp_path / "out"))
    assert "P_miss = 0.3801" in caplog.text and "above 1%" in caplog.text  # C(125, 35) / C(128, 35)
    assert result.counts["p_miss_above_1pct"] == 1
    summary = json.loads((tmp_path / "out" / result.outputs["summary"]).read_text())
    assert summary["p_miss_warning"] and round(summary["p_miss"], 4) == 0.3801


def test_an_empty_page_table_gives_empty_outputs(tmp_path):
    from spamflow.detector import StageContext, StageOutputs
    from spamflow_hss.detector import HSSDetector
    from spamflow_hss.params import HSSParams

    (tmp_path / "pages").mkdir()
    (tmp_path / "out").mkdir()
    parse = StageOutputs("parse", tmp_path, {"pages": tmp_path / "pages"}, {})
    result = HSSDetector().run(StageContext(HSSParams(), {"parse": parse}, tmp_path / "out"))
    assert result.counts["clusters"] == 0 and result.counts.get("pages", 0) == 0
    assert (tmp_path / "out" / "clusters.jsonl").read_text() == ""
    assert pq.read_table(tmp_path / "out" / "hosts.parquet").num_rows == 0


def test_error_pages_join_no_cluster_in_either_engine(tmp_path):
    """Issue 35 item 4: HTTP >= 400 and soft 404 pages (spamflow/mundane.py) join no cluster.
    Template 0's ten pages are a server's 404 page on five domains (status 404); two pages of
    template 1 are soft 404s (status 200, tiny, "not found"); template 2 is left alone."""
    from spamflow.detector import StageContext, StageOutputs
    from spamflow_hss.detector import HSSDetector
    from spamflow_hss.params import HSSParams

    _template_pages(tmp_path / "plain", np.random.default_rng(6))
    table = pq.read_table(tmp_path / "plain" / "part-00000.parquet")
    rows = table.num_rows
    status = [404 if i < 10 else 200 for i in range(rows)]
    title = ["Page not found" if i in (10, 11) else "Welcome" for i in range(rows)]
    words = [["sorry", "nothing", "here"] if i in (10, 11) else [f"w{j}" for j in range(150)] for i in range(rows)]
    links = pa.array([[{"url": "http://x.example/", "anchor": "w0"}]] * rows,
                     pa.list_(pa.struct([("url", pa.string()), ("anchor", pa.string())])))
    table = table.append_column("status", pa.array(status, pa.int32())).append_column("title", pa.array(title))
    table = table.append_column("words", pa.array(words)).append_column("links", links)
    (tmp_path / "pages").mkdir()
    pq.write_table(table, tmp_path / "pages" / "part-00000.parquet")
    parse = StageOutputs("parse", tmp_path, {"pages": tmp_path / "pages"}, {})
    results = {}
    for engine in ("memory", "mapreduce"):
        outdir = tmp_path / f"out-{engine}"
        outdir.mkdir()
        result = HSSDetector().run(StageContext(HSSParams(engine=engine, t="auto"), {"parse": parse}, outdir))
        clusters = [json.loads(line) for line in open(outdir / result.outputs["clusters"])]
        results[engine] = clusters
        assert (result.counts["error_pages_http_error"], result.counts["error_pages_soft_404"]) == (10, 2)
        summary = json.loads((outdir / result.outputs["summary"]).read_text())
        # the null: every cross-domain pair of the 28 other pages (domain sizes 1,1,2,2,2; 2 x 5; 1 x 10)
        assert summary["threshold"]["pairs"] == (28 * 28 - (1 + 1 + 4 + 4 + 4 + 5 * 4 + 10)) // 2 == 370
    assert results["memory"] == results["mapreduce"]
    members = sorted(sorted(c["members"]) for c in results["memory"])
    assert members == [list(range(1012, 1020)), list(range(1020, 1030))]
    # the paper's behaviour: the error pages cluster like any others
    outdir = tmp_path / "out-paper"
    outdir.mkdir()
    result = HSSDetector().run(StageContext(HSSParams(exclude_error_pages=False), {"parse": parse}, outdir))
    assert sorted(c["size"] for c in map(json.loads, open(outdir / result.outputs["clusters"]))) == [10, 10, 10]
    assert result.counts["error_pages_http_error"] == 0


@pytest.mark.parametrize("columns", [("status", "title", "words", "links"), ("words",), ("status", "links")])
def test_error_pages_are_the_rule_applied_row_by_row(tmp_path, columns):
    """``error_pages`` reads columns and anchors batch by batch; it finds what
    ``mundane.page_reason`` finds on each row of ``to_pylist()`` (the definition), over
    several batches, with null and empty link lists, null anchors and absent columns."""
    from spamflow.mundane import Rules, page_reason
    from spamflow_hss.detector import error_pages
    from spamflow_hss.params import HSSParams

    rng = np.random.default_rng(5)
    n = 5000
    vocab = ["page", "not", "found", "error", "404", "home", "news", "does", "exist", "sorry"]
    link = pa.struct([("url", pa.string()), ("anchor", pa.string())])
    data = {
        "doc_id": pa.array(np.arange(n, dtype=np.int64) * 3),
        "status": pa.array([int(rng.choice([200, 301, 404, 500])) if i % 7 else None for i in range(n)], pa.int32()),
        "title": pa.array([str(rng.choice(["Home", "Not found", "Error 404", ""])) if i % 5 else None for i in range(n)]),
        "words": pa.array([[str(w) for w in rng.choice(vocab, int(rng.integers(0, 140)))] if i % 11 else None
                           for i in range(n)]),
        "links": pa.array([None if i % 13 == 0 else
                           [{"url": "http://a.example/", "anchor": None if j % 4 == 0 else str(rng.choice(vocab))}
                            for j in range(int(rng.integers(0, 4)))] for i in range(n)], pa.list_(link)),
    }
    table = pa.table({name: data[name] for name in ("doc_id", *columns)})
    pq.write_table(table, tmp_path / "part-0.parquet", row_group_size=1500)
    params = HSSParams()
    rules = Rules.of(True, params.soft_404_max_words, params.soft_404_phrases, min_article_words=0)
    expected = {}
    for row in table.to_pylist():
        reason = page_reason(rules, row.get("status"), row.get("title"), row.get("words") or [],
                             ((link_row["anchor"] or "") for link_row in row.get("links") or []))
        if reason is not None:
            expected[row["doc_id"]] = reason
    got = error_pages([tmp_path / "part-0.parquet"], params)
    assert got == expected
    # each reason the columns allow is met: a status for http_error, a title or words for soft_404
    assert set(expected.values()) == ({"http_error"} if "status" in columns else set()) | \
        ({"soft_404"} if {"title", "words"} & set(columns) else set())
