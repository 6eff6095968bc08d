"""What every node of a graph kept out of memory learns from its neighbours in one mrjob
step: the sums behind the degree features (``static_features.degree_columns``), the
teleport parts of the rank walks' records (u = S v), and a node value's mean and variance
over the in-neighbours (PageRank's: ``prsigma``).

Input lines ``id<TAB>value<TAB>out ids<TAB>in ids`` (the ``hostgraph`` stage's
``adjacency.txt`` with a value put in: 0/1 for TrustRank's seeds, or PageRank); a node sends
its in- and out-degree (and its value) to its out-neighbours and its in-degree to its
in-neighbours.  Output lines ``id`` and the tab-separated :data:`COLUMNS`.  Sums are
``math.fsum`` (exactly rounded, whatever order the shuffle delivers).  Imports nothing of
spamflow.
"""

import math

from mrjob.job import MRJob
from mrjob.protocol import RawValueProtocol

from spamflow_links.node_messages import node_and_messages

COLUMNS = ("indegree", "outdegree", "mutual", "in_of_out", "out_of_in", "neighbour_degrees",
           "inverse_outdegree_in", "inverse_indegree_out", "value_over_outdegree_in",
           "values_in", "value_sum_in", "value_squares_in")
"""Per node: its degrees, the links it returns, the in-degrees of its out-neighbours summed,
the out-degrees of its in-neighbours summed, both neighbours' degrees summed; sum over the
in-neighbours of 1/out-degree, over the out-neighbours of 1/in-degree, over the
in-neighbours of value/out-degree; how many in-neighbours have a value, its sum, the sum of
its squares."""


def ids(text: str) -> list[str]:
    return text.split(",") if text else []


def send(line: str):
    """The map: the node's own record, and what its neighbours learn from it."""
    node, value, out, into = line.rstrip("\n").split("\t")
    out_ids, in_ids = ids(out), ids(into)
    x = float(value)
    yield node, ["r", out_ids, in_ids]
    for target in out_ids:  # this node is one of the target's in-neighbours
        yield target, ("i", len(in_ids), len(out_ids), x)
    for source in in_ids:  # this node is one of the source's out-neighbours
        yield source, ("o", len(in_ids), len(out_ids))


def stats(node: str, values) -> str:
    """The reduce: the node's line of :data:`COLUMNS`."""
    record, messages = node_and_messages(node, (v if v[0] == "r" else tuple(v) for v in values))
    _, out_ids, in_ids = record
    from_in = [m for m in messages if m[0] == "i"]
    from_out = [m for m in messages if m[0] == "o"]
    mutual = len(set(out_ids) & set(in_ids))
    values = [m[3] for m in from_in if math.isfinite(m[3])]
    row = (len(in_ids), len(out_ids), mutual, math.fsum(m[1] for m in from_out), math.fsum(m[2] for m in from_in),
           math.fsum(m[1] + m[2] for m in (*from_in, *from_out)), math.fsum(1.0 / m[2] for m in from_in),
           math.fsum(1.0 / m[1] for m in from_out), math.fsum(m[3] / m[2] for m in from_in),
           len(values), math.fsum(values), math.fsum(v * v for v in values))
    return "\t".join([node, *(repr(float(x)) for x in row)])


class MRNodeStats(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    OUTPUT_PROTOCOL = RawValueProtocol

    def mapper(self, _, line):
        yield from send(line)

    def reducer(self, node, values):
        yield None, stats(node, values)


if __name__ == "__main__":
    MRNodeStats.run()
