"""The links stage's MapReduce engine: the drivers of the edges job, of the rank walks and of
the supporter balls. Each driver writes the job's input under a work folder, starts
the job through ``spamflow.mr.run_job`` and reads the result back into the same NumPy
arrays the in-memory code makes (same definitions: :mod:`spamflow_links.ranks`,
:mod:`spamflow_links.neighbourhood`), so the features agree within float rounding.

A walk or a ball computation is ONE multi-step job (one Spark application), not one job per
iteration: a cluster charges its start-up cost (10-60 s) per application.  The driver keeps
O(nodes) vectors (the rank vector, the ball sizes), and finishes from the job's last records
what the job could not see yet (the last two iterations' L1 changes); the O(edges) work is
in the jobs.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from spamflow import storage
from spamflow.errors import SpamflowError
from spamflow.mr import run_job
from spamflow.mr.driver import concrete_runner, package_zip
from spamflow_links.file_graph import FileGraph, FileWalk
from spamflow_links.hostgraph import HostGraph, graphs_from_records
from spamflow_links.mr_ball_step import MRBallSteps
from spamflow_links.mr_host_edges import MRHostEdges
from spamflow_links.mr_rank_walk import MASS, MRRankWalk, mass_record, node_record, parse_mass
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


def _targets_text(a: sp.csr_matrix):
    """(row i, its column indices joined by ``,``) of every row."""
    for i, (lo, hi) in enumerate(zip(a.indptr[:-1].tolist(), a.indptr[1:].tolist())):
        yield i, ",".join(map(str, a.indices[lo:hi].tolist()))


@dataclass
class MatrixWalk:
    """What a rank walk's input needs of a walk matrix (row i: node i's weighted out-links)."""

    matrix: sp.csr_matrix

    @property
    def n(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def out_weight(self) -> np.ndarray:
        return np.asarray(self.matrix.sum(axis=1)).ravel()

    def rows(self):
        return enumerate(_edges_text(self.matrix))

    def u(self, teleport: np.ndarray) -> np.ndarray:
        """S v: what the teleport part of p sends each node."""
        out_weight = self.out_weight
        linked = out_weight > 0
        spread = np.zeros(len(teleport))
        spread[linked] = teleport[linked] / out_weight[linked]
        return np.asarray(self.matrix.T @ spread).ravel()


def _read_sizes(path: Path, n: int, steps: int) -> list[list[str]]:
    """The balls' sizes after each step of a supporter-ball job, by step and node id."""
    sizes = [[""] * n for _ in range(steps)]
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            node, _, _, recorded = line.rstrip("\n").split("\t")
            for k, size in enumerate(recorded.split(",")):
                sizes[k][int(node)] = size
    return sizes


FIRST_STEPS = 30
"""Steps of a walk's first job on a cluster runner: most walks converge within it (the
guaranteed bound, :func:`steps_to_converge` from a change of 2, is ~150 steps at alpha 0.85
and tol 1e-10, and a converged walk's remaining steps still cost a shuffle each)."""

FIRST_STEPS_ON_A_LAPTOP = 10
"""The same on the inline and local runners, where a job costs no more to start than a step."""


UNBOUNDED_STEPS = 1 << 30
"""No bound: the caller caps it at the iterations left (``max_iter``)."""


def steps_to_converge(alpha: float, tol: float, change: float) -> int:
    """Iterations after one whose L1 change was ``change`` until the change is below ``tol``,
    at most: the iteration's map contracts L1 distances by ``alpha`` (its matrix is ``alpha``
    times a column-stochastic one), so change_k <= alpha**k * change; one more for rounding."""
    if change < tol or alpha <= 0:
        return 1
    if tol <= 0:  # no change is below it: the walk runs to max_iter
        return UNBOUNDED_STEPS
    return int(math.floor(math.log(tol / change) / math.log(alpha))) + 2


def next_job_steps(alpha: float, tol: float, changes: list[float], jobs: int, first: int = FIRST_STEPS) -> int:
    """Steps of a walk's next job, given the L1 changes of its iterations so far: the first job
    ``first`` (:data:`FIRST_STEPS`); the second as many as the observed rate of the last five changes
    predicts (plus two); any later one the guaranteed bound, so a walk is at most three jobs."""
    bound = steps_to_converge(alpha, tol, changes[-1] if changes else 2.0)
    if jobs == 0:
        return min(first, bound)
    if jobs >= 2 or len(changes) < 6 or not all(c > 0 for c in changes[-6:]) or tol <= 0:
        return bound
    rate = (changes[-1] / changes[-6]) ** (1 / 5)
    if rate >= alpha:
        return bound
    return min(bound, int(math.ceil(math.log(tol / changes[-1]) / math.log(rate))) + 2)


def _l1(a: np.ndarray, b: np.ndarray) -> float:
    return math.fsum(np.abs(a - b).tolist())


@dataclass
class WalkState:
    """The last records of a rank walk (:mod:`spamflow_links.mr_rank_walk`)."""

    t: int
    jump: float
    stop: int
    errors: list[float]
    """The L1 changes of iterations 1 .. t - 2 (the job learns each two steps late)."""
    y: np.ndarray
    history: list[np.ndarray]
    """Earlier full values, newest first."""
    frozen: np.ndarray | None
    """The kept iterate, once the nodes froze."""

    def full(self, teleport: np.ndarray) -> np.ndarray:
        """p_t = y_t + J_t v."""
        return self.y + self.jump * teleport


def read_walk(path: Path, n: int) -> WalkState:
    """The state of ``n`` nodes after a rank walk job, from its output file."""
    mass = None
    y, frozen = np.zeros(n), np.zeros(n)
    histories: list[list[float]] = [[] for _ in range(n)]
    kinds = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == MASS:
                mass = parse_mass(fields[2:])
                continue
            node, kind = int(fields[0]), fields[1]
            kinds.add(kind)
            if kind == "F":
                frozen[node] = float(fields[2])
            else:
                y[node] = float(fields[2])
                histories[node] = [float(x) for x in fields[6].split(",")] if fields[6] else []
    if mass is None or len(kinds) > 1:
        raise SpamflowError(f"{path}: not the output of a rank walk (mass record: {mass is not None}, "
                            f"node kinds: {sorted(kinds)})")
    jump, t, _, _, stop, errors, _ = mass
    depth = min((len(h) for h in histories), default=0)
    history = [np.array([h[k] for h in histories]) for k in range(depth)]
    return WalkState(t, jump, stop, errors, y, history, frozen if kinds == {"F"} else None)


class MapReduceRanks:
    """PageRank-type walks and supporter balls as multi-step jobs on ``runner`` (one job, so one
    Spark application, per walk: :mod:`spamflow_links.mr_rank_walk`); the same methods as
    :class:`spamflow_links.static_features.MemoryRanks`."""

    def __init__(self, workdir: Path, runner: str = "inline", runner_args: Sequence[str] = (),
                 max_iter: int = 1000) -> None:
        self.workdir = workdir
        self.runner = runner
        self.runner_args = tuple(runner_args)
        self.max_iter = max_iter
        self.jobs = 0
        """Jobs (applications) run so far."""
        self.steps = 0
        """MapReduce steps of those jobs."""
        self._files = 0
        workdir.mkdir(parents=True, exist_ok=True)

    def _path(self) -> Path:
        self._files += 1
        return self.workdir / f"step-{self._files:05d}.txt"

    def _run(self, job: type, source: Path, args: list[str], steps: int) -> Path:
        self.jobs += 1
        self.steps += steps
        out = self._path()
        run_job(job, [source], out, runner=self.runner, args=[*args, "--steps", str(steps)],
                runner_args=self.runner_args)
        source.unlink()
        return out

    def _write_walk(self, walk: MatrixWalk | FileWalk, start: np.ndarray, teleport: np.ndarray, stop: int) -> Path:
        """The rank walk's input: every node's record with y = ``start`` (J = 0), and the mass record."""
        u = walk.u(teleport)  # S v: what the teleport part of p sends each node
        dangling_teleport = math.fsum(teleport[walk.out_weight <= 0].tolist())
        path = self._path()
        with open(path, "w", encoding="utf-8") as fh:
            for i, edges in walk.rows():
                fh.write(node_record(i, float(start[i]), float(teleport[i]), float(u[i]), edges) + "\n")
            fh.write(mass_record(0.0, 0, dangling_teleport, len(teleport), stop) + "\n")
        return path

    @staticmethod
    def _walk(weights: sp.spmatrix | FileGraph, reverse: bool) -> MatrixWalk | FileWalk:
        if isinstance(weights, FileGraph):
            return weights.walk(reverse)
        a = sp.csr_matrix(weights, dtype=np.float64)
        check_weights(a)
        walk = sp.csr_matrix(a.T) if reverse else a.copy()
        walk.eliminate_zeros()  # a zero weight is no link (the in-memory walk's products ignore it)
        walk.sort_indices()
        return MatrixWalk(walk)

    def power_iteration(self, weights: sp.spmatrix, alpha: float, teleport: np.ndarray | None = None,
                        tol: float = 1e-10, reverse: bool = False) -> tuple[np.ndarray, int]:
        """``ranks.power_iteration`` on the walk along (or against) the links of ``weights``: the
        same iterate (within rounding) at the same iteration, in at most three jobs
        (:func:`next_job_steps`)."""
        walk = self._walk(weights, reverse)
        n = walk.n
        if n == 0:
            return np.zeros(0), 0
        v = np.full(n, 1.0 / n) if teleport is None else np.asarray(teleport, np.float64) / float(np.sum(teleport))
        source = self._write_walk(walk, v, v, stop=self.max_iter)  # starts at v: uniform, or TrustRank's seeds
        done, jobs = 0, 0
        changes: list[float] = []  # the L1 change of iteration 1, 2, ...
        while True:
            first = FIRST_STEPS_ON_A_LAPTOP if concrete_runner(self.runner) in ("inline", "local") else FIRST_STEPS
            steps = min(next_job_steps(alpha, tol, changes, jobs, first), self.max_iter - done)
            jobs += 1
            source = self._run(MRRankWalk, source, ["--alpha", repr(alpha), "--tol", repr(tol), "--history", "2"],
                               steps)
            walked = read_walk(source, n)
            t, latest = walked.t, walked.full(v)
            if walked.frozen is not None:
                p, iterations = walked.frozen, walked.stop
                break
            iterates = dict(zip(range(t, t - 3, -1), [latest, *walked.history]))  # p_t, p_t-1, p_t-2 (t >= 2)
            stop = walked.stop
            before = [_l1(iterates[t - 1], iterates[t - 2])] if t >= 2 else []  # iteration t-1's change
            if before and before[0] < tol:
                stop = min(stop, t - 1)
            change = _l1(latest, iterates[t - 1])
            changes = [*walked.errors, *before, change]
            if change < tol:
                stop = min(stop, t)
            if stop <= t:
                p, iterations = iterates[stop], stop
                break
            done = t
        source.unlink()
        return p / p.sum(), iterations

    def pagerank(self, weights: sp.spmatrix, alpha: float, tol: float, teleport: np.ndarray | None = None,
                 reverse: bool = False) -> np.ndarray:
        return self.power_iteration(weights, alpha, teleport, tol, reverse)[0]

    def truncated_pagerank(self, weights: sp.spmatrix, max_t: int, alpha: float,
                           pr: np.ndarray) -> dict[int, np.ndarray]:
        """``ranks.truncated_pagerank``: x_{t+1} = S x_t + dangling(x_t) / N, x_1 .. x_max_t
        by one job of max_t steps whose nodes keep every x."""
        walk = self._walk(weights, False)
        n = walk.n
        if n == 0:
            return {t: np.zeros(0) for t in range(1, max_t + 1)}
        uniform = np.full(n, 1.0 / n)
        xs = [uniform]
        if max_t >= 1:
            source = self._write_walk(walk, uniform, uniform, stop=max_t + 1)  # never frozen
            source = self._run(MRRankWalk, source, ["--alpha", "1.0", "--history", str(max_t)], max_t)
            walked = read_walk(source, n)
            source.unlink()
            xs = [*walked.history[::-1], walked.full(uniform)]
        head = np.zeros(n)
        out: dict[int, np.ndarray] = {}
        for t in range(max_t + 1):
            head += (1.0 - alpha) * alpha ** t * xs[t]
            if t >= 1:
                out[t] = np.clip(pr - head, 0.0, None)
        return out

    def supporters(self, binary: sp.spmatrix | FileGraph, max_k: int, log2m: int, seed: int,
                   exact: bool) -> dict[int, np.ndarray]:
        """``supporters_exact`` (``exact``) or ``supporters_hll``: one job of ``max_k`` steps
        whose nodes record their ball's size (count or registers) at every distance."""
        if isinstance(binary, FileGraph):
            n, targets = binary.n, binary.targets
        else:
            a = sp.csr_matrix(binary, dtype=np.float64)
            a.sort_indices()
            n, targets = a.shape[0], functools.partial(_targets_text, a)
        if n == 0:
            return {k: np.zeros(0, dtype=np.int64 if exact else np.float64) for k in range(1, max_k + 1)}
        kind = "exact" if exact else "hll"
        if exact:
            states = [str(i) for i in range(n)]
        else:
            regs = hll_init(n, log2m, seed)
            states = [regs[:, i].tobytes().hex() for i in range(n)]
        source = self._path()
        with open(source, "w", encoding="utf-8") as fh:
            fh.writelines(f"{i}\t{states[i]}\t{out}\n" for i, out in targets())
        previous = self._ball_sizes(["1"] * n if exact else states, kind, log2m)  # ball_0(x) = {x}
        by_distance: list[list[str]] = []
        if max_k >= 1:
            source = self._run(MRBallSteps, source, ["--kind", kind], max_k)
            by_distance = _read_sizes(source, n, max_k)
        source.unlink()
        out: dict[int, np.ndarray] = {}
        for k in range(1, max_k + 1):
            size = self._ball_sizes(by_distance[k - 1], kind, log2m)
            out[k] = size - previous if exact else np.clip(size - previous, 0.0, None)
            previous = size
        return out

    @staticmethod
    def _ball_sizes(states: list[str], kind: str, log2m: int) -> np.ndarray:
        if kind == "exact":  # the balls' node counts
            return np.array([int(s) for s in states], dtype=np.int64)
        m = 1 << log2m
        regs = np.frombuffer(bytes.fromhex("".join(states)), dtype=np.uint8).reshape(len(states), m).T
        return hll_estimate(np.ascontiguousarray(regs)) if len(states) else np.zeros(0)
