"""The spin stage's two engines give the same outputs: ``memory`` (every page of a snapshot in
the stage's process) and ``mapreduce`` (pages streamed, partitions on disk, the verifier as a
join job on doc id), on the inline and local runners, on Spark ``local[2]``, and on the demo."""

from __future__ import annotations

import importlib.util
import json
import random
import shutil
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_spin import DEMO_DICTIONARY, ONE_TASK, _copies_corpus, _demo_dictionary, _reference_pairs

from spamflow.detector import RunSettings, StageContext, StageOutputs
from spamflow.errors import SpamflowError
from spamflow.mr import run_job
from spamflow_spin.detector import SpinDetector
from spamflow_spin.mr_verify_pairs import MRVerifyPairs, pair_line, partition_line
from spamflow_spin.params import SpinParams
from spamflow_spin.similarity import jaccard
from spamflow_spin.synonyms import read_synonyms, write_synonyms
from spamflow_spin.verifier import mutable_overlap

LINKS = pa.list_(pa.struct([("url", pa.string()), ("anchor", pa.string())]))


def _page_table(folder: Path, snapshots: int = 2) -> None:
    """Two snapshots (or the first) of the copies corpus (texts spun onto 5-20 hosts, verbatim
    copies, edited copies, unrelated pages), each page linking to its money site with an anchor
    in its words."""
    folder.mkdir()
    for part, (snapshot, seed) in enumerate((("2026-01", 1), ("2026-02", 2))[:snapshots]):
        pages = _copies_corpus(seed)
        rows = []
        for page in pages:
            links = [{"url": f"http://{host}/", "anchor": "see also"} for host, _ in page.link_targets]
            rows.append({"doc_id": page.doc_id + 1000 * part, "url": page.url, "host": page.host,
                         "domain": page.domain, "snapshot": snapshot,
                         "words": page.words + ["see", "also"] * len(links), "links": links})
        schema = pa.schema([("doc_id", pa.int64()), ("url", pa.string()), ("host", pa.string()),
                            ("domain", pa.string()), ("snapshot", pa.string()), ("words", pa.list_(pa.string())),
                            ("links", LINKS)])
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / f"part-{part:05d}.parquet")


def _run(pages: Path, outdir: Path, params: dict, runner: str = "inline",
         runner_args: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """The stage in process: (its outputs read back, its counts)."""
    outdir.mkdir(parents=True)
    parse = StageOutputs("parse", pages.parent, {"pages": pages}, {})
    settings = RunSettings(runner=runner, runner_args=runner_args, progress=False)
    result = SpinDetector().run(StageContext(SpinParams.model_validate(params), {"parse": parse}, outdir, settings))
    out = {name: (outdir / result.outputs[name]).read_text() for name in ("pairs", "campaigns", "bad_records")}
    out["hosts"] = pq.read_table(outdir / result.outputs["hosts"])
    return out, result.counts


def _same(a: tuple[dict, dict], b: tuple[dict, dict]) -> None:
    (out_a, counts_a), (out_b, counts_b) = a, b
    for name in ("pairs", "campaigns", "bad_records"):
        assert out_a[name] == out_b[name], name  # byte for byte, floats included
    assert out_a["hosts"].equals(out_b["hosts"])
    engine = {"engine_mapreduce_snapshots", "engine_direct_snapshots"}
    assert {k: v for k, v in counts_a.items() if k not in engine} == {k: v for k, v in counts_b.items()
                                                                      if k not in engine}


PARAMS = {"dictionary": [DEMO_DICTIONARY], "verifier_threshold": 0.7}


@pytest.mark.slow
@pytest.mark.parametrize("runner", ["inline", "local"])
def test_engines_give_the_same_pairs_campaigns_and_hosts(tmp_path, runner):
    """Both snapshots inline; the first on the local runner (task processes and a real sort: the
    snapshots' jobs are the same code, and each local job costs its tasks' start-up)."""
    snapshots = 1 if runner == "local" else 2
    _page_table(tmp_path / "pages", snapshots)
    args = ONE_TASK if runner == "local" else ()
    memory = _run(tmp_path / "pages", tmp_path / "memory", {**PARAMS, "engine": "memory"}, runner, args)
    streamed = _run(tmp_path / "pages", tmp_path / "mapreduce", {**PARAMS, "engine": "mapreduce"}, runner, args)
    _same(memory, streamed)
    assert streamed[1]["engine_mapreduce_snapshots"] == snapshots and "engine_mapreduce_snapshots" not in memory[1]
    # and against the definitions: every pair of pages compared exhaustively (test_spin's reference)
    d, params = _demo_dictionary(), SpinParams.model_validate(PARAMS)
    pairs = [json.loads(line) for line in streamed[0]["pairs"].splitlines()]
    for part, (snapshot, seed) in enumerate((("2026-01", 1), ("2026-02", 2))[:snapshots]):
        expected = [(a + 1000 * part, b + 1000 * part, k) for a, b, _, _, k in _reference_pairs(_copies_corpus(seed),
                                                                                               d, params)]
        got = sorted((p["doc_a"], p["doc_b"], p["kind"]) for p in pairs if p["snapshot"] == snapshot)
        assert got == sorted(expected) and len(got) > 100
    counts = streamed[1]
    assert counts["same_immutable_pairs"] > 100 and counts["candidate_pairs"] > 0 and counts["duplicate_pairs"] > 0


def test_engines_write_the_same_count_keys_when_no_page_repeats_another(tmp_path):
    """A snapshot without two pages of the same immutables: both engines write
    ``same_immutable_pairs: 0`` (the MapReduce engine used to leave the key out)."""
    folder = tmp_path / "pages"
    folder.mkdir()
    texts = ["alpha bravo charlie delta echo foxtrot golf hotel india juliet",
             "kilo lima mike november oscar papa quebec romeo sierra tango",
             "uniform victor whiskey xray yankee zulu amber bronze cobalt denim"]
    rows = [{"doc_id": i, "url": f"http://h{i}.com/", "host": f"h{i}.com", "domain": f"h{i}.com",
             "snapshot": "2026-01", "words": t.split(), "links": []} for i, t in enumerate(texts)]
    schema = pa.schema([("doc_id", pa.int64()), ("url", pa.string()), ("host", pa.string()),
                        ("domain", pa.string()), ("snapshot", pa.string()), ("words", pa.list_(pa.string())),
                        ("links", LINKS)])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / "part-00000.parquet")
    memory = _run(folder, tmp_path / "memory", {**PARAMS, "engine": "memory"})
    streamed = _run(folder, tmp_path / "mapreduce", {**PARAMS, "engine": "mapreduce"})
    _same(memory, streamed)
    assert streamed[1]["same_immutable_pairs"] == 0 == memory[1]["same_immutable_pairs"]


def test_auto_engine_follows_the_snapshot_size(tmp_path):
    _page_table(tmp_path / "pages")
    small = _run(tmp_path / "pages", tmp_path / "a", {**PARAMS, "mapreduce_above": 10_000})
    big = _run(tmp_path / "pages", tmp_path / "b", {**PARAMS, "mapreduce_above": 10})
    assert "engine_direct_snapshots" not in small[1] and big[1]["engine_direct_snapshots"] == 2
    assert "engine_mapreduce_snapshots" not in big[1]
    _same(small, big)


def test_verify_job_joins_partitions_to_pairs_hand_worked(tmp_path):
    """Three pages; Jaccard and overlap worked by hand. 1-2: immutables {a b c d} vs {a b c e}:
    3 / 5 = 0.6 (>= 0.6); mutables [big fast] vs [large quick]: big-large and fast-quick are
    first-level synonyms, 2 / (2 + 2 - 2) = 1.0. 1-3: {a b c d} vs {a x y z}: 1 / 7, below."""
    synonyms = tmp_path / "synonyms.tsv"
    write_synonyms({"big": {"large"}, "large": {"big"}, "fast": {"quick"}, "quick": {"fast"}}, synonyms)
    assert read_synonyms(synonyms).neighbours["big"] == {"large"}
    lines = tmp_path / "in.tsv"
    lines.write_text(pair_line(1, 2) + partition_line(3, ["a", "x", "y", "z"], []) + pair_line(1, 3)
                     + partition_line(1, ["a", "b", "c", "d"], ["big", "fast"])
                     + partition_line(2, ["a", "b", "c", "e"], ["large", "quick"]))
    out = run_job(MRVerifyPairs, [lines], tmp_path / "out.tsv", runner="inline",
                  args=["--threshold", "0.6", "--synonyms", str(synonyms)])
    rows = dict(line.split("\t") for line in out.read_text().splitlines())
    assert rows == {"1 2": "0.6 1.0", "#below_threshold": "1"}


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_verify_job_equals_pair_by_pair_scoring_with_pages_in_both_roles(tmp_path, runner):
    """Random partitions, every page first in some pairs and second in others (the join sends a
    page's partition to the pair's second page only), some without mutables, some pairs below
    the threshold: the job's output is each pair scored directly (jaccard, mutable_overlap)."""
    rng = random.Random(5)
    words = [f"w{i}" for i in range(30)]
    graph = {"big": {"large"}, "large": {"big", "huge"}, "huge": {"large"}, "fast": {"quick"}, "quick": {"fast"}}
    entries = sorted(graph) + ["red", "blue"]
    parts = {doc: (rng.sample(words, rng.randint(2, 12)), [] if doc % 4 == 0 else rng.choices(entries, k=rng.randint(1, 5)))
             for doc in range(1, 16)}
    pairs = sorted({tuple(sorted(rng.sample(sorted(parts), 2))) for _ in range(60)})
    synonyms = tmp_path / "synonyms.tsv"
    write_synonyms(graph, synonyms)
    lines = tmp_path / "in.tsv"
    lines.write_text("".join(pair_line(a, b) for a, b in pairs)
                     + "".join(partition_line(doc, imm, mut) for doc, (imm, mut) in parts.items()))
    t = 0.2
    out = run_job(MRVerifyPairs, [lines], tmp_path / "out.tsv", runner=runner,
                  runner_args=ONE_TASK if runner == "local" else (),
                  args=["--threshold", repr(t), "--synonyms", str(synonyms)])
    got, below = {}, 0
    for line in out.read_text().splitlines():
        key, value = line.split("\t")
        if key == "#below_threshold":
            below += int(value)
        else:
            got[key] = value
    lookup = read_synonyms(synonyms)
    expected = {}
    for a, b in pairs:
        score = jaccard(set(parts[a][0]), set(parts[b][0]))
        if score >= t:
            expected[f"{a} {b}"] = f"{score!r} {mutable_overlap(parts[a][1], parts[b][1], lookup)!r}"
    assert got == expected and below == len(pairs) - len(expected) > 0
    firsts, seconds = {a for a, _ in pairs}, {b for _, b in pairs}
    assert firsts & seconds and any(not parts[d][1] for d in firsts | seconds)


def test_verify_job_names_a_page_without_partition_and_a_bad_line(tmp_path):
    synonyms = tmp_path / "synonyms.tsv"
    write_synonyms({}, synonyms)
    args = ["--threshold", "0.6", "--synonyms", str(synonyms)]
    (tmp_path / "a.tsv").write_text(pair_line(1, 2) + partition_line(1, ["a", "b"], []))
    with pytest.raises(SpamflowError, match="page 2 is in the pair '1 2' but has no partition line"):
        run_job(MRVerifyPairs, [tmp_path / "a.tsv"], tmp_path / "out.tsv", runner="inline", args=args)
    (tmp_path / "b.tsv").write_text("1\t2\n")
    with pytest.raises(SpamflowError, match="MRVerifyPairs.*not 'P<TAB>doc_a doc_b'.*'1\\\\t2'"):
        run_job(MRVerifyPairs, [tmp_path / "b.tsv"], tmp_path / "out.tsv", runner="inline", args=args)


def test_demo_gives_the_same_outputs_on_the_mapreduce_engine(demo_once, tmp_path):
    """The demo ran the direct engine (``auto`` on the inline runner, ``mapreduce_above`` 0);
    the MapReduce and the memory engines on the same page table give the demo's own files back."""
    spin = demo_once["manifest"]["stages"]["spin"]
    assert spin["params"].get("engine", "auto") == "auto" and spin["counts"].get("engine_mapreduce_snapshots") is None
    assert spin["counts"]["engine_direct_snapshots"] == 2
    pages = Path(demo_once["manifest"]["stages"]["parse"]["outputs"]["pages"])
    outputs = spin["outputs"]
    engine_counts = ("engine_mapreduce_snapshots", "engine_direct_snapshots")
    for engine in ("mapreduce", "memory"):
        out, counts = _run(pages, tmp_path / engine, {**spin["params"], "engine": engine})
        assert out["pairs"] == Path(outputs["pairs"]).read_text() and out["pairs"].count('"spun"') > 100, engine
        assert out["campaigns"] == Path(outputs["campaigns"]).read_text(), engine
        assert out["hosts"].equals(pq.read_table(outputs["hosts"])), engine
        assert counts.get("engine_mapreduce_snapshots") == (2 if engine == "mapreduce" else None)
        assert Counter({k: v for k, v in counts.items() if k not in engine_counts}) == \
            Counter({k: v for k, v in spin["counts"].items() if k not in engine_counts}), engine


@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None or not shutil.which("java"),
                    reason="needs pyspark (pip install -e '.[test]') and a Java runtime")
@pytest.mark.slow
def test_mapreduce_engine_on_spark_local_mode(tmp_path, monkeypatch):
    """All three jobs (frequencies, candidates, the verification join) on Spark local[2], on
    one snapshot: each job is a Spark application (~10 s to start), and the snapshots' jobs
    are the same code, which the inline and local tests run on both."""
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")  # keep Spark on loopback
    _page_table(tmp_path / "pages", snapshots=1)
    memory = _run(tmp_path / "pages", tmp_path / "memory", {**PARAMS, "engine": "memory"})
    spark = _run(tmp_path / "pages", tmp_path / "spark", {**PARAMS, "engine": "mapreduce"}, "spark",
                 ("--spark-master", "local[2]"))
    _same(memory, spark)


def test_local_tasks_use_the_installed_mrjob_unless_told_otherwise():
    """The fixed-cost cut: --no-bootstrap-mrjob on the local runner only, and never over the
    user's choice of the tasks' Python or of bootstrapping."""
    from spamflow_spin.candidates import task_args

    assert task_args("local", ("--num-cores", "2")) == ("--num-cores", "2", "--no-bootstrap-mrjob")
    assert task_args("inline", ()) == () and task_args("spark", ("--spark-master", "local[2]")) == (
        "--spark-master", "local[2]")
    for own in (("--python-bin", "/usr/bin/python3"), ("--task-python-bin", "py"), ("--bootstrap-mrjob",),
                ("--no-bootstrap-mrjob",)):
        assert task_args("local", own) == own
