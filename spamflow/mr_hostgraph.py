"""A host graph's text files (cc-webgraph or plain, :mod:`spamflow.hostgraph_files`) read into
numbered node records by ONE mrjob job of eight steps, for graphs no one process can hold
(a cc-webgraph release: ~236M hosts, ~9.5B edges).  No step holds more than one node's
neighbours, or one numbering block's host names (:data:`BLOCK_LINES`).

Input lines: ``v<TAB>location`` (the vertex file) and ``e<TAB>location`` (the edge file); a
map task opens its file with ``spamflow.storage.open_input`` and parses it with the same
functions as the in-memory reader (``vertex_lines``, ``edge_blocks``: the same line rules,
the same bad lines).  Steps (keys ``i<id>``: a vertex id, ``h<host>``: a host name):

1. map: vertex lines to ``i<id>``, edge lines to ``i<from>``; reduce: the vertex's first line
   kept (later ones: ``vertex_duplicate``), an edge from an unknown id is bad, the others sent
   to ``i<to>`` with the source's host;
2. reduce at ``i<to>``: an edge to an unknown id is bad, a self-link counted, the others sent
   to both hosts (``o``: out, ``i``: in);
3. reduce at ``h<host>``: distinct neighbours (repeats counted), the host's first vertex line
   (its place in the vertex file) sent to its numbering block ``b<line // BLOCK_LINES>``
   (zero-padded);
4. reduce at a block: how many hosts it has, to ``#``;
5. reduce at ``#``: each block's first node id (the hosts before it);
6. reduce at a block: node id = block start + rank of the host's line in the block, so nodes
   are numbered in vertex-file order, as the in-memory reader numbers them;
7. reduce at ``h<host>``: its id sent to its neighbours;
8. reduce at ``h<host>``: the output line ``id<TAB>host<TAB>domain<TAB>out ids<TAB>in ids``
   (ids ascending, joined by ``,``).

Keys ``!bad`` (counts and the examples of the first lines, with file and line) and ``!count``
go through every step and are output as ``!bad<TAB>json`` and ``!count<TAB>json``.  Imports
only pure functions of spamflow (parsing, registered domains).
"""

import json
from typing import Any

from mrjob.job import MRJob
from mrjob.protocol import RawValueProtocol
from mrjob.step import MRStep

BLOCK_LINES = 1 << 18
"""Vertex lines per numbering block: a block's reducer sorts at most this many host names."""

BAD, COUNT = "!bad", "!count"


def parse_file(task: str, fmt: str, reversed_names: bool):
    """Step 1's map: one input line (``v`` or ``e`` and a file) to keyed records."""
    from spamflow.hostgraph_files import BadLines, edge_blocks, vertex_lines

    kind, _, location = task.rstrip("\n").partition("\t")
    bad = BadLines()
    if kind == "v":
        for number, vid, host in vertex_lines(location, fmt, reversed_names, bad):
            yield f"i{vid}", ["v", number, host]
    elif kind == "e":
        for pairs, numbers in edge_blocks(location, fmt, bad):
            for (source, target), number in zip(pairs.tolist(), numbers.tolist()):
                yield f"i{source}", ["o", target, number]
    else:
        raise ValueError(f"not a host graph input line (v or e, then a file): {task[:80]!r}")
    yield BAD, [bad.counts, bad.examples]


def merged(key: str, values):
    """The one record of a ``!bad`` or ``!count`` key."""
    if key == COUNT:
        total: dict[str, int] = {}
        for counts in values:
            for name, n in counts.items():
                total[name] = total.get(name, 0) + n
        return total
    from spamflow.hostgraph_files import BadLines

    bad = BadLines()
    for counts, examples in values:
        bad.merge(counts, examples)
    return [bad.counts, bad.examples]


def _bad(kind: str, location: str, line: int, text: str, why: str):
    from spamflow.hostgraph_files import BadLines

    bad = BadLines()
    bad.add(kind, location, line, text, why)
    return BAD, [bad.counts, bad.examples]


def join_sources(key: str, values, vertices: str, edges: str):
    """Step 1's reduce at a vertex id: its host, and its out-edges sent to their targets."""
    from spamflow.hostgraph_files import duplicate_vertex, unknown_vertex

    found: list[list] = []
    out: list[list] = []
    for value in values:
        (found if value[0] == "v" else out).append(value)
    vid = key[1:]
    if not found:
        for _, target, number in out:
            yield _bad("edge_unknown_vertex", edges, number, f"{vid}\t{target}", unknown_vertex(int(vid)))
        return
    found.sort(key=lambda v: v[1])
    _, line, host = found[0]
    for _, later, other in found[1:]:
        yield _bad("vertex_duplicate", vertices, later, f"{vid}\t{other}", duplicate_vertex(int(vid)))
    yield COUNT, {"vertex_lines": 1}
    yield key, ["v", host]
    yield f"h{host}", ["n", line]
    for _, target, number in out:
        yield f"i{target}", ["s", host, number, int(vid)]


def join_targets(key: str, values, edges: str):
    """Step 2's reduce at a vertex id: the edges into it, as host to host."""
    from spamflow.hostgraph_files import unknown_vertex

    host, into = None, []
    for value in values:
        if value[0] == "v":
            host = value[1]
        else:
            into.append(value)
    self_links = 0
    for _, source, number, source_id in into:
        if host is None:
            yield _bad("edge_unknown_vertex", edges, number, f"{source_id}\t{key[1:]}", unknown_vertex(int(key[1:])))
        elif source == host:
            self_links += 1
        else:
            yield f"h{source}", ["o", host]
            yield f"h{host}", ["i", source]
    known = len(into) if host is not None else 0
    if known:
        yield COUNT, {"edge_lines": known, "self_links": self_links}


def host_neighbours(key: str, values, block_of):
    """Step 3's reduce at a host: its distinct neighbours, and its place (its first vertex
    line: ``n`` values) sent to its numbering block, ``block_of(place)``: a string, blocks
    in the order of their strings."""
    lines, out, into = [], [], set()
    for value in values:
        if value[0] == "n":
            lines.append(value[1])
        elif value[0] == "o":
            out.append(value[1])
        else:
            into.add(value[1])
    distinct = sorted(set(out))
    yield COUNT, {"vertices_same_host": len(lines) - 1, "repeated_edges": len(out) - len(distinct),
                  "edges": len(distinct)}
    first = min(lines)
    yield f"b{block_of(first)}", [first, key[1:]]
    yield key, ["r", distinct, sorted(into)]


def block_size(key: str, values):
    """Step 4's reduce at a block: its size to ``#``, its hosts kept."""
    members = 0
    for value in values:
        members += 1
        yield key, value
    yield "#", [key[1:], members]


def block_starts(values):
    """Step 5's reduce at ``#``: the first node id of every block (blocks in string order)."""
    start = 0
    for block, members in sorted(values):
        yield f"b{block}", ["@", start]
        start += members
    yield COUNT, {"nodes": start}


def number_block(values):
    """Step 6's reduce at a block: node ids in vertex-file order."""
    start, members = 0, []
    for value in values:
        if value[0] == "@":
            start = value[1]
        else:
            members.append(value)
    for rank, (_, host) in enumerate(sorted(members)):
        yield f"h{host}", ["#", start + rank]


def tell_neighbours(key: str, values):
    """Step 7's reduce at a host: its id to the hosts it links to and that link to it."""
    node, out, into = None, [], []
    for value in values:
        if value[0] == "#":
            node = value[1]
        else:
            out, into = value[1], value[2]
    yield key, ["#", node]
    for target in out:
        yield f"h{target}", ["I", node]  # this node is one of the target's in-neighbours
    for source in into:
        yield f"h{source}", ["O", node]


def node_line(key: str, values) -> str:
    """Step 8's reduce at a host: ``id host domain out-ids in-ids``."""
    from spamflow.domains import registered_domain

    node, out, into = None, [], []
    for value in values:
        if value[0] == "#":
            node = value[1]
        elif value[0] == "O":
            out.append(value[1])
        else:
            into.append(value[1])
    host = key[1:]
    return "\t".join((str(node), host, registered_domain(host), ",".join(map(str, sorted(out))),
                      ",".join(map(str, sorted(into)))))


class MRHostGraphBuild(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    OUTPUT_PROTOCOL = RawValueProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--format", choices=["cc-webgraph", "plain"], default="cc-webgraph")
        self.add_passthru_arg("--reversed-names", choices=["yes", "no"], default="yes")
        self.add_passthru_arg("--vertices", required=True, help="the vertex file (named in bad lines)")
        self.add_passthru_arg("--edges", required=True, help="the edge file (named in bad lines)")
        self.add_passthru_arg("--block-lines", type=int, default=BLOCK_LINES)

    def steps(self):
        return [MRStep(mapper=self.parse if step == 1 else None, reducer=self._reducer_of(step),
                       reducer_init=self.start_counts, reducer_final=self.counted) for step in range(1, 9)]

    def _reducer_of(self, step: int):
        def reducer(key, values):
            return self.reduce(step, key, values)
        return reducer

    def block_of(self, place: Any) -> str:
        """Numbering blocks of ``--block-lines`` vertex lines (``place``: a host's first line),
        zero-padded so that their strings sort as their numbers."""
        return f"{place // self.options.block_lines:012d}"

    def parse(self, _, task):
        yield from parse_file(task, self.options.format, self.options.reversed_names == "yes")

    def start_counts(self):
        self.counts: dict[str, int] = {}

    def counted(self):
        """The counts this reduce task made, one record (not one per node)."""
        if self.counts:
            yield COUNT, self.counts

    def reduce(self, step: int, key: str, values):
        if key.startswith("!"):
            if step == 8:
                yield None, f"{key}\t{json.dumps(merged(key, values), sort_keys=True)}"
            else:
                yield key, merged(key, values)
            return
        records = self._step(step, key, values)
        if step == 8:
            yield None, records
            return
        for out_key, value in records:
            if out_key == COUNT:
                for name, n in value.items():
                    self.counts[name] = self.counts.get(name, 0) + n
            else:
                yield out_key, value

    def _step(self, step: int, key: str, values):
        o = self.options
        if step == 1:
            return join_sources(key, values, o.vertices, o.edges)
        if step == 2 and key.startswith("i"):
            return join_targets(key, values, o.edges)
        if step == 3:
            return host_neighbours(key, values, self.block_of)
        if step == 4 and key.startswith("b"):
            return block_size(key, values)
        if step == 5 and key == "#":
            return block_starts(values)
        if step == 6 and key.startswith("b"):
            return number_block(values)
        if step == 7:
            return tell_neighbours(key, values)
        if step == 8:
            return node_line(key, values)
        return ((key, v) for v in values)  # waits for a later step


if __name__ == "__main__":
    MRHostGraphBuild.run()
