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


def _is_gzip(head: bytes) -> bool:
    return head[:2] == b"\x1f\x8b"


def text_lines(location: str) -> Iterator[tuple[int, str]]:
    """(line number from 1, line without its end) of a text file, gzip or not (by its first
    bytes, not its name), local or remote (``spamflow.storage.open_input``).  A gzip stream
    that ends before its trailer is a :class:`BadInputError` naming the file and the last
    whole line read."""
    with open_input(location) as raw:
        buffered: Any = raw if hasattr(raw, "peek") else io.BufferedReader(cast(Any, raw))
        stream: Any = gzip.GzipFile(fileobj=buffered, mode="rb") if _is_gzip(buffered.peek(2)) else buffered
        number = 0
        try:
            for number, line in enumerate(stream, 1):  # noqa: B007 - the last number is the message's
                yield number, line.decode("utf-8", "replace").rstrip("\r\n")
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise BadInputError(f"{location}: the gzip stream ends or breaks after line {number} "
                                f"({type(exc).__name__}: {exc}); the file is incomplete (a download cut short?): "
                                "fetch it again") from None


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


def read_vertices(location: str, fmt: str, reversed_names: bool, bad: BadLines) -> tuple[np.ndarray, list[str]]:
    """Vertex ids (int64, as given) and host names (un-reversed when ``reversed_names``)."""
    ids: list[int] = []
    hosts: list[str] = []
    seen: set[int] = set()
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
        if vid in seen:
            bad.add("vertex_duplicate", location, number, line, f"vertex id {vid} given again (the first is kept)")
            continue
        seen.add(vid)
        name = parts[1].strip().lower().rstrip(".")
        ids.append(vid)
        hosts.append(unreverse(name) if reversed_names else name)
    return np.asarray(ids, dtype=np.int64), hosts


def read_edges(location: str, fmt: str, ids: np.ndarray, bad: BadLines, chunk: int = 1 << 20
               ) -> tuple[np.ndarray, np.ndarray]:
    """Edges as vertex positions (the index of each id in ``ids``): lines of two integer ids;
    an id that no vertex line gave is a bad line (``edge_unknown_vertex``)."""
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    sources: list[np.ndarray] = []
    targets: list[np.ndarray] = []
    pending_a: list[int] = []
    pending_b: list[int] = []
    pending_line: list[int] = []

    def flush() -> None:
        if not pending_a:
            return
        pair = np.asarray([pending_a, pending_b], dtype=np.int64)
        where = np.searchsorted(sorted_ids, pair).clip(0, max(len(sorted_ids) - 1, 0))
        found = (sorted_ids[where] == pair) if len(sorted_ids) else np.zeros_like(pair, dtype=bool)
        ok = found.all(axis=0)
        for i in np.flatnonzero(~ok):
            missing = [int(v) for v, f in zip(pair[:, i], found[:, i]) if not f]
            bad.add("edge_unknown_vertex", location, pending_line[i], f"{pair[0, i]}\t{pair[1, i]}",
                    f"no vertex has id {missing[0]}")
        sources.append(order[where[0, ok]])
        targets.append(order[where[1, ok]])
        pending_a.clear()
        pending_b.clear()
        pending_line.clear()

    for number, line in text_lines(location):
        if not line.strip():
            continue
        parts = _two_fields(line, fmt)
        if len(parts) != 2:
            bad.add("edge_fields", location, number, line, f"expected 2 fields (from, to), got {len(parts)}")
            continue
        try:
            a, b = int(parts[0]), int(parts[1])
        except ValueError:
            bad.add("edge_id", location, number, line, "a vertex id is not an integer")
            continue
        pending_a.append(a)
        pending_b.append(b)
        pending_line.append(number)
        if len(pending_a) >= chunk:
            flush()
    flush()
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
