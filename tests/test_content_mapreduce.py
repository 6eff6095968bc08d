"""The content stage on MapReduce (engine: mapreduce) against the in-process engine: the same
pages.parquet, hosts.parquet, BM25 and temporal matrices, corpus statistics and counts on the
inline, local and Spark local[2] runners, floats within 1e-12 relative (sums may add up in
another order); the corpus job's counts against a count by hand; the query_terms and
corpus_stats files behaving the same on both engines.  On mrjob's ``hadoop`` runner (a strict
Hadoop streaming emulation): ``tests/test_hadoop_runner.py``."""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp

from spamflow.config import parse_config
from spamflow.demo import write_demo
from spamflow.detector import RunSettings, StageContext, StageOutputs
from spamflow.parse.pages import PAGE_SCHEMA
from spamflow.plan import plan_run
from spamflow.plugins import build_plugins
from spamflow_content.corpus import CorpusStats
from spamflow_content.detector import ContentDetector, featurise
from spamflow_content.measures import TOP_K
from spamflow_content.params import ContentParams
from spamflow_content.text import STOP_WORDS, stem_words

from conftest import ingest_and_parse
from content_pages import page_row

RTOL = 1e-12
"""Relative tolerance between the engines: float sums may run in another order."""


def _close(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b)) or abs(a - b) <= RTOL * max(abs(a), abs(b))


def assert_tables_close(a, b, keys: list[str], where: str) -> None:
    """Same schema and rows (sorted by ``keys``), floats within ``RTOL`` relative."""
    assert a.schema == b.schema, where
    a, b = a.sort_by([(k, "ascending") for k in keys]), b.sort_by([(k, "ascending") for k in keys])
    assert a.num_rows == b.num_rows, where
    for name in a.column_names:
        x, y = a[name].to_pylist(), b[name].to_pylist()
        if a.schema.field(name).type == "double":
            bad = [(i, u, v) for i, (u, v) in enumerate(zip(x, y)) if not _close(u, v)]
            assert not bad, f"{where}.{name}: {bad[:3]}"
        else:
            assert x == y, f"{where}.{name}"


def assert_runs_equal(a: Path, b: Path, result_a, result_b) -> None:
    """Every output of two content runs equal within ``RTOL``, and the same counts."""
    assert result_a.outputs == result_b.outputs
    assert result_a.counts == result_b.counts
    assert_tables_close(pq.read_table(a / "pages.parquet"), pq.read_table(b / "pages.parquet"),
                        ["snapshot", "host", "doc_id"], "pages")
    assert_tables_close(pq.read_table(a / "hosts.parquet"), pq.read_table(b / "hosts.parquet"),
                        ["snapshot", "host"], "hosts")
    for name, rel in result_a.outputs.items():
        if rel.endswith(".npz"):
            x, y = sp.load_npz(a / rel).toarray(), sp.load_npz(b / rel).toarray()
            assert x.shape == y.shape and np.allclose(x, y, rtol=RTOL, atol=0), name
        elif rel.endswith(".txt"):
            assert (a / rel).read_text() == (b / rel).read_text(), name
    sa, sb = CorpusStats.load(a / "corpus_stats.json"), CorpusStats.load(b / "corpus_stats.json")
    assert (sa.corpus_words, sa.query_terms, sa.vocabulary, sa.n_hosts) == \
        (sb.corpus_words, sb.query_terms, sb.vocabulary, sb.n_hosts)
    assert sorted(sa.idf) == sorted(sb.idf)
    for snapshot in sa.idf:
        assert np.allclose(sa.idf[snapshot], sb.idf[snapshot], rtol=RTOL, atol=0)
        assert _close(sa.avdl[snapshot], sb.avdl[snapshot])


def run_content(pages: Path, out: Path, params: ContentParams, runner: str | None,
                runner_args: tuple[str, ...] = (), stats: CorpusStats | None = None):
    """One content run over the page table at ``pages``: in process (runner None) or as the
    MapReduce jobs on ``runner``."""
    out.mkdir(parents=True)
    settings = None if runner is None else RunSettings(runner=runner, runner_args=runner_args, progress=False)
    return featurise(ds.dataset(pages, format="parquet"), out, params, stats, Counter(), mapreduce=settings)


@pytest.fixture(scope="module")
def demo_pages(tmp_path_factory) -> Path:
    """The demo web (two snapshots, 108 host rows) through ingest and parse: five Parquet parts."""
    folder = tmp_path_factory.mktemp("content-mr-demo")
    summary = write_demo(folder / "warcs", 0)
    ingest_and_parse(folder, sorted(Path(f) for f in summary["files"] if f.endswith(".warc.gz")))
    return folder / "parse" / "pages"


@pytest.fixture(scope="module")
def in_memory(demo_pages, tmp_path_factory):
    out = tmp_path_factory.mktemp("content-mr-memory") / "out"
    return out, run_content(demo_pages, out, ContentParams(), None)


@pytest.fixture(scope="module")
def on_inline(demo_pages, tmp_path_factory):
    out = tmp_path_factory.mktemp("content-mr-inline") / "out"
    return out, run_content(demo_pages, out, ContentParams(), "inline")


def small_pages(folder: Path) -> Path:
    """Three hosts over two snapshots in two parts, host a's pages split over both parts, one
    page without a host: the reducer must merge a host's pages and counts from two mappers."""
    rows = [
        page_row("http://a.example/", "welcome to the garden shop roses and tools".split(), title="Garden shop",
                 links=[("http://a.example/roses.html", "our roses")]),
        page_row("http://a.example/roses.html", "roses roses and more roses for the garden".split(), title="Roses"),
        page_row("http://a.example/tools.html", "garden tools spades rakes and hoes".split(),
                 links=[("http://a.example/roses.html", "roses")]),
        page_row("http://b.example/index.html", "cheap casino casino bonus poker win cheap".split(), title="B"),
        page_row("http://b.example/win.html", "win win win casino bonus now".split()),
        page_row("http://c.example/", "a page about garden birds and roses".split(), snapshot="2026-02"),
        page_row("http://a.example/", "welcome to the garden shop new roses".split(), snapshot="2026-02"),
        {**page_row("http://d.example/x", "no host here".split()), "host": ""},
    ]
    folder.mkdir(parents=True)
    for i, part in enumerate((rows[0::2], rows[1::2])):
        pq.write_table(pa.Table.from_pylist(part, schema=PAGE_SCHEMA), folder / f"part-{i:05d}.parquet")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("runner", ["inline", "local"])
def test_engines_give_the_same_outputs_on_the_demo(runner, demo_pages, in_memory, on_inline, tmp_path):
    mem_out, mem = in_memory
    if runner == "inline":
        out, result = on_inline
    else:
        out = tmp_path / runner
        result = run_content(demo_pages, out, ContentParams(), runner)
    assert mem.counts["sampled_pages"] > 700 and mem.counts["host_rows"] > 100  # the demo, not an empty table
    assert_runs_equal(mem_out, out, mem, result)


@pytest.mark.slow
def test_corpus_job_counts_like_a_count_by_hand(demo_pages, on_inline):
    """Job 1's word counts and term postings against Python counters over the sampled pages."""
    out, _ = on_inline
    sample = set(pq.read_table(out / "work" / "sample.parquet")["doc_id"].to_pylist())
    words: Counter[str] = Counter()
    terms: dict[str, Counter[str]] = {}
    for row in ds.dataset(demo_pages, format="parquet").to_table(
            columns=["doc_id", "snapshot", "host", "words"]).to_pylist():
        if row["doc_id"] not in sample:
            continue
        words.update(row["words"] or [])
        kept = [w for w in row["words"] or [] if w not in STOP_WORDS]
        for term in stem_words(kept):
            terms.setdefault(term, Counter())[f"{row['snapshot']}\t{row['host']}"] += 1
    got_words, got_terms = {}, {}
    for line in (out / "work" / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        key, value = (json.loads(f) for f in line.split("\t"))
        kind, name = key.split("\t")
        (got_words if kind == "w" else got_terms)[name] = value
    assert got_words == {w: n for w, n in words.items() if w not in STOP_WORDS}
    assert got_terms == {t: sorted([d, n] for d, n in docs.items()) for t, docs in terms.items()}
    ranked = sorted((w for w in words if w not in STOP_WORDS), key=lambda w: (-words[w], w))[:max(TOP_K)]
    assert CorpusStats.load(out / "corpus_stats.json").corpus_words == ranked


@pytest.mark.slow
def test_query_terms_file_and_corpus_stats_same_on_both_engines(demo_pages, in_memory, tmp_path):
    """A query_terms file (a stop word and a repeat dropped, a comment skipped) and a saved
    corpus_stats file: both engines read them the same way and agree."""
    terms = tmp_path / "terms.txt"
    terms.write_text("# my queries\ngarden\nThe\ncasino\ngarden\nroses\n", encoding="utf-8")
    params = ContentParams(query_terms=str(terms))
    mem = run_content(demo_pages, tmp_path / "qm", params, None)
    mr = run_content(demo_pages, tmp_path / "qr", params, "inline")
    assert_runs_equal(tmp_path / "qm", tmp_path / "qr", mem, mr)
    assert CorpusStats.load(tmp_path / "qr" / "corpus_stats.json").query_terms == ["garden", "casino", "roses"]

    stats = CorpusStats.load(in_memory[0] / "corpus_stats.json")
    params = ContentParams(corpus_stats=str(in_memory[0] / "corpus_stats.json"))
    mem = run_content(demo_pages, tmp_path / "sm", params, None, stats=stats)
    mr = run_content(demo_pages, tmp_path / "sr", params, "inline", stats=stats)
    assert_runs_equal(tmp_path / "sm", tmp_path / "sr", mem, mr)
    assert CorpusStats.load(tmp_path / "sr" / "corpus_stats.json").vocabulary == stats.vocabulary


@pytest.mark.parametrize("text, message", [(None, "cannot read .*terms.txt: .*No such file"),
                                           ("# only a comment\nthe\n", ".*terms.txt has no terms")])
def test_bad_query_terms_file_is_the_same_error_on_both_engines(text, message, tmp_path):
    pages = small_pages(tmp_path / "pages")
    terms = tmp_path / "terms.txt"
    if text is not None:
        terms.write_text(text, encoding="utf-8")
    for runner in (None, "inline"):
        with pytest.raises(ValueError, match=f"detectors.content.query_terms: {message}"):
            run_content(pages, tmp_path / f"out-{runner}", ContentParams(query_terms=str(terms)), runner)


def test_small_table_split_over_parts_and_a_page_without_host(tmp_path, monkeypatch):
    import spamflow_content.mapreduce

    monkeypatch.setattr(spamflow_content.mapreduce, "READ_ROWS", 2)  # the driver reads the output in chunks
    pages = small_pages(tmp_path / "pages")
    params = ContentParams(min_df=0.0, max_df=1.0)
    mem = run_content(pages, tmp_path / "m", params, None)
    mr = run_content(pages, tmp_path / "r", params, "inline")
    assert_runs_equal(tmp_path / "m", tmp_path / "r", mem, mr)
    hosts = pq.read_table(tmp_path / "r" / "hosts.parquet").to_pylist()
    assert [(h["snapshot"], h["host"], h["pages"]) for h in hosts] == [
        ("2026-01", "a.example", 3), ("2026-01", "b.example", 2), ("2026-02", "a.example", 1),
        ("2026-02", "c.example", 1)]
    assert mr.counts["skipped_no_host"] == 1


def test_no_pages_with_a_host_gives_the_same_empty_outputs(tmp_path):
    folder = tmp_path / "pages"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist([{**page_row("http://d.example/x", ["x"]), "host": ""}], schema=PAGE_SCHEMA),
                   folder / "part-00000.parquet")
    mem = run_content(folder, tmp_path / "m", ContentParams(), None)
    mr = run_content(folder, tmp_path / "r", ContentParams(), "inline")
    assert_runs_equal(tmp_path / "m", tmp_path / "r", mem, mr)
    assert pq.read_table(tmp_path / "r" / "hosts.parquet").num_rows == 0


def _stage_run(pages: Path, out: Path, params: ContentParams, runner: str = "inline"):
    out.mkdir(parents=True)
    parse = StageOutputs("parse", pages.parent, {"pages": pages}, {})
    return ContentDetector().run(StageContext(params, {"parse": parse}, out, RunSettings(runner=runner,
                                                                                         progress=False)))


def test_engine_choice_and_execution_keys(tmp_path):
    """engine and mapreduce_above choose how the stage runs, not what it makes: they are
    execution keys; auto runs the jobs above the threshold only (``work/`` holds their inputs)."""
    assert ContentParams.execution_keys == {"engine", "mapreduce_above"}
    plugins = build_plugins()

    def planned(params: str):
        text = f"workdir: out\ninput: {{demo: {{seed: 0}}}}\ndetectors:\n  content: {params}\n"
        return plan_run(parse_config(text, plugins, path=tmp_path / "c.yaml"), plugins)["content"]

    base = planned("{}")
    assert planned("{engine: mapreduce, mapreduce_above: 0}").signature == base.signature
    assert planned("{engine: mapreduce}").params["engine"] == "mapreduce"
    assert planned("{max_pages: 5}").signature != base.signature
    pages = small_pages(tmp_path / "pages")  # 8 pages
    _stage_run(pages, tmp_path / "auto", ContentParams())
    _stage_run(pages, tmp_path / "above", ContentParams(mapreduce_above=7))
    _stage_run(pages, tmp_path / "forced", ContentParams(engine="mapreduce"))
    _stage_run(pages, tmp_path / "memory", ContentParams(engine="memory", mapreduce_above=0))
    assert [(tmp_path / name / "work").exists() for name in ("auto", "above", "forced", "memory")] == \
        [False, True, True, False]
    assert (tmp_path / "above" / "work" / "parts.txt").read_text().splitlines() == \
        [str(p.resolve()) for p in sorted(pages.glob("*.parquet"))]


def test_job_modules_need_only_the_word_rule_of_spamflow():
    """The jobs run where only their zipped package and spamflow's (for spamflow.words) are
    shipped: they import no other spamflow module, nor scikit-learn (its import is slow)."""
    code = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith("spamflow.") and name != "spamflow.words":
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
import spamflow_content.mr_content_corpus, spamflow_content.mr_content_pages
print("sklearn" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr


@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None or not shutil.which("java"),
                    reason="needs pyspark (pip install -e '.[test]') and a Java runtime")
@pytest.mark.slow
def test_spark_local_mode_equals_in_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")  # keep Spark on loopback
    pages = small_pages(tmp_path / "pages")
    params = ContentParams(min_df=0.0, max_df=1.0)
    mem = run_content(pages, tmp_path / "m", params, None)
    mr = run_content(pages, tmp_path / "s", params, "spark", ("--spark-master", "local[2]"))
    assert_runs_equal(tmp_path / "m", tmp_path / "s", mem, mr)


def test_a_part_the_workers_cannot_open_is_named(tmp_path):
    from spamflow.errors import SpamflowError
    from spamflow_content.mapreduce import JobInputs
    from spamflow_content.mr_content_corpus import MRContentCorpus

    pages = small_pages(tmp_path / "pages")
    run_content(pages, tmp_path / "r", ContentParams(), "inline")
    (tmp_path / "parts.txt").write_text(str(tmp_path / "gone" / "part-00009.parquet") + "\n")
    inputs = JobInputs(tmp_path / "parts.txt", tmp_path / "r" / "work" / "sample.parquet", "inline", ())
    with pytest.raises(SpamflowError, match=r"MRContentCorpus failed on the 'inline' runner: .*gone/part-00009\.parquet"):
        inputs.run(MRContentCorpus, tmp_path / "out.jsonl", [])
