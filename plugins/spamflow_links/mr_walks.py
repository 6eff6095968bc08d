"""Every walk of a snapshot (PageRank, TrustRank, CheiRank, truncated PageRank, the supporter
balls) as ONE mrjob job of ``--steps`` steps, so that a cluster charges its start-up cost
(10-60 s per Spark application) once per snapshot, not once per walk.

The walks do not depend on each other, so they share the steps: every record starts with the
name of its walk (``name<TAB>record``), the map of a step hands the record to its walk's map
(:func:`spamflow_links.mr_rank_walk.scatter`, :func:`spamflow_links.mr_ball_step.spread`)
and puts the name in front of every key it emits (``name:key``), so a walk's messages meet
only its own records; the reduce hands them back.  Each walk is named by an option:

- ``--rank NAME:ALPHA:TOL:HISTORY``: a rank walk (its records as :mod:`~spamflow_links.mr_rank_walk`
  documents; it freezes on its iterate once converged or at its ``stop``, so a job may have more
  steps than the walk needs);
- ``--balls NAME:KIND:DISTANCES``: supporter balls (:mod:`~spamflow_links.mr_ball_step`), grown
  DISTANCES times and then left as they are.

Imports nothing of spamflow.
"""

from mrjob.job import MRJob
from mrjob.protocol import RawValueProtocol
from mrjob.step import MRStep

from spamflow_links.mr_ball_step import spread, unite
from spamflow_links.mr_rank_walk import MASS, gather, gather_mass, scatter


def rank_option(name: str, alpha: float, tol: float, history: int) -> str:
    """The ``--rank`` value of a walk."""
    return f"{name}:{alpha!r}:{tol!r}:{history}"


def balls_option(name: str, kind: str, distances: int) -> str:
    """The ``--balls`` value of supporter balls."""
    return f"{name}:{kind}:{distances}"


class MRWalks(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    OUTPUT_PROTOCOL = RawValueProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--rank", action="append", default=[], help="NAME:ALPHA:TOL:HISTORY of a rank walk")
        self.add_passthru_arg("--balls", action="append", default=[], help="NAME:KIND:DISTANCES of supporter balls")
        self.add_passthru_arg("--steps", type=int, required=True, help="MapReduce steps of this job")

    def load_args(self, args):
        super().load_args(args)
        self.ranks, self.balls = {}, {}
        for value in self.options.rank:
            name, alpha, tol, history = value.split(":")
            self.ranks[name] = (float(alpha), float(tol), int(history))
        for value in self.options.balls:
            name, kind, distances = value.split(":")
            self.balls[name] = (kind, int(distances))
        if set(self.ranks) & set(self.balls):
            raise ValueError(f"a walk name is both a rank walk and balls: {sorted(set(self.ranks) & set(self.balls))}")

    def steps(self):
        return [MRStep(mapper=self.mapper, reducer=self.reducer) for _ in range(self.options.steps)]

    def mapper(self, _, line):
        name, _, record = line.partition("\t")
        if name in self.ranks:
            emitted = scatter(record)
        elif name in self.balls:
            emitted = spread(record, self.balls[name][1])
        else:
            raise ValueError(f"a record of no walk of this job (walk {name!r}): {line[:80]!r}")
        for key, value in emitted:
            yield f"{name}:{key}", value

    def reducer(self, key, values):
        name, _, node = key.partition(":")
        if name in self.balls:
            kind, distances = self.balls[name]
            line = unite(node, values, kind, distances)
        elif node == MASS:
            alpha, tol, _ = self.ranks[name]
            line = gather_mass(values, alpha, tol)
        else:
            alpha, _, history = self.ranks[name]
            line = gather(node, values, alpha, history)
        yield None, f"{name}\t{line}"


if __name__ == "__main__":
    MRWalks.run()
