"""One power-iteration step of PageRank, TrustRank, CheiRank or truncated PageRank as one
mrjob job (the classic PageRank-in-MapReduce: each node record carries its rank and its
out-edges, so one map and one reduce make a step).

Input and output lines are node records, ``node<TAB>rank<TAB>teleport<TAB>edges`` with
``edges`` = ``target:weight`` pairs joined by ``,`` (empty for a dangling node) and floats
written with ``repr`` (they read back exactly). The output of a step is the input of the
next. A step computes, for every node j,

    new_j = alpha * sum_{i -> j} rank_i * w_ij / out_i  +  jump * teleport_j

where ``jump`` (``--jump``) is the same for every node and given by the driver, which knows
the dangling mass of the ranks it wrote: PageRank's ``alpha * dangling + 1 - alpha``, or
truncated PageRank's plain ``dangling`` with ``alpha = 1``. No counters, no broadcast: the
driver reads each step's output anyway to measure its L1 change.

The sum over in-links is ``math.fsum`` (exactly rounded), so every runner gives the same bits
whatever order the shuffle delivers the contributions in. Imports nothing of spamflow.
"""

import math

from mrjob.job import MRJob
from mrjob.protocol import RawValueProtocol

from spamflow_links.node_messages import node_and_messages


def parse_edges(text: str) -> list[tuple[str, float]]:
    """``a:1.0,b:2.0`` as [(a, 1.0), (b, 2.0)]; [] for ''."""
    if not text:
        return []
    out = []
    for pair in text.split(","):
        target, weight = pair.split(":")
        out.append((target, float(weight)))
    return out


def node_record(node: str | int, rank: float, teleport: float, edges: str) -> str:
    """One node's line (the inverse of :func:`parse_node`)."""
    return f"{node}\t{rank!r}\t{teleport!r}\t{edges}"


def parse_node(line: str) -> tuple[str, float, float, str]:
    """(node, rank, teleport, edges text) of a node line."""
    node, rank, teleport, edges = line.rstrip("\n").split("\t")
    return node, float(rank), float(teleport), edges


def scatter(line: str):
    """The map of a step: the node's structure to itself, rank / out-weight * w to each target."""
    node, rank, teleport, edges = parse_node(line)
    yield node, ["s", teleport, edges]
    pairs = parse_edges(edges)
    if pairs:
        share = rank * (1.0 / math.fsum(w for _, w in pairs))
        for target, weight in pairs:
            yield target, weight * share


def gather(node: str, values, alpha: float, jump: float) -> str:
    """The reduce of a step: the node's new line."""
    (_, teleport, edges), arriving = node_and_messages(node, values)
    return node_record(node, alpha * math.fsum(arriving) + jump * teleport, teleport, edges)


class MRRankStep(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    OUTPUT_PROTOCOL = RawValueProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--alpha", type=float, required=True, help="weight of the links (damping factor)")
        self.add_passthru_arg("--jump", type=float, required=True,
                              help="mass every node gets in proportion to its teleport value")

    def mapper(self, _, line):
        yield from scatter(line)

    def reducer(self, node, values):
        yield None, gather(node, values, self.options.alpha, self.options.jump)


if __name__ == "__main__":
    MRRankStep.run()
