"""benchmarks/compare_runs.py: two hand-written runs with known differences; the tool must
report exactly those, and nothing for what legitimately differs (row order, part files,
timings, run ids, floats within the tolerance, the storage order of a sparse matrix, job
scratch)."""

from __future__ import annotations

import importlib.util
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "compare_runs.py"
_spec = importlib.util.spec_from_file_location("compare_runs", SCRIPT)
compare_runs = importlib.util.module_from_spec(_spec)
sys.modules["compare_runs"] = compare_runs
_spec.loader.exec_module(compare_runs)

HOSTS = {"snapshot": ["2026-01", "2026-01", "2026-02"], "host": ["a.com", "b.com", "a.com"],
         "indegree": [3, 1, 2], "pagerank": [0.5, 0.25, 0.125], "sizes": [[1.0, 2.0], [], [0.5]]}
PAIRS = [{"snapshot": "2026-01", "doc_a": 1, "doc_b": 2, "jaccard": 0.75, "kind": "spun"},
         {"snapshot": "2026-01", "doc_a": 1, "doc_b": 3, "jaccard": 1 / 3, "kind": "duplicate"},
         {"snapshot": "2026-02", "doc_a": 4, "doc_b": 5, "jaccard": 0.1, "kind": "spun"}]
PAGES = {"doc_id": [10, 11, 12, 13], "url": ["u0", "u1", "u2", "u3"], "words": [["x"], ["y", "z"], [], ["x"]]}


def _stage(run: Path, name: str, record: dict, files: dict[str, object]) -> None:
    """A complete stage folder: its files, then stage.json."""
    folder = run / "stages" / f"{name}-0123456789abcdef"
    for rel, content in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, pa.Table):
            pq.write_table(content, path)
        elif isinstance(content, sp.spmatrix | sp.sparray):
            sp.save_npz(path, content)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    base = {"stage": name, "signature": "0123456789abcdef", "version": "1", "params": {}, "requires": {},
            "host_tables": {}, "counts": {}, "bad_records_total": 0, "bad_records": []}
    (folder / "stage.json").write_text(json.dumps({**base, **record}), encoding="utf-8")


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _run(root: Path, name: str, *, stored_otherwise: bool = False, differ: bool = False) -> Path:
    """A run.  ``stored_otherwise``: the same results stored otherwise (reversed rows, another
    split into parts, shuffled lines, floats off by < 1e-9 relative, the sparse matrix's
    entries in another order, its own run ids and timings, an undeclared file, other job
    scratch).  ``differ``: also the known differences of ``_differences``."""
    run = root / name
    hosts = dict(HOSTS)
    pairs = [dict(p) for p in PAIRS]
    if stored_otherwise:
        hosts = {k: v[::-1] for k, v in hosts.items()}
        hosts["pagerank"] = [0.125 * (1 + 1e-12), 0.25, 0.5]
        pairs = pairs[::-1]
        pairs[1]["jaccard"] = 1 / 3 + 1e-15
    if differ:
        hosts["pagerank"][1] = 0.25 + 1e-6  # b.com in 2026-01, beyond the tolerance
    ids = {"run_id": name * 32, "upstream_runs": {"parse": name}, "seconds": len(name) + 0.5,
           "cpu_seconds": ord(name[0]) + 0.25, "finished_at": f"2026-11-25T00:00:{len(name):02d}+00:00"}
    pages = pa.table(PAGES)
    parts = ({"pages/part-00000.parquet": pages} if stored_otherwise else
             {"pages/part-00000.parquet": pages.slice(0, 2), "pages/part-00001.parquet": pages.slice(2)})
    _stage(run, "parse", {**ids, "outputs": {"pages": "pages"}, "counts": {"pages": 4}}, parts)
    table = pa.table({**hosts, "indegree": pa.array(hosts["indegree"], pa.int64())})
    jobs = {"mapreduce_jobs": 70} if stored_otherwise else {}  # the engine's count: not a result
    _stage(run, "links", {**ids, "counts": {"hosts": 2, **jobs}, "outputs": {"hosts": "hosts.parquet",
                                                                           "pairs": "pairs.jsonl"},
                          "host_tables": {"hosts": {"key": ["snapshot", "host"], "features": {}}}},
           {"hosts.parquet": table, "pairs.jsonl": _jsonl(pairs)})
    matrix = sp.csr_matrix(np.array([[0.0, 1.5, 2.0], [3.0, 0.0, 0.0]]))
    files = {"bm25/vocabulary.txt": "alpha\nbeta\ngamma\n", "bm25/m.npz": matrix, "hosts.txt": "a.com\nb.com\n",
             "work/pairs.tsv": "d0\tS 1:a\nd0\tS 1:b\n",
             # a file that names its run's workdir, as a model's statistics.json does: masked
             "frozen/statistics.json": json.dumps({"workdir": str(run), "detectors": {"content": {}}})}
    if stored_otherwise:  # row 0's entries stored in the other order; scratch packed otherwise
        files["bm25/m.npz"] = sp.csr_matrix((np.array([2.0, 1.5, 3.0]), np.array([2, 1, 0]), np.array([0, 2, 3])),
                                            shape=(2, 3))
        files["work/pairs.tsv"] = "d0\tS 2:ab\n"
        files["scratch/job-output.jsonl"] = "{}\n"
    if differ:
        files["hosts.txt"] = "b.com\na.com\n"
    outputs = {"vocabulary": "bm25/vocabulary.txt", "bm25": "bm25/m.npz", "hosts": "hosts.txt", "work": "work",
               "frozen": "frozen"}
    _stage(run, "content", {**ids, "counts": {"hosts": 7, "pairs": 3 if differ else 2}, "outputs": outputs}, files)
    page = (f"<p>{run} &middot; spamflow 0.1.0 &middot; generated 2026-11-25T00:00:{len(name):02d}+00:00</p>\n"
            f"<tr><td><code>parse</code></td>\n<td>done</td>\n<td class=\"num\">{len(name) + 0.5}</td>\n"
            f"<li>b.com: score {0.8 if differ else 0.9}</li>\n")
    _stage(run, "report", {**ids, "outputs": {"report": "index.html"}}, {"index.html": page})
    if not stored_otherwise:  # run.json names the stages (the other run is found from stages/ alone)
        stages = {d.name.split("-")[0]: {"directory": str(d), "seconds": 1.0} for d in (run / "stages").iterdir()}
        (run / "run.json").write_text(json.dumps({"status": "success", "stages": stages}), encoding="utf-8")
    return run


def _differences() -> list[str]:
    """What ``compare_runs`` must find between a run and one with ``differ``,
    worked out by hand: b.com's pagerank 0.25 vs 0.250001; the line order of hosts.txt (an
    index: order matters); the count of pairs; b.com's score on the report's page."""
    return ["stage.json counts.pairs: 2 vs 3",
            "hosts.txt: 2 of 2 lines differ (in order), first line 1: 'a.com' vs 'b.com'",
            "index.html: 1 of 5 lines differ (in order), first line 5: '<li>b.com: score 0.9</li>' vs "
            "'<li>b.com: score 0.8</li>'",
            "column pagerank: 1 of 3 rows differ, first (snapshot='2026-01', host='b.com'): 0.25 vs 0.250001"]


def _report(a: Path, b: Path) -> tuple[bool, str]:
    out = io.StringIO()
    same = compare_runs.compare_runs(a, b, compare_runs.Tolerance(), out=out)
    return same, out.getvalue()


def test_equal_runs_stored_differently_are_equal(tmp_path):
    a, b = _run(tmp_path, "a"), _run(tmp_path, "b", stored_otherwise=True)
    same, text = _report(a, b)
    assert same, text
    status = {ln.split()[0]: ln.split()[1] for ln in text.splitlines()[3:-1] if not ln.startswith(" ")}
    assert status == {"parse": "equal", "links": "equal", "content": "equal", "report": "equal"}, text
    assert text.splitlines()[-1] == "4 stages compared: all equal"
    assert "not compared: 1 files (scratch/job-output.jsonl)" in text
    assert "    note: work/pairs.tsv: 2 lines only in run A" in text  # job scratch: a note, not a difference
    assert compare_runs.main([str(a), str(b)]) == 0


def test_finds_exactly_the_known_differences(tmp_path):
    a, b = _run(tmp_path, "a"), _run(tmp_path, "b", stored_otherwise=True, differ=True)
    same, text = _report(a, b)
    assert not same
    found = sorted(ln.strip() for ln in text.splitlines() if ln.startswith("    ") and "note:" not in ln)
    expected = sorted(d if d.startswith(("stage.json", "hosts.txt", "index.html")) else f"hosts.parquet: {d}"
                      for d in _differences())
    assert found == expected, text
    status = {ln.split()[0]: ln.split()[1] for ln in text.splitlines()[3:-1] if not ln.startswith(" ")}
    assert status == {"parse": "equal", "links": "DIFFERS", "content": "DIFFERS", "report": "DIFFERS"}
    assert text.splitlines()[-1] == "4 stages compared: 3 differ"
    cli = subprocess.run([sys.executable, str(SCRIPT), str(a), str(b)], capture_output=True, text=True)
    assert cli.returncode == 1 and "DIFFERS" in cli.stdout, cli.stderr


def test_rows_and_lines_missing_on_one_side(tmp_path):
    tol = compare_runs.Tolerance()
    a = pa.table({"host": ["a", "b", "c"], "score": [0.1, 0.2, 0.3]})
    b = pa.table({"host": ["c", "a", "d"], "score": [0.3, 0.1, 0.4]})
    diffs, rows = compare_runs.compare_tables(a, b, tol, ["host"])
    assert rows == 2
    assert diffs == ["1 rows only in run A, first (host='b')", "1 rows only in run B, first (host='d')"]
    diffs = compare_runs.compare_records([{"k": 1, "v": 0.5}, {"k": 2, "v": 0.5}], [{"k": 1, "v": 0.5 + 1e-6}], tol)
    assert diffs == ["1 of 2 lines differ beyond the tolerance, first: {'k': 1, 'v': 0.5} vs {'k': 1, 'v': 0.500001}",
                     "1 lines only in run A, first: {'k': 2, 'v': 0.5}"]


@pytest.mark.parametrize(("a", "b", "close"), [
    (1.0, 1.0 + 0.5e-9, True), (1.0, 1.0 + 2e-9, False),  # relative 1e-9
    (0.0, 0.9e-12, True), (0.0, 2e-12, False),  # absolute 1e-12 near zero
    (float("nan"), float("nan"), True), (float("nan"), 0.0, False),
    (float("inf"), float("inf"), True), (float("inf"), 1e308, False), (float("inf"), float("-inf"), False),
])
def test_tolerance(a, b, close):
    tol = compare_runs.Tolerance()
    assert tol.close(a, b) is close
    assert bool(tol.close_arrays(np.array([a]), np.array([b]))[0]) is close


def test_not_a_workdir_is_a_usage_error(tmp_path):
    cli = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "nope"), str(tmp_path)],
                         capture_output=True, text=True)
    assert cli.returncode == 2 and "nope: not a spamflow workdir" in cli.stderr


@pytest.mark.parametrize(("a", "b", "same"), [
    ('   "kappa": 0.0006041761366877285,', '   "kappa": 0.0006041761366881726,', True),  # within 1e-9
    ('   "kappa": 0.0006041761366877285,', '   "kappa": 0.0006041761,', False),
    ("u8:0a1e5ff", "u8:0a1e6ff", False),  # hex, not a number
    ("score 1e-3 of 2", "score 0.001 of 2", True),
    ("pages=6000", "pages=6001", False),  # integers exactly
])
def test_numbers_inside_text(a, b, same):
    assert compare_runs.same_text(a, b, compare_runs.Tolerance()) is same


def _cli(*args: Path | str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def test_comparing_no_stage_is_an_error(tmp_path):
    """Two workdirs without a complete stage: exit 2 and why, never "0 stages compared: all equal"."""
    for name in ("a", "b"):
        (tmp_path / name / "stages" / "parse-0123456789abcdef").mkdir(parents=True)  # no stage.json: incomplete
    cli = _cli(tmp_path / "a", tmp_path / "b")
    assert cli.returncode == 2, cli.stdout
    assert f"error: 0 stages compared: run A ({tmp_path / 'a'}): no complete stage; run B" in cli.stderr
    assert "all equal" not in cli.stdout


def test_a_stage_named_nowhere_is_an_error(tmp_path):
    a, b = _run(tmp_path, "a"), _run(tmp_path, "b", stored_otherwise=True)
    cli = _cli(a, b, "--stage", "spin")
    assert cli.returncode == 2
    assert "0 stages compared: --stage spin: in neither run's stages (A: " in cli.stderr, cli.stderr


def _as_downloaded_from_s3(run: Path) -> None:
    """run.json as a run with an ``s3://`` workdir writes it: its folders are URLs."""
    manifest = json.loads((run / "run.json").read_text(encoding="utf-8"))
    for rec in manifest["stages"].values():
        rec["directory"] = "s3://bucket/run/stages/" + Path(rec["directory"]).name
    (run / "run.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_a_workdir_downloaded_from_s3_is_compared_by_its_own_folders(tmp_path):
    a, b = _run(tmp_path, "a"), _run(tmp_path, "b", stored_otherwise=True)
    _as_downloaded_from_s3(a)
    cli = _cli(a, b)
    assert cli.returncode == 0 and cli.stdout.splitlines()[-1] == "4 stages compared: all equal", cli.stdout


def test_a_stage_whose_folder_is_not_there_is_an_error(tmp_path):
    """run.json names a complete stage that neither its path nor the workdir's stages/ holds
    (a partial download): exit 2 naming it, whatever the other stages give."""
    a, b = _run(tmp_path, "a"), _run(tmp_path, "b", stored_otherwise=True)
    _as_downloaded_from_s3(a)
    gone = next((a / "stages").glob("links-*"))
    shutil.rmtree(gone)
    cli = _cli(a, b)
    assert cli.returncode == 2, cli.stdout
    assert (f"run A's run.json names stage 'links', its folder is not there: s3://bucket/run/stages/{gone.name} "
            f"(nor {gone})") in cli.stderr, cli.stderr
    assert _cli(a, b, "--stage", "parse").returncode == 0  # the stages asked for are there


def test_an_execution_key_only_in_one_run_is_a_note_and_any_other_parameter_a_difference(tmp_path):
    """quilt's ``engine`` (a ``QuiltParams.execution_keys`` entry) is absent from a run of a version
    before the key and ``auto`` in one after: how the stage ran, not what it found.  ``m`` is a result."""
    runs = []
    for name, params in (("a", {"m": 50}), ("b", {"m": 50, "engine": "auto"}), ("c", {"m": 40, "engine": "auto"})):
        run = tmp_path / name
        _stage(run, "quilt", {"stage_class": "spamflow_quilt.detector:QuiltDetector", "params": params,
                              "outputs": {"quilts": "quilts.jsonl", "summary": "summary.json"}},
               {"quilts.jsonl": _jsonl([{"doc_id": 1}]), "summary.json": json.dumps({"params": params, "t": 0.5})})
        runs.append(run)
    same, text = _report(runs[0], runs[1])
    assert same, text
    assert "note: stage.json params.engine: 'absent' in run A, 'auto' in run B" in text
    assert "note: summary.json: $.params.engine: only in run B (an execution key)" in text, text
    same, text = _report(runs[1], runs[2])
    assert not same and "stage.json params.m: 50 vs 40" in text, text
    assert "summary.json: $.params.m: 50 vs 40" in text and "$.params.m: 50 vs 40 (an execution key)" not in text


def test_a_new_version_with_equal_outputs_is_equal_and_noted(tmp_path):
    """A stage's version, signature and upstream signatures name its code and inputs, not its
    results: with every output equal the runs are equal (a note says what changed); a different
    output is still a difference."""
    runs = []
    for name, version, rows in (("a", "3", [{"doc_id": 1}]), ("b", "4", [{"doc_id": 1}]), ("c", "4", [{"doc_id": 2}])):
        run = tmp_path / name
        _stage(run, "quilt", {"version": version, "signature": f"{int(version):016x}", "requires": {"parse": version},
                              "outputs": {"quilts": "quilts.jsonl"}}, {"quilts.jsonl": _jsonl(rows)})
        runs.append(run)
    same, text = _report(runs[0], runs[1])
    assert same, text
    assert "note: stage.json version: '3' vs '4' (the stage's identity; its outputs are compared)" in text, text
    assert "note: stage.json requires.parse" in text and "note: stage.json signature" in text, text
    same, text = _report(runs[1], runs[2])
    assert not same and "quilts.jsonl" in text, text
