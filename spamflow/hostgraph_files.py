"""Reading a host graph published as text: Common Crawl's cc-webgraph host-level release
(gzip text; vertices ``id<TAB>reversed.host.name``, edges ``from<TAB>to``, ids 0..n-1) or a
plain edge list (``from to`` on whitespace) with a vertex file (``id host``).

Every line that is not two fields of the right kind is counted with its file and line number
(the first :data:`KEPT_EXAMPLES` of each kind kept as examples), never a crash and never lost
silently; a gzip file cut short is refused with a message, since the lines after the cut are
missing without a trace."""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from spamflow.errors import BadInputError, plain_reason
from spamflow.storage import open_input

KEPT_EXAMPLES = 20
"""Bad lines of each kind kept with file, line and text (all are counted)."""

FORMATS = ("cc-webgraph", "plain")


def unreverse(name: str) -> str:
    """``com.example.www`` -> ``www.example.com`` (cc-webgraph writes host names reversed so
    that hosts of a domain sort together).

    >>> unreverse("uk.co.bbc.news")
    'news.bbc.co.uk'
    """
    return ".".join(reversed(name.split(".")))


@dataclass
class BadLines:
    """Counts of bad lines by kind, and a few examples of each with file and line."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: list[dict[str, Any]] = field(default_factory=list)

    def add(self, kind: str, location: str, line: int, text: str, why: str) -> None:
        n = self.counts.get(kind, 0)
        self.counts[kind] = n + 1
        if n < KEPT_EXAMPLES:
            self.examples.append({"kind": kind, "file": location, "line": line, "reason": why,
                                  "text": plain_reason(text, 120)})

    def merge(self, counts: dict[str, int], examples: list[dict[str, Any]]) -> None:
        """Add another part's counts and examples, keeping of each kind the examples of the
        first lines (file, line): the ones a single reader would have kept, in any order of parts."""
        for kind, n in counts.items():
            self.counts[kind] = self.counts.get(kind, 0) + n
        kept: dict[str, list[dict[str, Any]]] = {}
        for example in sorted([*self.examples, *examples], key=lambda e: (e["kind"], e["file"], e["line"])):
            of_kind = kept.setdefault(example["kind"], [])
            if len(of_kind) < KEPT_EXAMPLES:
                of_kind.append(example)
        self.examples = [e for kind in sorted(kept) for e in kept[kind]]


def _is_gzip(head: bytes) -> bool:
    return head[:2] == b"\x1f\x8b"


def line_blocks(location: str, size: int = 1 << 22) -> Iterator[tuple[int, bytes]]:
    """(number of the block's first line, from 1; the block: whole lines joined by newlines,
    without the last one's end) of a file, gzip or not (by its first bytes, not its name),
    local or remote (``spamflow.storage.open_input``), about ``size`` bytes at a time.  A gzip
    stream that ends before its trailer is a :class:`BadInputError` naming the file and the
    last whole line read."""
    with open_input(location) as raw:
        buffered: Any = raw if hasattr(raw, "peek") else io.BufferedReader(cast(Any, raw))
        stream: Any = gzip.GzipFile(fileobj=buffered, mode="rb") if _is_gzip(buffered.peek(2)) else buffered
        number, rest = 1, b""
        try:
            while chunk := stream.read(size):
                data = rest + chunk
                cut = data.rfind(b"\n")
                if cut < 0:
                    rest = data
                    continue
                block, rest = data[:cut], data[cut + 1:]
                yield number, block
                number += block.count(b"\n") + 1
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise BadInputError(f"{location}: the gzip stream ends or breaks after line {number - 1} "
                                f"({type(exc).__name__}: {exc}); the file is incomplete (a download cut short?): "
                                "fetch it again") from None
        if rest:
            yield number, rest


def text_lines(location: str) -> Iterator[tuple[int, str]]:
    """(line number from 1, the line decoded as UTF-8, bad bytes replaced, without its end)."""
    for first, block in line_blocks(location):
        for number, line in enumerate(block.split(b"\n"), first):
            yield number, line.decode("utf-8", "replace").rstrip("\r")


@dataclass
class TextGraph:
    """The graph as read: host names by vertex position, edges as positions, what was bad."""

    hosts: list[str]
    sources: np.ndarray
    targets: np.ndarray
    bad: BadLines
    counts: dict[str, int]


def _two_fields(line: str, fmt: str) -> list[str]:
    return line.split("\t") if fmt == "cc-webgraph" else line.split()


def vertex_lines(location: str, fmt: str, reversed_names: bool, bad: BadLines) -> Iterator[tuple[int, int, str]]:
    """(line number, vertex id, host name: un-reversed when ``reversed_names``) of every well
    formed vertex line; the others counted in ``bad``.  The one parser of vertex files, in this
    process or in the MapReduce build's map tasks (``spamflow.mr_hostgraph``)."""
    for number, line in text_lines(location):
        if not line.strip():
            continue
        parts = _two_fields(line, fmt)
        if len(parts) != 2 or not parts[1].strip():
            bad.add("vertex_fields", location, number, line, f"expected 2 fields (id, host), got {len(parts)}")
            continue
        try:
            vid = int(parts[0])
        except ValueError:
            bad.add("vertex_id", location, number, line, f"vertex id {parts[0]!r} is not an integer")
            continue
        name = parts[1].strip().lower().rstrip(".")
        yield number, vid, unreverse(name) if reversed_names else name


def read_vertices(location: str, fmt: str, reversed_names: bool, bad: BadLines) -> tuple[np.ndarray, list[str]]:
    """Vertex ids (int64, as given) and host names (un-reversed when ``reversed_names``)."""
    ids: list[int] = []
    hosts: list[str] = []
    seen: set[int] = set()
    for number, vid, host in vertex_lines(location, fmt, reversed_names, bad):
        if vid in seen:
            bad.add("vertex_duplicate", location, number, f"{vid}\t{host}", duplicate_vertex(vid))
            continue
        seen.add(vid)
        ids.append(vid)
        hosts.append(host)
    return np.asarray(ids, dtype=np.int64), hosts


def duplicate_vertex(vid: int) -> str:
    return f"vertex id {vid} given again (the first is kept)"


def unknown_vertex(vid: int) -> str:
    return f"no vertex has id {vid}"


def _fast_block(block: bytes, lines: int, fmt: str) -> np.ndarray | None:
    """The block's (from, to) ids as an (n, 2) array when every line is two integer fields,
    parsed in bulk; None (read it line by line) otherwise."""
    if fmt == "cc-webgraph":  # exactly one tab on every line, counted with numpy
        chars = np.frombuffer(block, dtype=np.uint8)
        ends = np.concatenate(([-1], np.flatnonzero(chars == 10), [len(chars)]))
        if not np.all(np.diff(np.searchsorted(np.flatnonzero(chars == 9), ends)) == 1):
            return None
        fields = block.replace(b"\t", b"\n").split(b"\n")
    else:
        if not all(len(line.split()) == 2 for line in block.split(b"\n")):
            return None
        fields = block.split()
    if len(fields) != 2 * lines:
        return None
    try:  # int() takes bytes and ignores surrounding whitespace (a CR of a CRLF line)
        return np.fromiter(map(int, fields), dtype=np.int64, count=len(fields)).reshape(-1, 2)
    except (ValueError, OverflowError):
        return None


def _slow_block(first: int, block: bytes, fmt: str, location: str, bad: BadLines) -> tuple[np.ndarray, np.ndarray]:
    pairs: list[tuple[int, int]] = []
    numbers: list[int] = []
    for number, raw in enumerate(block.split(b"\n"), first):
        line = raw.decode("utf-8", "replace").rstrip("\r")
        if not line.strip():
            continue
        parts = _two_fields(line, fmt)
        if len(parts) != 2:
            bad.add("edge_fields", location, number, line, f"expected 2 fields (from, to), got {len(parts)}")
            continue
        try:
            pairs.append((int(parts[0]), int(parts[1])))
        except ValueError:
            bad.add("edge_id", location, number, line, "a vertex id is not an integer")
            continue
        numbers.append(number)
    return np.asarray(pairs, dtype=np.int64).reshape(-1, 2), np.asarray(numbers, dtype=np.int64)


def edge_blocks(location: str, fmt: str, bad: BadLines) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """((n, 2) vertex ids, their n line numbers) of the well formed edge lines, a block of
    lines at a time; the others counted in ``bad``.  A block of lines that are all well formed
    is parsed in bulk; a block with a bad line is read line by line.  The one parser of edge
    files, in this process or in the MapReduce build's map tasks (``spamflow.mr_hostgraph``)."""
    for first, block in line_blocks(location):
        lines = block.count(b"\n") + 1
        fast = _fast_block(block, lines, fmt)
        if fast is not None:
            yield fast, np.arange(first, first + lines, dtype=np.int64)
        else:
            pairs, numbers = _slow_block(first, block, fmt, location, bad)
            if len(pairs):
                yield pairs, numbers


def read_edges(location: str, fmt: str, ids: np.ndarray, bad: BadLines) -> tuple[np.ndarray, np.ndarray]:
    """Edges as vertex positions (the index of each id in ``ids``): lines of two integer ids;
    an id that no vertex line gave is a bad line (``edge_unknown_vertex``)."""
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    sources: list[np.ndarray] = []
    targets: list[np.ndarray] = []
    for pairs, numbers in edge_blocks(location, fmt, bad):
        where = np.searchsorted(sorted_ids, pairs).clip(0, max(len(sorted_ids) - 1, 0))
        found = (sorted_ids[where] == pairs) if len(sorted_ids) else np.zeros_like(pairs, dtype=bool)
        ok = found.all(axis=1)
        for i in np.flatnonzero(~ok):
            missing = [int(v) for v, f in zip(pairs[i], found[i]) if not f]
            bad.add("edge_unknown_vertex", location, int(numbers[i]), f"{pairs[i, 0]}\t{pairs[i, 1]}",
                    unknown_vertex(missing[0]))
        sources.append(order[where[ok, 0]])
        targets.append(order[where[ok, 1]])
    empty = np.zeros(0, dtype=np.int64)
    return (np.concatenate(sources) if sources else empty), (np.concatenate(targets) if targets else empty)


def read_text_graph(vertices: str, edges: str, fmt: str = "cc-webgraph", reversed_names: bool | None = None
                    ) -> TextGraph:
    """Both files of a host graph; ``reversed_names`` defaults to True for cc-webgraph, False
    for plain.  Two vertices with the same host name after un-reversing are one node (the
    later lines' edges go to the first)."""
    if fmt not in FORMATS:
        raise ValueError(f"host graph format {fmt!r}: one of {', '.join(FORMATS)}")
    bad = BadLines()
    flip = fmt == "cc-webgraph" if reversed_names is None else reversed_names
    ids, hosts = read_vertices(vertices, fmt, flip, bad)
    sources, targets = read_edges(edges, fmt, ids, bad)
    first: dict[str, int] = {}
    alias = np.arange(len(hosts), dtype=np.int64)
    for i, host in enumerate(hosts):
        alias[i] = first.setdefault(host, i)
    counts = {"vertex_lines": len(hosts), "edge_lines": int(len(sources)),
              "vertices_same_host": int(len(hosts) - len(first))}
    if counts["vertices_same_host"]:
        keep = np.flatnonzero(alias == np.arange(len(hosts)))
        position = np.full(len(hosts), -1, dtype=np.int64)
        position[keep] = np.arange(len(keep))
        sources, targets = position[alias[sources]], position[alias[targets]]
        hosts = [hosts[i] for i in keep]
    return TextGraph(hosts, sources, targets, bad, counts)
