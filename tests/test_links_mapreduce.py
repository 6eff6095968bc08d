"""The links stage's MapReduce engine against its in-memory code: the edges job gives the same
host graphs as ``load_graphs``, the rank and supporter steps the same vectors as ``Walk`` and
the neighbourhood functions (within 1e-9 in L1, exactly for the integer and register
results), on the inline and local runners and once on Spark ``local[2]``."""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp

from spamflow.detector import RunSettings, StageContext, StageOutputs
from spamflow.errors import SpamflowError
from spamflow_links.detector import LinksDetector, load_graphs
from spamflow_links.hostgraph import graph_from_edges
from spamflow_links.incremental import FrozenLinks
from spamflow_links.mapreduce import MapReduceRanks, host_graphs_mapreduce
from spamflow_links.mr_ball_step import spread, unite
from spamflow_links.mr_rank_walk import gather, gather_mass, scatter
from spamflow_links.params import LinksParams
from spamflow_links.ranks import Walk, power_iteration, rank_index
from spamflow_links.static_features import STATIC_COLUMNS, MemoryRanks

JOB_MODULES = ("spamflow_links.mr_host_edges", "spamflow_links.mr_rank_walk", "spamflow_links.mr_ball_step",
               "spamflow_links.mr_walks", "spamflow_links.mr_node_stats")
TOL = 1e-9  # L1, per rank vector


# --- a page table with every case load_graphs distinguishes ---

def page_table(seed: int, hosts: int = 14, pages: int = 120) -> pa.Table:
    """Pages over two snapshots: links to crawled hosts (mixed case, trailing dots, ports),
    self-links, links to uncrawled hosts, links without a host, nofollow links, pages with
    an empty host, a host crawled only in one snapshot, pages without words."""
    rng = np.random.default_rng(seed)
    names = [f"h{i}.example.org" for i in range(hosts)]
    rows = []
    for k in range(pages):
        snapshot = "2026-01" if k % 3 else "2026-02"
        host = "" if k % 29 == 5 else names[int(rng.integers(0, hosts - (1 if snapshot == "2026-02" else 0)))]
        links = []
        for _ in range(int(rng.integers(0, 7))):
            r = rng.random()
            if r < 0.05:
                url = "mailto:someone@example.org"
            elif r < 0.1:
                url = "/relative/path"
            elif r < 0.2:
                url = f"http://uncrawled{int(rng.integers(0, 3))}.example.net/x"
            elif r < 0.3:
                url = f"https://{host or 'h0.example.org'}/self"
            else:
                target = names[int(rng.integers(0, hosts))]
                url = f"http://{target.upper() if r < 0.35 else target}{'.' if r > 0.9 else ''}:8080/p{k}"
            links.append({"url": url, "anchor": "a", "nofollow": bool(rng.random() < 0.2)})
        words = None if k % 17 == 3 else ["w"] * int(rng.integers(0, 20))
        rows.append({"snapshot": snapshot, "host": host, "domain": host, "words": words, "links": links})
    schema = pa.schema([("snapshot", pa.string()), ("host", pa.string()), ("domain", pa.string()),
                        ("words", pa.list_(pa.string())),
                        ("links", pa.list_(pa.struct([("url", pa.string()), ("anchor", pa.string()),
                                                      ("nofollow", pa.bool_())])))])
    return pa.Table.from_pylist(rows, schema=schema)


def write_parts(table: pa.Table, folder: Path, parts: int = 3) -> Path:
    folder.mkdir(parents=True)
    step = -(-table.num_rows // parts)
    for i in range(parts):
        pq.write_table(table.slice(i * step, step), folder / f"part-{i}.parquet")
    return folder


def assert_same_graphs(got, want) -> None:
    (index, graphs), (index_want, graphs_want) = got, want
    assert index.tolist() == index_want.tolist()
    assert [g.snapshot for g in graphs] == [g.snapshot for g in graphs_want]
    for g, w in zip(graphs, graphs_want):
        assert (g.adjacency != w.adjacency).nnz == 0 and g.adjacency.nnz == w.adjacency.nnz
        assert g.crawled.tolist() == w.crawled.tolist() and g.words.tolist() == w.words.tolist()
        assert g.counts == w.counts
        # the links to uncrawled hosts that incremental scoring keeps (frozen.npz): the same rows
        assert g.uncrawled.equals(w.uncrawled) and g.uncrawled.num_rows > 0


@pytest.mark.slow
@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("nofollow", [True, False])
def test_edges_job_builds_the_graphs_load_graphs_builds(tmp_path, runner, nofollow):
    pages = write_parts(page_table(seed=4), tmp_path / "pages")
    dataset = ds.dataset(pages, format="parquet")
    want = load_graphs(dataset, LinksParams(nofollow=nofollow), progress=False)
    got = host_graphs_mapreduce([Path(f) for f in dataset.files], tmp_path / "work", nofollow=nofollow,
                                runner=runner)
    assert_same_graphs(got, want)
    totals = {k: sum(g.counts[k] for g in want[1]) for k in want[1][0].counts}
    # every case is present, so the comparison above covers it
    assert all(totals[k] > 0 for k in ("self_links", "links_to_uncrawled", "links_without_host",
                                       "pages_without_host")), totals


def test_a_bad_part_fails_naming_the_job_and_the_file(tmp_path):
    bad = tmp_path / "part-0.parquet"
    bad.write_bytes(b"not parquet")
    with pytest.raises(SpamflowError, match=r"MRHostEdges failed on the 'inline' runner: .*part-0\.parquet: not a part"):
        host_graphs_mapreduce([bad], tmp_path / "work", runner="inline")
    pq.write_table(pa.table({"snapshot": ["s"], "host": ["h"]}), bad)
    with pytest.raises(SpamflowError, match=r"part-0\.parquet: not a part of the page table: no column words, links"):
        host_graphs_mapreduce([bad], tmp_path / "work2", runner="inline")


# --- ranks and supporters ---

def random_graph(n: int, m: int, seed: int, counts: bool = False) -> sp.csr_matrix:
    """A directed graph with dangling nodes (the last tenth link nowhere) and, with ``counts``,
    link weights 1-4."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n - n // 10, m)
    dst = rng.integers(0, n, m)
    a = graph_from_edges(n, zip(src.tolist(), dst.tolist())).adjacency
    if counts:
        a.data[:] = rng.integers(1, 5, a.nnz)
    return a


def l1(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).sum())


@pytest.mark.slow
@pytest.mark.parametrize("counts", [False, True])
def test_ranks_equal_the_in_memory_walk_inline(tmp_path, counts):
    """PageRank, TrustRank, CheiRank and truncated PageRank, each walk on its own, as in memory:
    at alpha 0.5 (~35 steps a walk to 1e-10 instead of ~140 at 0.85: the same comparison;
    test_iterations_stop_at_the_same_tolerance walks at 0.85)."""
    a = random_graph(80, 320, seed=7, counts=counts)
    seeds = np.zeros(80)
    seeds[[3, 11, 40]] = 1.0
    alpha = 0.5
    memory, mr = MemoryRanks(), MapReduceRanks(tmp_path, "inline")
    pr = memory.pagerank(a, alpha, 1e-10)
    assert l1(mr.pagerank(a, alpha, 1e-10), pr) < TOL
    assert l1(mr.pagerank(a, alpha, 1e-10, teleport=seeds), memory.pagerank(a, alpha, 1e-10, teleport=seeds)) < TOL
    assert l1(mr.pagerank(a, alpha, 1e-10, reverse=True), memory.pagerank(a, alpha, 1e-10, reverse=True)) < TOL
    truncated, truncated_mr = memory.truncated_pagerank(a, 4, alpha, pr), mr.truncated_pagerank(a, 4, alpha, pr)
    assert sorted(truncated_mr) == [1, 2, 3, 4]
    assert all(l1(truncated_mr[t], truncated[t]) < TOL for t in truncated)
    assert not list(tmp_path.iterdir())  # every step's file is gone


def test_iterations_stop_at_the_same_tolerance(tmp_path):
    a = random_graph(50, 200, seed=2)
    for tol in (1e-3, 1e-8):
        p, iterations = MapReduceRanks(tmp_path, "inline").power_iteration(a, 0.85, tol=tol)
        p_mem, iterations_mem = power_iteration(Walk.of(a), 0.85, None, tol, 1000)
        assert iterations == iterations_mem and l1(p, p_mem) < TOL


def test_rank_index_ties_within_rounding_go_by_node_id():
    """Two hosts with the same links get PageRanks an ulp apart in scipy and bit-equal ones by
    fsum (the demo's CheiRank: 0.027725160473663146 and 0.02772516047366315): both engines must
    give them the same K, so values within 1e-12 (relative) are a tie, ordered by node id."""
    p = np.array([0.027725160473663146, 0.02772516047366315, 0.6, 0.027725160473663146 - 1e-9, 0.02772516047366315])
    assert rank_index(p).tolist() == [2, 3, 1, 5, 4]
    assert rank_index(np.array([0.2, 0.2 + 2.8e-17, 0.2 + 5.6e-17])).tolist() == [1, 2, 3]  # a chain is one tie
    assert rank_index(np.array([0.1, 0.4, 0.2, 0.3])).tolist() == [4, 1, 3, 2]


def test_a_step_by_hand():
    """Node 0 -> 1 (w 1), 0 -> 2 (w 3), node 2 dangling: one step of the reduce, worked by hand."""
    # node 2 had y = 0.1, J = 0.2 (p = 0.1 + 0.2 * 0.25); it receives y-shares 0.4 * 3/4 from
    # node 0, and its u (what the teleport part sends it) is 0.6; alpha 0.5
    line = gather("2", [["L", 0.1, 0.25, 0.6, "", [0.09]], 0.4 * 3.0 / 4.0, [0.2, 1000, 5]], alpha=0.5, keep=2)
    fields = line.split("\t")
    assert fields[:2] == ["2", "L"]
    assert float(fields[2]) == pytest.approx(0.5 * (0.3 + 0.2 * 0.6), abs=1e-15)
    assert [float(x) for x in fields[6].split(",")] == pytest.approx([0.1 + 0.2 * 0.25, 0.09], abs=1e-15)
    # told to keep iteration 4 at iteration 5: the node freezes on its previous full value
    assert gather("2", [["L", 0.1, 0.25, 0.6, "", [0.09]], [0.2, 4, 5]], alpha=0.5, keep=2) == "2\tF\t0.09"
    # the mass: J' = alpha * (dangling y + J * dangling teleport) + 1 - alpha; the change learnt
    mass = gather_mass([["M", 0.2, 5, 0.25, 3, 1000, [0.5, 0.1], False], ["d", 0.1], ["e", 2e-11], ["e", 3e-11]],
                       alpha=0.5, tol=1e-10).split("\t")
    assert float(mass[2]) == pytest.approx(0.5 * (0.1 + 0.2 * 0.25) + 0.5, abs=1e-15)
    assert mass[3] == "6" and mass[6] == "4"  # iteration 4's change 5e-11 < tol: keep iteration 4
    with pytest.raises(ValueError, match="node '9'"):
        gather("9", [0.1], alpha=0.5, keep=2)
    assert unite("1", [["s", "0f00", "2"], "01ff"], "hll").split("\t")[1] == "0fff"
    assert unite("1", [["s", "1", "2"], "0,3", "3"], "exact").split("\t")[1:] == ["0,1,3", "2", "3"]
    # grown its distances (a job longer than the balls need): it sends nothing and keeps its sizes
    assert list(spread("1\t0,1\t2\t1,2", distances=2)) == [("1", ["s", "0,1", "2", "1,2"])]
    assert unite("1", [["s", "0,1", "2", "1,2"]], "exact", distances=2) == "1\t\t\t1,2"
    assert len(list(spread("1\t0,1\t2\t2", distances=2))) == 2  # one distance to go: sends its ball to 2
    assert list(scatter("0\tL\t0.5\t0.5\t0.0\t1:1.0\t")) == [("0", ["L", 0.5, 0.5, 0.0, "1:1.0", []]), ("1", 0.5)]


def assert_same_walks(got, want) -> None:
    """Every walk of ``walks`` within 1e-9 in L1, the supporters exactly."""
    for name in ("pagerank", "trustrank", "cheirank"):
        assert l1(getattr(got, name), getattr(want, name)) < TOL, name
    assert sorted(got.truncated) == sorted(want.truncated) == [1, 2, 3, 4]
    assert all(l1(got.truncated[t], want.truncated[t]) < TOL for t in want.truncated)
    assert sorted(got.supporters) == sorted(want.supporters) == [1, 2, 3, 4]
    assert all(np.array_equal(got.supporters[k], want.supporters[k]) for k in want.supporters)


@pytest.mark.parametrize("exact", [True, False])
def test_every_walk_of_a_snapshot_in_one_job_equals_the_in_memory_walks(tmp_path, exact):
    """PageRank, TrustRank, CheiRank, truncated PageRank and the supporters together: the same
    vectors as the in-memory solver's, one after the other (alpha 0.5: the rank walks converge
    within the second job on inline, whose first job is 10 steps)."""
    a = random_graph(60, 240, seed=3, counts=True)
    seeds = np.zeros(60)
    seeds[[2, 17]] = 1.0
    wanted = dict(alpha=0.5, tol=1e-10, trust_seeds=seeds, truncated_steps=4, distances=4, log2m=6, seed=1,
                  exact=exact)
    mr = MapReduceRanks(tmp_path, "inline")
    want = MemoryRanks().walks(a, a, **wanted)
    assert_same_walks(mr.walks(a, a, **wanted), want)
    assert want.supporters[3].sum() > 0 and want.trustrank is not None
    assert mr.jobs == 2 and not list(tmp_path.iterdir())


def test_walks_stopped_by_max_iter_in_a_longer_job_keep_their_last_iterate(tmp_path):
    """max_iter 3 while truncated PageRank and the balls need 4 steps: the job has 4 and the
    rank walks freeze on iteration 3, as the in-memory walk stopped there."""
    a = random_graph(40, 150, seed=9)
    seeds = np.zeros(40)
    seeds[[1, 5]] = 1.0
    wanted = dict(alpha=0.85, tol=1e-10, trust_seeds=seeds, truncated_steps=4, distances=4, log2m=5, seed=2,
                  exact=True)
    mr = MapReduceRanks(tmp_path, "inline", max_iter=3)
    got, want = mr.walks(a, a, **wanted), MemoryRanks().walks(a, a, **wanted)
    assert mr.jobs == 1 and mr.steps == 4
    for p, teleport, reverse in ((got.pagerank, None, False), (got.trustrank, seeds, False), (got.cheirank, None, True)):
        assert l1(p, power_iteration(Walk.of(a, reverse=reverse), 0.85, teleport, 1e-10, 3)[0]) < TOL
    pr = power_iteration(Walk.of(a), 0.85, None, 1e-10, 3)[0]  # truncated PageRank subtracts from this PageRank
    want_truncated = MemoryRanks().truncated_pagerank(a, 4, 0.85, pr)
    assert all(l1(got.truncated[t], want_truncated[t]) < TOL for t in (1, 2, 3, 4))
    assert all(np.array_equal(got.supporters[k], want.supporters[k]) for k in (1, 2, 3, 4))


@pytest.mark.parametrize("exact", [True, False])
def test_supporters_equal_the_in_memory_counts_inline(tmp_path, exact):
    b = random_graph(120, 300, seed=5)
    want = MemoryRanks().supporters(b, 4, 6, 3, exact)
    got = MapReduceRanks(tmp_path, "inline").supporters(b, 4, 6, 3, exact)
    assert sorted(got) == [1, 2, 3, 4]
    for k in want:
        assert np.array_equal(got[k], want[k]), k  # union and max are exact: the same counts
    if exact:
        assert want[3].sum() > 0


@pytest.mark.slow
def test_local_runner_steps_equal_the_in_memory_walk(tmp_path):
    """The local runner (tasks as subprocesses, a real sort): three power iterations, truncated
    PageRank and the HyperLogLog supporters (each step a job, so kept short)."""
    a = random_graph(40, 150, seed=9)
    mr = MapReduceRanks(tmp_path, "local", max_iter=3)
    p, iterations = mr.power_iteration(a, 0.85, tol=1e-10)
    assert iterations == 3 and l1(p, power_iteration(Walk.of(a), 0.85, None, 1e-10, 3)[0]) < TOL
    pr = MemoryRanks().pagerank(a, 0.85, 1e-10)
    want = MemoryRanks().truncated_pagerank(a, 2, 0.85, pr)
    got = mr.truncated_pagerank(a, 2, 0.85, pr)
    assert all(l1(got[t], want[t]) < TOL for t in (1, 2))
    supporters = mr.supporters(a, 2, 5, 1, exact=False)
    want_supporters = MemoryRanks().supporters(a, 2, 5, 1, exact=False)
    assert all(np.array_equal(supporters[k], want_supporters[k]) for k in (1, 2))


@pytest.mark.slow
def test_real_blog_graph_pagerank_and_supporters(tmp_path):
    """polblogs-2005 (1,490 blogs, 19,090 arcs, many dangling): PageRank and the exact and
    HyperLogLog supporters at distance 2 as in memory."""
    from test_links_ranks import _read_polblogs

    n, arcs = _read_polblogs()
    a = graph_from_edges(n, arcs).adjacency
    mr = MapReduceRanks(tmp_path, "inline")  # alpha 0.5: ~35 inline steps instead of ~140 at 0.85
    assert l1(mr.pagerank(a, 0.5, 1e-10), MemoryRanks().pagerank(a, 0.5, 1e-10)) < TOL
    for exact in (True, False):
        got, want = mr.supporters(a, 2, 7, 0, exact), MemoryRanks().supporters(a, 2, 7, 0, exact)
        assert np.array_equal(got[2], want[2])


# --- the stage ---

def run_stage(pages: Path, outdir: Path, settings: RunSettings, **params) -> dict:
    outdir.mkdir()
    parse = StageOutputs("parse", pages.parent, {"pages": pages}, {})
    p = LinksParams(trust_seeds=["h1.example.org", "h2.example.org"], **params)
    result = LinksDetector().run(StageContext(p, {"parse": parse}, outdir, settings))
    assert sorted(f.name for f in outdir.iterdir()) == sorted(
        ["graphs", "hosts.parquet", "summary.json", "rank_density.npz", "temporal.parquet",
         "frozen.npz"])  # no work files
    return {"counts": result.counts, "hosts": pq.read_table(outdir / "hosts.parquet"),
            "temporal": pq.read_table(outdir / "temporal.parquet"), "frozen": FrozenLinks.load(outdir / "frozen.npz")}


@pytest.mark.slow
def test_stage_features_are_the_same_on_both_engines(tmp_path):
    """The whole static feature table of the stage with engine: mapreduce (edges job, rank and
    supporter steps on inline) against engine: memory, on a generated page table with both the
    exact and the HyperLogLog supporters."""
    pages = write_parts(page_table(seed=11, hosts=30, pages=400), tmp_path / "parse" / "pages")
    settings = RunSettings(runner="inline")
    for exact_max_nodes in (5000, 0):  # alpha 0.5: a quarter of 0.85's inline steps, the same comparison
        memory = run_stage(pages, tmp_path / f"memory{exact_max_nodes}", settings, engine="memory",
                           exact_max_nodes=exact_max_nodes, alpha=0.5)
        mr = run_stage(pages, tmp_path / f"mr{exact_max_nodes}", settings, engine="mapreduce",
                       exact_max_nodes=exact_max_nodes, alpha=0.5)
        assert mr["counts"].pop("mapreduce_jobs") > 0 and "mapreduce_jobs" not in memory["counts"]
        assert mr["counts"] == memory["counts"]
        assert {"change", "HitsAuth", "HitsHub", "ChangePPR"} <= set(memory["temporal"].column_names)
        assert mr["temporal"].equals(memory["temporal"])  # computed in this process on both engines
        a, b = mr["frozen"], memory["frozen"]  # incremental scoring's graph: the same on both engines
        assert len(b.uncrawled_target) > 0 and set(b.uncrawled_target) <= {f"uncrawled{i}.example.net" for i in range(3)}
        assert np.array_equal(a.nodes, b.nodes) and (a.adjacency != b.adjacency).nnz == 0
        assert np.array_equal(a.uncrawled_source, b.uncrawled_source) and np.array_equal(a.uncrawled_links,
                                                                                         b.uncrawled_links)
        assert np.array_equal(a.uncrawled_target, b.uncrawled_target)
        assert np.abs(a.pagerank - b.pagerank).sum() < TOL and np.abs(a.walk - b.walk).sum() < TOL
        got, want = mr["hosts"], memory["hosts"]
        assert got.column_names == want.column_names == ["snapshot", "host", *STATIC_COLUMNS]
        assert got["host"].equals(want["host"]) and got["snapshot"].equals(want["snapshot"])
        for name in STATIC_COLUMNS:
            x = np.array(got[name].to_pylist(), dtype=float)
            y = np.array(want[name].to_pylist(), dtype=float)
            assert np.array_equal(np.isnan(x), np.isnan(y)), name
            ok = ~np.isnan(x)
            if name.endswith("_index") or name.startswith(("neighbors_", "indegree", "outdegree")):
                assert np.array_equal(x[ok], y[ok]), name  # ranks' order (ties by id) and counts: exact
            else:  # ranks and what is computed from them: within 1e-9 in L1 (relative for the logs)
                assert np.abs(x[ok] - y[ok]).sum() < TOL * max(1.0, np.abs(y[ok]).max()), name


@pytest.mark.slow
def test_demo_page_table_gives_the_same_features_on_both_engines(demo_once, tmp_path):
    """The demo's own page table and links parameters (trust seeds), engine: mapreduce on the
    inline runner against engine: memory: the same graphs, counts and temporal table, every
    static column within 1e-9 in L1, rank indices equal (the demo has hosts with tied CheiRank)."""
    links = demo_once["manifest"]["stages"]["links"]
    pages = Path(demo_once["manifest"]["stages"]["parse"]["outputs"]["pages"])
    parse = StageOutputs("parse", pages.parent, {"pages": pages}, {})
    out = {}
    for engine in ("memory", "mapreduce"):
        outdir = tmp_path / engine
        outdir.mkdir()
        params = LinksParams(**{**links["params"], "engine": engine})
        result = LinksDetector().run(StageContext(params, {"parse": parse}, outdir, RunSettings(runner="inline")))
        out[engine] = (result.counts, outdir)
    (counts_mem, mem), (counts_mr, mr) = out["memory"], out["mapreduce"]
    assert counts_mr.pop("mapreduce_jobs") > 0 and counts_mr == counts_mem and counts_mem["edges"] > 900
    for npz in (mem / "graphs").glob("*.npz"):
        assert (sp.load_npz(npz) != sp.load_npz(mr / "graphs" / npz.name)).nnz == 0
    temporal = pq.read_table(mem / "temporal.parquet")
    assert {"change", "HitsAuth", "HitsHub", "ChangePPR"} <= set(temporal.column_names)
    assert pq.read_table(mr / "temporal.parquet").equals(temporal)
    got, want = pq.read_table(mr / "hosts.parquet"), pq.read_table(mem / "hosts.parquet")
    assert got.column_names == want.column_names and got["host"].equals(want["host"])
    for name in STATIC_COLUMNS:
        x, y = (np.array(t[name].to_pylist(), dtype=float) for t in (got, want))
        assert np.array_equal(np.isnan(x), np.isnan(y)), name
        ok = ~np.isnan(x)
        assert np.abs(x[ok] - y[ok]).sum() < TOL, name
        if name.endswith("_index"):
            assert np.array_equal(x, y), name


@pytest.mark.slow
def test_auto_uses_mapreduce_over_the_edge_threshold(tmp_path):
    pages = write_parts(page_table(seed=12), tmp_path / "parse" / "pages")
    small = run_stage(pages, tmp_path / "small", RunSettings(), engine="auto", mapreduce_above_edges=10**9)
    large = run_stage(pages, tmp_path / "large", RunSettings(), engine="auto", mapreduce_above_edges=1)
    assert "mapreduce_jobs" not in small["counts"] and large["counts"]["mapreduce_jobs"] > 0


def test_engine_keys_stay_out_of_the_signature():
    assert LinksParams.execution_keys == frozenset({"engine", "mapreduce_above_edges"})
    with pytest.raises(ValueError, match="engine"):
        LinksParams(engine="hadoop")


@pytest.mark.parametrize("module", JOB_MODULES)
def test_job_modules_import_without_spamflow(module):
    code = f"import sys; sys.modules['spamflow'] = None; import {module}"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert importlib.import_module(module)


def test_job_runs_as_a_script(tmp_path):
    """A job file runs by itself, as Hadoop streaming starts it (``python mr_walks.py``):
    two PageRank iterations on 0 -> 1 (1 dangling), alpha 0.85, worked by hand:
    p_1 = (0.15 / 2 + 0.85 * 0.5 / 2, that + 0.85 * 0.5) = (0.2875, 0.7125)."""
    import spamflow_links

    source = tmp_path / "in.txt"
    source.write_text("p\t0\tL\t0.5\t0.5\t0.0\t1:1.0\t\np\t1\tL\t0.5\t0.5\t0.5\t\t\n"
                      "p\t*\tM\t0.0\t0\t0.5\t2\t1000\t\t0\n")
    script = Path(spamflow_links.__file__).parent / "mr_walks.py"
    out = subprocess.run([sys.executable, str(script), "-r", "inline", "--no-conf", "--rank", "p:0.85:0.0:2",
                          "--steps", "2", str(source)], capture_output=True, text=True, check=True, timeout=120)
    lines = [line.split("\t")[1:] for line in out.stdout.splitlines()]
    p_1 = {f[0]: float(f[6].split(",")[0]) for f in lines if f[1] == "L"}
    assert p_1 == pytest.approx({"0": 0.2875, "1": 0.7125}, abs=1e-15)
    assert [f[3] for f in lines if f[0] == "*"] == ["2"]


@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None or not shutil.which("java"),
                    reason="needs pyspark (pip install -e '.[test]') and a Java runtime")
@pytest.mark.slow
def test_spark_local_mode_steps_equal_the_in_memory_walk(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")  # keep Spark on loopback
    pages = write_parts(page_table(seed=4, pages=40), tmp_path / "pages", parts=2)
    dataset = ds.dataset(pages, format="parquet")
    args = ("--spark-master", "local[2]")
    got = host_graphs_mapreduce([Path(f) for f in dataset.files], tmp_path / "work", runner="spark", runner_args=args)
    assert_same_graphs(got, load_graphs(dataset, LinksParams(), progress=False))
    a = got[1][0].adjacency
    seeds = np.zeros(a.shape[0])
    seeds[[0, 3]] = 1.0
    # every walk of the snapshot in ONE application: at alpha 0.5 and tol 1e-6 the rank walks'
    # guaranteed bound (22 iterations) is within the first job's 30 steps
    wanted = dict(alpha=0.5, tol=1e-6, trust_seeds=seeds, truncated_steps=4, distances=4, log2m=6, seed=1,
                  exact=False)
    mr = MapReduceRanks(tmp_path / "ranks", "spark", args)
    assert_same_walks(mr.walks(a, a, **wanted), MemoryRanks().walks(a, a, **wanted))
    assert mr.jobs == 1


def test_job_sizes_with_tol_zero_run_to_max_iter_in_two_jobs():
    """``tol: 0`` (no change is ever below it): the first job its usual size, the second
    everything left (the caller caps it at ``max_iter``), never a math error."""
    from spamflow_links.mapreduce import UNBOUNDED_STEPS, next_job_steps, steps_to_converge

    assert steps_to_converge(0.85, 0.0, 2.0) == UNBOUNDED_STEPS
    assert next_job_steps(0.85, 0.0, [], 0, first=10) == 10
    changes = [0.5 * 0.8 ** k for k in range(10)]
    assert next_job_steps(0.85, 0.0, changes, 1) == UNBOUNDED_STEPS
    # with a tolerance, the bound is the contraction's: alpha**k * change < tol
    k = steps_to_converge(0.85, 1e-10, 2.0)
    assert 0.85 ** (k - 2) * 2.0 >= 1e-10 * 0.85 and 0.85 ** (k - 1) * 2.0 < 1e-10
