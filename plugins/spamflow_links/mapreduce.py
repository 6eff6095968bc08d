"""The links stage's MapReduce engine: the drivers of the edges job, of the rank walks and of
the supporter balls. Each driver writes the job's input under a work folder, starts
the job through ``spamflow.mr.run_job`` and reads the result back into the same NumPy
arrays the in-memory code makes (same definitions: :mod:`spamflow_links.ranks`,
:mod:`spamflow_links.neighbourhood`), so the features agree within float rounding.

Every walk of a snapshot (the rank walks, truncated PageRank, the supporter balls) runs in ONE
multi-step job (one Spark application, :mod:`spamflow_links.mr_walks`), not one job per walk
or per iteration: a cluster charges its start-up cost (10-60 s) per application.  The driver keeps
O(nodes) vectors (the rank vector, the ball sizes), and finishes from the job's last records
what the job could not see yet (the last two iterations' L1 changes); the O(edges) work is
in the jobs.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from spamflow import storage
from spamflow.errors import SpamflowError
from spamflow.mr import run_job
from spamflow.mr.driver import concrete_runner, package_zip
from spamflow_links.file_graph import FileGraph, FileWalk
from spamflow_links.hostgraph import HostGraph, graphs_from_records
from spamflow_links.mr_host_edges import MRHostEdges
from spamflow_links.mr_rank_walk import MASS, mass_record, node_record, parse_mass
from spamflow_links.mr_walks import MRWalks, balls_option, rank_option
from spamflow_links.neighbourhood import hll_estimate, hll_init
from spamflow_links.ranks import check_weights
from spamflow_links.static_features import Walked


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


PAGERANK, TRUSTRANK, CHEIRANK, TRUNCATED, SUPPORTERS = "p", "t", "c", "x", "s"
"""The walks' names in a job's records (:mod:`spamflow_links.mr_walks`): short, as every
record and every message key carries one."""


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
    frozen: list[np.ndarray] | None
    """Once the nodes froze: the kept iterate, then the earlier ones the nodes kept (newest first)."""

    def full(self, teleport: np.ndarray) -> np.ndarray:
        """p_t = y_t + J_t v."""
        return self.y + self.jump * teleport


class WalkLines:
    """A rank walk's state, read from a job's output a record (its tab-separated fields) at a time."""

    def __init__(self, n: int) -> None:
        self.mass: tuple | None = None
        self.y = np.zeros(n)
        self.histories: list[list[float]] = [[] for _ in range(n)]
        self.frozen: list[list[float]] = [[] for _ in range(n)]
        self.kinds: set[str] = set()

    def add(self, fields: list[str]) -> None:
        if fields[0] == MASS:
            self.mass = parse_mass(fields[2:])
            return
        node, kind = int(fields[0]), fields[1]
        self.kinds.add(kind)
        if kind == "F":
            self.frozen[node] = [float(x) for x in fields[2].split(",")]
        else:
            self.y[node] = float(fields[2])
            self.histories[node] = [float(x) for x in fields[6].split(",")] if fields[6] else []

    def state(self, where: Path | str) -> WalkState:
        if self.mass is None or len(self.kinds) > 1:
            raise SpamflowError(f"{where}: not the output of a rank walk (mass record: {self.mass is not None}, "
                                f"node kinds: {sorted(self.kinds)})")
        jump, t, _, _, stop, errors, _ = self.mass
        frozen = None
        if self.kinds == {"F"}:
            depth = min(len(values) for values in self.frozen)
            frozen = [np.array([values[k] for values in self.frozen]) for k in range(depth)]
        depth = min((len(h) for h in self.histories), default=0)
        history = [np.array([h[k] for h in self.histories]) for k in range(depth)]
        return WalkState(t, jump, stop, errors, self.y, history, frozen)


@dataclass
class RankWalk:
    """A rank walk of a job (:func:`spamflow_links.mr_walks.rank_option`) and what the driver
    learnt of it from the jobs' last records."""

    walk: MatrixWalk | FileWalk
    alpha: float
    tol: float
    teleport: np.ndarray
    """v (sums to 1): where the walk starts and jumps to."""
    last: int
    """The iteration it stops at if not converged before (max_iter; truncated PageRank: its T)."""
    history: int = 2
    changes: list[float] = field(default_factory=list)
    """The L1 change of iteration 1, 2, ... as far as known."""
    kept: list[np.ndarray] | None = None
    """Once finished: the iterate it stopped at, then the earlier ones it kept, newest first."""
    iterations: int = 0

    def write(self, fh, name: str) -> None:
        """The walk's input: every node's record with y = v (J = 0), and the mass record."""
        walk, v = self.walk, self.teleport
        u = walk.u(v)  # S v: what the teleport part of p sends each node
        dangling_teleport = math.fsum(v[walk.out_weight <= 0].tolist())
        for i, edges in walk.rows():
            fh.write(f"{name}\t{node_record(i, float(v[i]), float(v[i]), float(u[i]), edges)}\n")
        fh.write(f"{name}\t{mass_record(0.0, 0, dangling_teleport, len(v), self.last)}\n")

    def next_steps(self, jobs: int, first: int, done: int) -> int:
        """Steps the walk wants of the next job (:func:`next_job_steps`), at most to ``last``."""
        return min(next_job_steps(self.alpha, self.tol, self.changes, jobs, first), self.last - done)

    def finish(self, walked: WalkState) -> bool:
        """Learn from the walk's last records; True once it has stopped (``kept`` is then set):
        the nodes froze, or what the job could not see yet (the last two iterations' L1
        changes) says it converged, or it reached its stop."""
        if walked.frozen is not None:
            self.kept, self.iterations = walked.frozen, walked.stop
            return True
        t = walked.t
        newest_first = [walked.full(self.teleport), *walked.history]  # p_t, p_t-1, ...
        stop = walked.stop
        before = [_l1(newest_first[1], newest_first[2])] if len(newest_first) >= 3 else []  # iteration t-1's
        if before and before[0] < self.tol:
            stop = min(stop, t - 1)
        change = [_l1(newest_first[0], newest_first[1])] if len(newest_first) >= 2 else []
        self.changes = [*walked.errors, *before, *change]
        if change and change[0] < self.tol:
            stop = min(stop, t)
        if stop > t:
            return False
        self.kept, self.iterations = newest_first[t - stop:], stop
        return True


@dataclass
class Balls:
    """Supporter balls of a job (:func:`spamflow_links.mr_walks.balls_option`): one record per node."""

    n: int
    targets: Callable[[], Iterator[tuple[int, str]]]
    """(node, its out-neighbours joined by ``,``) of every node."""
    exact: bool
    distances: int
    log2m: int
    seed: int

    @property
    def kind(self) -> str:
        return "exact" if self.exact else "hll"

    def write(self, fh, name: str) -> list[str]:
        """The balls' records (ball_0(x) = {x}); the states written."""
        if self.exact:
            states = [str(i) for i in range(self.n)]
        else:
            regs = hll_init(self.n, self.log2m, self.seed)
            states = [regs[:, i].tobytes().hex() for i in range(self.n)]
        fh.writelines(f"{name}\t{i}\t{states[i]}\t{out}\n" for i, out in self.targets())
        return states

    def sizes(self, by_distance: list[list[str]], written: list[str]) -> dict[int, np.ndarray]:
        """The supporters at distance 1 .. ``distances`` from the recorded ball sizes: the
        ball's growth (``exact``: node counts; ``hll``: estimates, never below 0)."""
        previous = self._ball_sizes(["1"] * self.n if self.exact else written)  # ball_0(x) = {x}
        out: dict[int, np.ndarray] = {}
        for k in range(1, self.distances + 1):
            size = self._ball_sizes(by_distance[k - 1])
            out[k] = size - previous if self.exact else np.clip(size - previous, 0.0, None)
            previous = size
        return out

    def _ball_sizes(self, states: list[str]) -> np.ndarray:
        if self.exact:  # the balls' node counts
            return np.array([int(s) for s in states], dtype=np.int64)
        m = 1 << self.log2m
        regs = np.frombuffer(bytes.fromhex("".join(states)), dtype=np.uint8).reshape(len(states), m).T
        return hll_estimate(np.ascontiguousarray(regs)) if len(states) else np.zeros(0)


class BallLines:
    """The balls' recorded sizes by distance and node, read a record at a time."""

    def __init__(self, n: int, distances: int) -> None:
        self.by_distance = [[""] * n for _ in range(distances)]

    def add(self, fields: list[str]) -> None:
        node, _, _, recorded = fields
        for k, size in enumerate(recorded.split(",")):
            self.by_distance[k][int(node)] = size


class MapReduceRanks:
    """PageRank-type walks and supporter balls as multi-step jobs on ``runner``: every walk of
    a snapshot in one job (one Spark application, :mod:`spamflow_links.mr_walks`), and a
    second or third for the rank walks not converged in it (:func:`next_job_steps`); the same
    methods as :class:`spamflow_links.static_features.MemoryRanks`."""

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

    def _walk_together(self, ranks: dict[str, RankWalk], balls: Balls | None) -> dict[int, np.ndarray]:
        """Runs the rank walks ``ranks`` (by name) and the supporter ``balls`` in one job (each
        walk's ``kept`` is then set), and the rank walks not finished in it in a next one, at
        most three jobs; the balls' supporters by distance ({} without balls)."""
        n = next(iter(ranks.values())).walk.n if ranks else balls.n if balls is not None else 0
        source = self._path()
        with open(source, "w", encoding="utf-8") as fh:
            for name, walk in ranks.items():
                walk.write(fh, name)
            written = balls.write(fh, SUPPORTERS) if balls is not None else []
        first = FIRST_STEPS_ON_A_LAPTOP if concrete_runner(self.runner) in ("inline", "local") else FIRST_STEPS
        live, done, jobs, supporters = dict(ranks), 0, 0, {}
        while True:
            wanted = [walk.next_steps(jobs, first, done) for walk in live.values()]
            args = [arg for name, walk in live.items() for arg in ("--rank", rank_option(name, walk.alpha, walk.tol,
                                                                                         walk.history))]
            if balls is not None and done == 0:
                wanted.append(balls.distances)
                args += ["--balls", balls_option(SUPPORTERS, balls.kind, balls.distances)]
            steps = max(wanted)
            source = self._run(MRWalks, source, args, steps)
            jobs += 1
            readers = {name: WalkLines(n) for name in live}
            ball_lines = BallLines(n, balls.distances) if balls is not None and done == 0 else None
            with open(source, encoding="utf-8") as fh:
                for line in fh:
                    name, _, record = line.rstrip("\n").partition("\t")
                    reader = ball_lines if name == SUPPORTERS else readers.get(name)
                    if reader is None:
                        raise SpamflowError(f"{source}: a record of no walk of the job: {line[:80]!r}")
                    reader.add(record.split("\t"))
            if balls is not None and ball_lines is not None:
                supporters = balls.sizes(ball_lines.by_distance, written)
            live = {name: walk for name, walk in live.items() if not walk.finish(readers[name].state(source))}
            done += steps
            if not live:
                break
            source = self._keep(source, set(live))
        source.unlink()
        return supporters

    def _keep(self, source: Path, names: set[str]) -> Path:
        """The next job's input: the records of the walks ``names`` in ``source`` (then removed)."""
        kept = self._path()
        with open(source, encoding="utf-8") as fh, open(kept, "w", encoding="utf-8") as out:
            out.writelines(line for line in fh if line.partition("\t")[0] in names)
        source.unlink()
        return kept

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

    def _rank_walk(self, walk: MatrixWalk | FileWalk, alpha: float, tol: float,
                   teleport: np.ndarray | None = None) -> RankWalk:
        """A PageRank-type walk to convergence (or ``max_iter``): uniform v, or ``teleport`` normalised."""
        v = np.full(walk.n, 1.0 / walk.n) if teleport is None else np.asarray(teleport, np.float64) / float(
            np.sum(teleport))
        return RankWalk(walk, alpha, tol, v, self.max_iter)

    @staticmethod
    def _truncated_walk(walk: MatrixWalk | FileWalk, max_t: int) -> RankWalk:
        """x_{t+1} = S x_t + dangling(x_t) / N from x_0 = 1/N (alpha 1, never converged): its
        nodes keep every x up to x_max_t."""
        return RankWalk(walk, 1.0, 0.0, np.full(walk.n, 1.0 / walk.n), max_t, history=max_t)

    @staticmethod
    def _truncated_series(kept: list[np.ndarray], alpha: float, pr: np.ndarray) -> dict[int, np.ndarray]:
        """``ranks.truncated_pagerank`` from x_max_t .. x_0 (newest first) and PageRank ``pr``."""
        head = np.zeros(len(pr))
        out: dict[int, np.ndarray] = {}
        for t, x in enumerate(kept[::-1]):
            head += (1.0 - alpha) * alpha ** t * x
            if t >= 1:
                out[t] = np.clip(pr - head, 0.0, None)
        return out

    @staticmethod
    def _balls(binary: sp.spmatrix | FileGraph, max_k: int, log2m: int, seed: int, exact: bool) -> Balls:
        if isinstance(binary, FileGraph):
            return Balls(binary.n, binary.targets, exact, max_k, log2m, seed)
        a = sp.csr_matrix(binary, dtype=np.float64)
        a.sort_indices()
        return Balls(a.shape[0], functools.partial(_targets_text, a), exact, max_k, log2m, seed)

    def walks(self, weights: sp.spmatrix | FileGraph, binary: sp.spmatrix | FileGraph, *, alpha: float, tol: float,
              trust_seeds: np.ndarray | None, truncated_steps: int, distances: int, log2m: int, seed: int,
              exact: bool) -> Walked:
        """Every walk of a snapshot (:class:`~spamflow_links.static_features.Walked`) in one job,
        plus one or two for the rank walks not converged in it."""
        forward = self._walk(weights, False)
        n = forward.n
        if n == 0:
            return Walked(np.zeros(0), None if trust_seeds is None else np.zeros(0),
                          {t: np.zeros(0) for t in range(1, truncated_steps + 1)},
                          {k: np.zeros(0, dtype=np.int64 if exact else np.float64) for k in range(1, distances + 1)},
                          np.zeros(0))
        ranks = {PAGERANK: self._rank_walk(forward, alpha, tol),
                 CHEIRANK: self._rank_walk(self._walk(weights, True), alpha, tol)}
        if trust_seeds is not None:
            ranks[TRUSTRANK] = self._rank_walk(forward, alpha, tol, trust_seeds)
        if truncated_steps >= 1:
            ranks[TRUNCATED] = self._truncated_walk(forward, truncated_steps)
        balls = self._balls(binary, distances, log2m, seed, exact) if distances >= 1 else None
        supporters = self._walk_together(ranks, balls)
        pr = self._ranks(ranks[PAGERANK])[0]
        truncated = self._truncated_series(ranks[TRUNCATED].kept or [], alpha, pr) if truncated_steps >= 1 else {}
        return Walked(pr, self._ranks(ranks[TRUSTRANK])[0] if trust_seeds is not None else None, truncated,
                      supporters, self._ranks(ranks[CHEIRANK])[0])

    @staticmethod
    def _ranks(walk: RankWalk) -> tuple[np.ndarray, int]:
        """(the finished walk's iterate, normalised, its iterations)."""
        assert walk.kept is not None, "the walk has not finished"
        p = walk.kept[0]
        return p / p.sum(), walk.iterations

    def power_iteration(self, weights: sp.spmatrix, alpha: float, teleport: np.ndarray | None = None,
                        tol: float = 1e-10, reverse: bool = False) -> tuple[np.ndarray, int]:
        """``ranks.power_iteration`` on the walk along (or against) the links of ``weights``: the
        same iterate (within rounding) at the same iteration, in at most three jobs
        (:func:`next_job_steps`)."""
        walk = self._walk(weights, reverse)
        if walk.n == 0:
            return np.zeros(0), 0
        ranked = self._rank_walk(walk, alpha, tol, teleport)
        self._walk_together({PAGERANK: ranked}, None)
        return self._ranks(ranked)

    def pagerank(self, weights: sp.spmatrix, alpha: float, tol: float, teleport: np.ndarray | None = None,
                 reverse: bool = False) -> np.ndarray:
        return self.power_iteration(weights, alpha, teleport, tol, reverse)[0]

    def truncated_pagerank(self, weights: sp.spmatrix, max_t: int, alpha: float,
                           pr: np.ndarray) -> dict[int, np.ndarray]:
        """``ranks.truncated_pagerank``: x_{t+1} = S x_t + dangling(x_t) / N, x_1 .. x_max_t
        by one job of max_t steps whose nodes keep every x."""
        walk = self._walk(weights, False)
        if walk.n == 0:
            return {t: np.zeros(0) for t in range(1, max_t + 1)}
        if max_t < 1:
            return {}
        truncated = self._truncated_walk(walk, max_t)
        self._walk_together({TRUNCATED: truncated}, None)
        return self._truncated_series(truncated.kept or [], alpha, pr)

    def supporters(self, binary: sp.spmatrix | FileGraph, max_k: int, log2m: int, seed: int,
                   exact: bool) -> dict[int, np.ndarray]:
        """``supporters_exact`` (``exact``) or ``supporters_hll``: one job of ``max_k`` steps
        whose nodes record their ball's size (count or registers) at every distance."""
        balls = self._balls(binary, max_k, log2m, seed, exact)
        if balls.n == 0:
            return {k: np.zeros(0, dtype=np.int64 if exact else np.float64) for k in range(1, max_k + 1)}
        if max_k < 1:
            return {}
        return self._walk_together({}, balls)
