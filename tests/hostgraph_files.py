"""Host graphs written in Common Crawl's cc-webgraph host-level format (and the plain one)
from the real page graphs of ``../shared/data/web-graphs-small`` (Pajek, page URLs as vertex
labels): pages become hosts, page links host links (self-links and repeats dropped)."""

from __future__ import annotations

import gzip
from pathlib import Path

from spamflow.domains import host_of


def pajek_host_edges(path: Path) -> tuple[list[str], set[tuple[str, str]]]:
    """The hosts of a Pajek page graph's URL labels and its distinct host links (no self-links)."""
    opener = gzip.open if path.suffix == ".gz" else open
    hosts: dict[int, str] = {}
    edges: set[tuple[str, str]] = set()
    section = ""
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            if line.startswith("*"):
                section = line.split()[0].lower()
                continue
            if section == "*vertices":
                number, _, label = line.partition(" ")
                host = host_of(label.strip().strip('"'))
                if host:
                    hosts[int(number)] = host
            elif section in ("*arcs", "*edges"):
                a, b = (int(x) for x in line.split()[:2])
                if a in hosts and b in hosts and hosts[a] != hosts[b]:
                    edges.add((hosts[a], hosts[b]))
    return sorted(set(hosts.values())), edges


def reverse(host: str) -> str:
    return ".".join(reversed(host.split(".")))


def write_cc_webgraph(hosts: list[str], edges: set[tuple[str, str]], folder: Path) -> tuple[Path, Path]:
    """``vertices.txt.gz`` (``id<TAB>rev.host``, ids 0..n-1 in the order of the reversed names, as
    cc-webgraph sorts them) and ``edges.txt.gz`` (``from<TAB>to``, sorted)."""
    order = sorted(hosts, key=reverse)
    ids = {h: i for i, h in enumerate(order)}
    vertices, edge_file = folder / "vertices.txt.gz", folder / "edges.txt.gz"
    with gzip.open(vertices, "wt", encoding="utf-8") as fh:
        fh.writelines(f"{i}\t{reverse(h)}\n" for i, h in enumerate(order))
    with gzip.open(edge_file, "wt", encoding="utf-8") as fh:
        fh.writelines(f"{a}\t{b}\n" for a, b in sorted((ids[a], ids[b]) for a, b in edges))
    return vertices, edge_file


def write_plain(hosts: list[str], edges: set[tuple[str, str]], folder: Path) -> tuple[Path, Path]:
    """A vertex file ``id host`` (ids from 100, unsorted) and a plain ``from to`` edge list."""
    ids = {h: 100 + 7 * i for i, h in enumerate(reversed(hosts))}
    vertices, edge_file = folder / "hosts.txt", folder / "links.txt"
    vertices.write_text("".join(f"{i} {h}\n" for h, i in ids.items()))
    edge_file.write_text("".join(f"{ids[a]} {ids[b]}\n" for a, b in sorted(edges)))
    return vertices, edge_file
