"""Every MapReduce job of every detector on mrjob's own ``hadoop`` runner (``-r hadoop``),
against a stand-in ``hadoop`` command (``tests/hadoop_standin.py``) whose streaming steps
are run by the strict emulation of ``tests/hadoop_streaming.py``: several map tasks over
input splits, several hash-partitioned reducers, a key-only sort with values in a seeded
random order, the combiner run 0, 1 or 2 times, each task in a clean directory with only
the shipped files and a Python that sees no source tree (a job's modules come from its
``--py-files`` zip).  So mrjob's command lines, its file shipping (``-files``) and its
output collection (``hadoop fs -cat``) are what runs.  Each result is compared with the
in-memory engine or the brute-force reference.

Not Hadoop: no JVM, no YARN, no HDFS daemon, no task retries or speculative attempts."""

from __future__ import annotations

import json
import random
from pathlib import Path

import hadoop_node
import numpy as np
import pyarrow.dataset as ds
import pytest
from hadoop_streaming import partition, read_lines, shuffled_sort, text_hash

SLOW = pytest.mark.slow  # a job on the stand-in is a dozen Python processes


@pytest.fixture(scope="module")
def hadoop(tmp_path_factory):
    """The stand-in Hadoop installation, its environment set for the module's tests."""
    root = tmp_path_factory.mktemp("hadoop")
    env = hadoop_node.install(root)
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        mp.delenv("PYTHONPATH", raising=False)  # nothing of the source tree reaches a task
        yield root


def _calls(root: Path) -> list[dict]:
    log = root / "hadoop-calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _steps_since(root: Path, before: int) -> list[dict]:
    return [c for c in _calls(root)[before:] if "jar" in c]


def _job_files(steps: list[dict]) -> set[str]:
    """The job scripts the streaming steps ran (``... python3 mr_x.py --step-num=...``)."""
    return {word for s in steps for opt in ("-mapper", "-reducer") if opt in s["args"]
            for word in s["args"][s["args"].index(opt) + 1].split() if word.endswith(".py")}


# --- the emulation itself -----------------------------------------------------------------


def test_text_hash_is_javas():
    """``WritableComparator.hashBytes``: h = 1, then h = 31 h + byte (signed), in 32 bits."""
    assert text_hash(b"") == 1
    assert text_hash(b"a") == 31 + 97
    assert text_hash(b"ab") == 31 * (31 + 97) + 98
    assert text_hash(b"\xff") == 31 - 1  # a signed byte
    assert text_hash(b"x" * 20) == _java_int(sum(120 * 31 ** i for i in range(20)) + 31 ** 20)
    assert partition(b"a", 3) == 128 % 3


def _java_int(n: int) -> int:
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n & 0x80000000 else n


def test_lines_end_as_hadoops_line_reader_ends_them():
    assert read_lines(b"a\nb\r\nc\rd") == [(0, b"a"), (2, b"b"), (5, b"c"), (7, b"d")]


def test_splits_hold_every_line_once(tmp_path):
    from hadoop_streaming import NLINE_INPUT_FORMAT, StreamingStep, input_splits

    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_bytes(b"".join(b"line %d\n" % i for i in range(50)))
    b.write_bytes(b"")
    step = StreamingStep([a, b], tmp_path / "out", "cat")
    for seed in range(5):
        splits = input_splits(step, random.Random(seed))
        assert [p for p, _ in splits] == [a, a, b]  # two splits of a, an empty file is one split
        assert [r for _, records in splits for r in records] == [b"line %d" % i for i in range(50)]
    step.inputformat = NLINE_INPUT_FORMAT
    splits = input_splits(step, random.Random(0))
    assert [records for _, records in splits[:2]] == [[b"0\tline 0"], [b"7\tline 1"]] and len(splits) == 50


def test_the_sort_is_by_key_only_and_values_come_shuffled():
    records = [(b"k", b"%d" % i) for i in range(20)] + [(b"j", b"0")]
    got = shuffled_sort(records, random.Random(0))
    assert [k for k, _ in got] == [b"j"] + [b"k"] * 20
    assert sorted(v for k, v in got if k == b"k") == sorted(v for k, v in records if k == b"k")
    assert [v for k, v in got if k == b"k"] != [v for k, v in records if k == b"k"]


JOB = """
from mrjob.job import MRJob


class Received(MRJob):
    def mapper(self, _, line):
        for word in line.split():
            yield word, int(line.split()[0])

    def combiner(self, word, values):
        yield word, len(list(values))  # a count, not a sum: right only if it runs exactly once

    def reducer(self, word, values):
        yield word, list(values)


if __name__ == "__main__":
    Received.run()
"""


@SLOW
def test_a_job_relying_on_sorted_values_or_one_combiner_run_is_caught(tmp_path):
    """The emulation breaks what Hadoop does not promise: a reducer sees its values out of
    order, and a combiner that counts instead of summing miscounts when it runs 0 or 2 times."""
    from hadoop_streaming import Emulation, StreamingStep

    script = tmp_path / "received.py"
    script.write_text(JOB)
    lines = [f"{i} {' '.join(['w'] * (i % 3 + 1))} x{i % 4}" for i in range(40)]
    data = tmp_path / "in.txt"
    data.write_text("\n".join(lines) + "\n")
    node = hadoop_node.node_python(tmp_path / "node")

    def run(name: str, combiner: bool, seed: int) -> tuple[dict[str, list[int]], list[int]]:
        cmd = "python3 received.py --step-num=0 --{}"
        step = StreamingStep([data], tmp_path / name, cmd.format("mapper"), cmd.format("combiner") if combiner else None,
                             cmd.format("reducer"), files=[(script, "received.py")])
        trace = Emulation(tmp_path / f"{name}-tasks", seed, [str(node), "/usr/bin", "/bin"]).run_step(step)
        assert trace.map_tasks == 2 and trace.reduce_tasks == 2
        parts = sorted((tmp_path / name).glob("part-*"))
        assert [p.name for p in parts] == ["part-00000", "part-00001"]
        out = {}
        for part in parts:
            rows = [line.split("\t") for line in part.read_text().splitlines()]
            assert [json.loads(k) for k, _ in rows] == sorted(json.loads(k) for k, _ in rows)  # keys sorted
            out.update({json.loads(k): json.loads(v) for k, v in rows})
        return out, trace.combiner_runs

    received, _ = run("plain", False, 5)
    assert sorted(received["w"]) == sorted(i for i in range(40) for _ in range(i % 3 + 1))
    assert received["w"] != sorted(received["w"])  # not in the order they were mapped, nor sorted
    for seed in range(5, 10):  # the first seed whose combiner does not run exactly once per map task
        counted, runs = run(f"combined-{seed}", True, seed)
        if runs != [1, 1]:
            break
    assert runs != [1, 1] and sum(counted["w"]) != sum(i % 3 + 1 for i in range(40)), runs


# --- quilt ----------------------------------------------------------------------------------


@SLOW
def test_quilt_jobs(hadoop):
    from spamflow_quilt.detector import find_quilts
    from test_quilt import _shingles, random_corpus
    from test_quilt_runners import PARAMS, _expected

    before = len(_calls(hadoop))
    pages = random_corpus(12, n=30)
    work = hadoop / "quilt"
    work.mkdir()
    found = find_quilts(_shingles(pages, PARAMS.k, work / "shingles.tsv"), work, PARAMS, "hadoop", ())
    expected = _expected(pages)
    assert expected and [(d, c["sources"]) for d, c in found] == expected
    steps = _steps_since(hadoop, before)
    assert len(steps) == 4  # one job (mr_quilt_snapshot): gram df, patch fraction, the cover's two steps
    assert any(s["trace"]["values_reordered"] for s in steps)
    assert all(s["trace"]["map_tasks"] >= 2 and s["trace"]["reduce_tasks"] == 2 for s in steps)
    df = steps[0]
    assert "-combiner" in df["args"] and df["trace"]["combiner_runs"]
    files = df["args"][df["args"].index("-files") + 1].split(",")
    assert sorted(f.rsplit("#", 1)[1] for f in files) == ["mr_quilt_snapshot.py", "mrjob.zip", "setup-wrapper.sh",
                                                           "spamflow_quilt.zip"]
    assert df["args"][df["args"].index("-mapper") + 1].startswith(
        "/bin/sh -ex setup-wrapper.sh python3 mr_quilt_snapshot.py")


# --- content --------------------------------------------------------------------------------


@SLOW
def test_content_jobs(hadoop, tmp_path):
    from test_content_mapreduce import assert_runs_equal, run_content, small_pages

    from spamflow_content.params import ContentParams

    pages = small_pages(tmp_path / "pages")
    params = ContentParams(min_df=0.0, max_df=1.0)
    before = len(_calls(hadoop))
    mem = run_content(pages, tmp_path / "m", params, None)
    mr = run_content(pages, tmp_path / "h", params, "hadoop")
    assert_runs_equal(tmp_path / "m", tmp_path / "h", mem, mr)
    steps = _steps_since(hadoop, before)
    assert len(steps) == 3 and any(s["trace"]["combiner_runs"] for s in steps)
    assert _job_files(steps) == {"mr_content_corpus.py", "mr_content_pages.py"}
    shipped = steps[0]["args"][steps[0]["args"].index("-files") + 1]
    assert "#sample.parquet" in shipped  # the job's file argument, shipped


# --- spin ------------------------------------------------------------------------------------


@SLOW
def test_spin_jobs(hadoop, tmp_path):
    from test_spin_mapreduce import PARAMS, _page_table, _run, _same

    _page_table(tmp_path / "pages")
    (tmp_path / "pages" / "part-00001.parquet").unlink()  # one snapshot: each job once
    before = len(_calls(hadoop))
    memory = _run(tmp_path / "pages", tmp_path / "memory", {**PARAMS, "engine": "memory"}, "inline")
    streamed = _run(tmp_path / "pages", tmp_path / "mapreduce", {**PARAMS, "engine": "mapreduce"}, "hadoop")
    _same(memory, streamed)
    assert streamed[1]["engine_mapreduce_snapshots"] == 1
    assert _job_files(_steps_since(hadoop, before)) == {"mr_immutable_frequency.py", "mr_candidate_pairs.py",
                                                         "mr_verify_pairs.py"}


# --- hss --------------------------------------------------------------------------------------


@SLOW
def test_hss_jobs(hadoop, tmp_path):
    import pyarrow.parquet as pq
    from test_hss_mapreduce import M, _assert_same, _in_memory, _snapshot
    from test_hss_stage import _page_part

    from spamflow_hss.cluster_mapreduce import cluster_snapshots_mapreduce
    from spamflow_hss.fingerprint_table import fingerprint_pages, fingerprint_pages_mapreduce, read_fingerprints
    from spamflow_hss.params import HSSParams

    before = len(_calls(hadoop))
    rng = np.random.default_rng(4)
    parts = []
    for i in range(2):
        parts.append(tmp_path / f"pages-{i}.parquet")
        _page_part(parts[-1], 12, rng)
    local_counts = fingerprint_pages(parts, tmp_path / "local", 32, 128, 0)
    mr_counts = fingerprint_pages_mapreduce(parts, tmp_path / "mr", tmp_path / "fp-work", 32, 128, 0, "hadoop")
    assert mr_counts == local_counts and local_counts["short_pages"] > 0
    for i in range(2):
        a = pq.read_table(tmp_path / "local" / f"part-{i:05d}.parquet")
        b = pq.read_table(tmp_path / "mr" / f"part-{i:05d}.parquet")
        assert a.equals(b) and np.array_equal(read_fingerprints(a, 128), read_fingerprints(b, 128))

    rng = np.random.default_rng(11)
    snapshots = {"2026-01": _snapshot(rng, 3, 8, 6)}
    params = HSSParams(m=M, k=1, p=6, t=18, seed=3, max_representatives=4)
    found = cluster_snapshots_mapreduce(iter(snapshots.items()), params, tmp_path / "work", "hadoop")
    _assert_same(found, _in_memory(snapshots, params))
    assert _job_files(_steps_since(hadoop, before)) == {"mr_fingerprint.py", "mr_probe_check.py"}


# --- links -------------------------------------------------------------------------------------


@SLOW
def test_links_jobs(hadoop, tmp_path):
    from test_links_mapreduce import TOL, assert_same_graphs, l1, page_table, random_graph, write_parts

    from spamflow_links.detector import load_graphs
    from spamflow_links.mapreduce import MapReduceRanks, host_graphs_mapreduce
    from spamflow_links.params import LinksParams
    from spamflow_links.ranks import Walk, power_iteration
    from spamflow_links.static_features import MemoryRanks

    before = len(_calls(hadoop))
    pages = write_parts(page_table(seed=4, pages=40), tmp_path / "pages", parts=2)
    dataset = ds.dataset(pages, format="parquet")
    got = host_graphs_mapreduce([Path(f) for f in dataset.files], tmp_path / "edges", runner="hadoop")
    assert_same_graphs(got, load_graphs(dataset, LinksParams(), progress=False))

    a = random_graph(30, 100, seed=9)
    # four power iterations as the steps of one job (tol 0: none stops early)
    p, iterations = MapReduceRanks(tmp_path / "ranks", "hadoop", max_iter=4).power_iteration(a, 0.85, tol=0.0)
    p_mem, iterations_mem = power_iteration(Walk.of(a), 0.85, None, 0.0, 4)
    assert iterations == iterations_mem == 4 and l1(p, p_mem) < TOL
    want = MemoryRanks().supporters(a, 1, 6, 3, False)  # HyperLogLog registers: their union is exact
    found = MapReduceRanks(tmp_path / "balls", "hadoop").supporters(a, 1, 6, 3, False)
    assert sorted(found) == [1] and np.array_equal(found[1], want[1]) and want[1].sum() > 0
    assert _job_files(_steps_since(hadoop, before)) == {"mr_host_edges.py", "mr_walks.py"}


# --- ensemble ----------------------------------------------------------------------------------


@SLOW
def test_ensemble_score_job(hadoop, tmp_path):
    """A model as the classify stage writes it (an ``EnsembleSelection`` of spamflow's own
    classes, which import spamflow's core on the node), trained small."""
    from test_classify_mapreduce import _features, trained

    from spamflow_ensemble.mapreduce_scoring import score_mapreduce
    from spamflow_ensemble.model import score
    from spamflow_ensemble.persist import save_model

    rng = np.random.default_rng(0)
    bundle = trained(rng, 60, n_folds=2, n_bags=1, n_iterations=3)
    path = save_model(tmp_path / "model.skops", bundle)
    held_out, _ = _features(rng, 40)
    expected = score(bundle, held_out)
    assert len(set(np.round(expected, 6).tolist())) > 10  # varied scores
    found = score_mapreduce(path, held_out, tmp_path / "work", "hadoop", ("--block", "16"))
    np.testing.assert_allclose(found, expected, rtol=0, atol=1e-12)


# --- ids ---------------------------------------------------------------------------------------


@SLOW
def test_ids_job(hadoop, tmp_path):
    import pyarrow.parquet as pq
    from test_ids import MAX_DOMAINS, PAGES, SNAPSHOT

    from spamflow.detector import RunSettings, StageContext, StageOutputs
    from spamflow.parse.warc_file import parse_warc_file
    from spamflow_ids.detector import IdsDetector
    from spamflow_ids.params import IdsParams

    from warc_factory import Resp, html, write_warc

    warc = tmp_path / "crawl.warc.gz"
    write_warc(warc, [Resp(url, html("t", body, head)) for url, head, body, _ in PAGES])
    (tmp_path / "parse" / "pages").mkdir(parents=True)
    parse_warc_file(warc, SNAPSHOT, tmp_path / "parse" / "pages" / "part-00000.parquet", max_bytes=5_000_000)
    parse = StageOutputs("parse", tmp_path / "parse", {"pages": tmp_path / "parse" / "pages"}, {"max_bytes": 5_000_000})

    def run(engine: str, runner: str) -> dict:
        out = tmp_path / engine
        out.mkdir()
        result = IdsDetector().run(StageContext(IdsParams(max_domains=MAX_DOMAINS, engine=engine), {"parse": parse},
                                                out, RunSettings(runner=runner, progress=False)))
        read = {"counts": result.counts, "hosts": pq.read_table(out / "hosts.parquet").to_pylist()}
        for name in ("networks", "platform_ids"):
            read[name] = [json.loads(line) for line in (out / result.outputs[name]).read_text().splitlines()]
        return read

    memory = run("memory", "inline")
    assert memory["networks"] and run("mapreduce", "hadoop") == memory


# --- parse -------------------------------------------------------------------------------------


@SLOW
def test_parse_job(hadoop, tmp_path):
    """``MRParse`` with ``NLineInputFormat`` (one WARC file a map task, ``<offset>\\t<line>`` in),
    its result lines as Hadoop writes a line without a tab (``line\\t``); the stage refuses a
    local folder on ``hadoop`` (tasks on other machines cannot write it), the stand-in's tasks
    share this disk, so the job is driven here as the stage drives it."""
    import pyarrow.parquet as pq

    from spamflow.detector import RunSettings
    from spamflow.parse.file_job import FileJob, run_file_job
    from spamflow.stages.parse import _parse_with_job

    from warc_factory import Resp, html, write_warc

    jobs = {}
    for i in range(3):
        warc = tmp_path / f"crawl-{i}.warc.gz"
        write_warc(warc, [Resp(f"http://h{i}.example/{p}", html(f"t{p}", f"<p>page {p} of {i}</p>"
                                                                          f'<a href="http://h{p}.example/">x</a>'))
                          for p in range(4)])
        for engine in ("here", "job"):
            (tmp_path / engine).mkdir(exist_ok=True)
            jobs.setdefault(engine, []).append(FileJob(str(warc), "2026-01", i, str(tmp_path / engine), 5_000_000,
                                                       False))
    here = [run_file_job(job) for job in jobs["here"]]
    before = len(_calls(hadoop))
    got = _parse_with_job(jobs["job"], RunSettings(runner="hadoop", progress=False), tmp_path / "job")
    assert [r.counts for r in got] == [r.counts for r in here] and here[0].counts["pages"] == 4
    for i in range(3):
        assert pq.read_table(tmp_path / "job" / f"part-{i:05d}.parquet").equals(
            pq.read_table(tmp_path / "here" / f"part-{i:05d}.parquet"))
    [step] = _steps_since(hadoop, before)
    assert step["args"][step["args"].index("-inputformat") + 1] == "org.apache.hadoop.mapred.lib.NLineInputFormat"
    assert step["trace"]["map_tasks"] == 3 and step["trace"]["reduce_tasks"] == 0
