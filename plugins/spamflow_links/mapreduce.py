"""The links stage's MapReduce engine: the drivers of the edges job, of the rank steps and of
the supporter-ball steps. Each driver writes the job's input under a work folder, starts
the job through ``spamflow.mr.run_job`` and reads the result back into the same NumPy
arrays the in-memory code makes (same definitions: :mod:`spamflow_links.ranks`,
:mod:`spamflow_links.neighbourhood`), so the features agree within float rounding.

The driver keeps O(nodes) vectors (the rank vector, the ball sizes) and checks the L1 change
between steps itself, as ``power_iteration`` does; the O(edges) work is in the jobs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from spamflow import storage
from spamflow.mr import run_job
from spamflow.mr.driver import package_zip
from spamflow_links.hostgraph import HostGraph, graphs_from_records
from spamflow_links.mr_ball_step import MRBallStep
from spamflow_links.mr_host_edges import MRHostEdges
from spamflow_links.mr_rank_step import MRRankStep, node_record
from spamflow_links.neighbourhood import hll_estimate, hll_init
from spamflow_links.ranks import check_weights


def host_graphs_mapreduce(parts: Sequence[Path], workdir: Path, *, nofollow: bool = True, runner: str = "inline",
                          runner_args: Sequence[str] = ()) -> tuple[np.ndarray, list[HostGraph]]:
    """The node index and host graphs of the page table's Parquet ``parts`` (nodes = hosts),
    equal to ``load_graphs``'s: one input file per part, so each part is a map task.  A part
    in a remote workdir's cache is named by its published URL, so workers on any machine read
    it; other parts by their absolute path (the tasks get spamflow's zip for the reader,
    ``spamflow.storage.open_input``, which opens either)."""
    inputs = workdir / "parts"
    inputs.mkdir(parents=True, exist_ok=True)
    listed = []
    for i, part in enumerate(sorted(parts)):
        listed.append(inputs / f"{i:05d}.txt")
        listed[-1].write_text(f"{storage.task_location(part)}\n")
    if not listed:
        return np.array([], dtype=object), []
    if runner != "inline":  # the tasks open each part with spamflow.storage.open_input
        runner_args = (*runner_args, "--py-files", str(package_zip("spamflow")))
    out = run_job(MRHostEdges, listed, workdir / "host_edges.jsonl", runner=runner,
                  args=["--nofollow", "yes" if nofollow else "no"], runner_args=runner_args)
    with open(out, encoding="utf-8") as fh:
        return graphs_from_records(json.loads(line) for line in fh if line.strip())


def _edges_text(walk: sp.csr_matrix) -> list[str]:
    """Row i's ``target:weight`` pairs, the edges part of node i's record."""
    return [",".join(f"{j}:{w!r}" for j, w in zip(walk.indices[lo:hi].tolist(), walk.data[lo:hi].tolist()))
            for lo, hi in zip(walk.indptr[:-1].tolist(), walk.indptr[1:].tolist())]


def _read_states(path: Path, n: int) -> list[str]:
    """The second field of every node line, by node id."""
    states = [""] * n
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            node, state, _ = line.split("\t", 2)
            states[int(node)] = state
    return states


class MapReduceRanks:
    """PageRank-type walks and supporter balls, each step one job on ``runner``; the same
    methods as :class:`spamflow_links.static_features.MemoryRanks`."""

    def __init__(self, workdir: Path, runner: str = "inline", runner_args: Sequence[str] = (),
                 max_iter: int = 1000) -> None:
        self.workdir = workdir
        self.runner = runner
        self.runner_args = tuple(runner_args)
        self.max_iter = max_iter
        self.jobs = 0
        """Jobs run so far."""
        self._files = 0
        workdir.mkdir(parents=True, exist_ok=True)

    def _path(self) -> Path:
        self._files += 1
        return self.workdir / f"step-{self._files:05d}.txt"

    def _run(self, job: type, source: Path, args: list[str]) -> Path:
        self.jobs += 1
        out = self._path()
        run_job(job, [source], out, runner=self.runner, args=args, runner_args=self.runner_args)
        source.unlink()
        return out

    def _write(self, walk: sp.csr_matrix, rank: np.ndarray, teleport: np.ndarray) -> Path:
        path = self._path()
        with open(path, "w", encoding="utf-8") as fh:
            for i, edges in enumerate(_edges_text(walk)):
                fh.write(node_record(i, float(rank[i]), float(teleport[i]), edges) + "\n")
        return path

    @staticmethod
    def _walk(weights: sp.spmatrix, reverse: bool) -> sp.csr_matrix:
        a = sp.csr_matrix(weights, dtype=np.float64)
        check_weights(a)
        walk = sp.csr_matrix(a.T) if reverse else a.copy()
        walk.eliminate_zeros()  # a zero weight is no link (the in-memory walk's products ignore it)
        walk.sort_indices()
        return walk

    def power_iteration(self, weights: sp.spmatrix, alpha: float, teleport: np.ndarray | None = None,
                        tol: float = 1e-10, reverse: bool = False) -> tuple[np.ndarray, int]:
        """``ranks.power_iteration`` on the walk along (or against) the links of ``weights``."""
        walk = self._walk(weights, reverse)
        n = walk.shape[0]
        if n == 0:
            return np.zeros(0), 0
        v = np.full(n, 1.0 / n) if teleport is None else np.asarray(teleport, np.float64) / float(np.sum(teleport))
        p = v.copy()  # uniform, or the seeds for TrustRank, as in memory
        dangling = np.flatnonzero(np.diff(walk.indptr) == 0)
        source = self._write(walk, p, v)
        iterations = 0
        while iterations < self.max_iter:
            iterations += 1
            jump = alpha * float(p.take(dangling).sum()) + (1.0 - alpha)
            source = self._run(MRRankStep, source, ["--alpha", repr(alpha), "--jump", repr(jump)])
            new = np.array(_read_states(source, n), dtype=np.float64)
            err = float(np.abs(new - p).sum())
            p = new
            if err < tol:
                break
        source.unlink()
        return p / p.sum(), iterations

    def pagerank(self, weights: sp.spmatrix, alpha: float, tol: float, teleport: np.ndarray | None = None,
                 reverse: bool = False) -> np.ndarray:
        return self.power_iteration(weights, alpha, teleport, tol, reverse)[0]

    def truncated_pagerank(self, weights: sp.spmatrix, max_t: int, alpha: float,
                           pr: np.ndarray) -> dict[int, np.ndarray]:
        """``ranks.truncated_pagerank``: x_{t+1} = S x_t + dangling(x_t) / N, one job per t."""
        walk = self._walk(weights, False)
        n = walk.shape[0]
        if n == 0:
            return {t: np.zeros(0) for t in range(1, max_t + 1)}
        x = np.full(n, 1.0 / n)
        head = np.zeros(n)
        dangling = np.flatnonzero(np.diff(walk.indptr) == 0)
        out: dict[int, np.ndarray] = {}
        source = self._write(walk, x, np.full(n, 1.0 / n))
        for t in range(max_t + 1):
            head += (1.0 - alpha) * alpha ** t * x
            if t >= 1:
                out[t] = np.clip(pr - head, 0.0, None)
            if t < max_t:  # the last x is never used
                jump = float(x.take(dangling).sum())  # the dangling mass, spread as 1/N to every node
                source = self._run(MRRankStep, source, ["--alpha", "1.0", "--jump", repr(jump)])
                x = np.array(_read_states(source, n), dtype=np.float64)
        source.unlink()
        return out

    def supporters(self, binary: sp.spmatrix, max_k: int, log2m: int, seed: int, exact: bool) -> dict[int, np.ndarray]:
        """``supporters_exact`` (``exact``) or ``supporters_hll``: one job per distance."""
        a = sp.csr_matrix(binary, dtype=np.float64)
        a.sort_indices()
        n = a.shape[0]
        if n == 0:
            return {k: np.zeros(0, dtype=np.int64 if exact else np.float64) for k in range(1, max_k + 1)}
        targets = [",".join(map(str, a.indices[lo:hi].tolist()))
                   for lo, hi in zip(a.indptr[:-1].tolist(), a.indptr[1:].tolist())]
        kind = "exact" if exact else "hll"
        if exact:
            states = [str(i) for i in range(n)]
        else:
            regs = hll_init(n, log2m, seed)
            states = [regs[:, i].tobytes().hex() for i in range(n)]
        source = self._path()
        with open(source, "w", encoding="utf-8") as fh:
            fh.writelines(f"{i}\t{states[i]}\t{targets[i]}\n" for i in range(n))
        previous = self._ball_sizes(states, kind, log2m)
        out: dict[int, np.ndarray] = {}
        for k in range(1, max_k + 1):
            source = self._run(MRBallStep, source, ["--kind", kind])
            size = self._ball_sizes(_read_states(source, n), kind, log2m)
            out[k] = size - previous if exact else np.clip(size - previous, 0.0, None)
            previous = size
        source.unlink()
        return out

    @staticmethod
    def _ball_sizes(states: list[str], kind: str, log2m: int) -> np.ndarray:
        if kind == "exact":
            return np.array([s.count(",") + 1 if s else 0 for s in states], dtype=np.int64)
        m = 1 << log2m
        regs = np.frombuffer(bytes.fromhex("".join(states)), dtype=np.uint8).reshape(len(states), m).T
        return hll_estimate(np.ascontiguousarray(regs)) if len(states) else np.zeros(0)
