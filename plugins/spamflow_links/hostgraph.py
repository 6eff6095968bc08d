"""Host graphs from the page table: one weighted directed scipy.sparse matrix per snapshot,
all on one node index, so that row i is the same host in every snapshot.

An edge a -> b has weight = number of page links from pages of a to pages of b (one page
linking twice counts twice). Self-links (a -> a) are dropped and counted. Nodes are the hosts
(or registered domains) that have pages in at least one snapshot; links to anything else
are dropped and counted, since a host that was never crawled has no out-links to compare.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

HOST_OF_URL = r"^[a-zA-Z][a-zA-Z0-9+.\-]*://(?:[^/?#@]*@)?(?P<host>\[[^\]]*\]|[^/?#:]*)"
"""The host of an absolute URL (parse has already lower-cased scheme and host)."""


@dataclass
class HostGraph:
    """One snapshot: ``adjacency[i, j]`` = page links from node i to node j (CSR, float64)."""

    snapshot: str
    adjacency: sp.csr_matrix
    crawled: np.ndarray
    """True for nodes with at least one page in this snapshot."""
    words: np.ndarray
    """Words on the node's pages in this snapshot (for change(u))."""
    counts: dict[str, int] = field(default_factory=dict)
    uncrawled: pa.Table | None = None
    """``source`` (node id), ``target`` (host), ``links``: the dropped links to hosts not
    crawled, kept so that a host crawled later gets its in-links from this snapshot (the
    frozen statistics of incremental scoring); None where not collected (MapReduce edges)."""

    @property
    def n(self) -> int:
        return int(self.adjacency.shape[0])

    def binary(self) -> sp.csr_matrix:
        """The 0/1 adjacency matrix (int8 would overflow in products, so float64)."""
        b = self.adjacency.copy()
        b.data[:] = 1.0
        return b


def node_index(names: Iterable[pa.Array | pa.ChunkedArray]) -> np.ndarray:
    """The sorted distinct node names: position = node id, stable for a given set of names."""
    uniques = [pc.unique(pa.chunked_array([a]) if isinstance(a, pa.Array) else a) for a in names]
    merged = pa.chunked_array([u for u in uniques if len(u)], type=pa.string()) if uniques else pa.chunked_array(
        [], type=pa.string())
    return np.array(sorted(set(merged.to_pylist()) - {None, ""}), dtype=object)


def link_targets(links: pa.ChunkedArray | pa.Array, nofollow: bool) -> tuple[pa.Array, pa.Array]:
    """(parent row, target host) of every link, one entry per link, in a vectorised pass."""
    if isinstance(links, pa.ChunkedArray):
        links = links.combine_chunks()
    parents = pc.list_parent_indices(links)
    flat = pc.list_flatten(links)
    url = flat.field("url")
    if not nofollow:
        keep = pc.invert(pc.fill_null(flat.field("nofollow"), False))
        parents, url = parents.filter(keep), url.filter(keep)
    host = pc.struct_field(pc.extract_regex(url, HOST_OF_URL), "host")
    host = pc.utf8_rtrim(pc.utf8_lower(host), ".")
    return parents, host


def build_host_graph(snapshot: str, batches: Iterable[pa.RecordBatch], index: np.ndarray, *, nodes: str = "host",
                     nofollow: bool = True, to_domain: Callable[[str], str] | None = None) -> HostGraph:
    """The host graph of one snapshot from batches with columns host, domain, words, links.

    ``to_domain`` maps a link's target host to its registered domain when ``nodes == "domain"``.
    """
    index_arr = pa.array(index.tolist(), type=pa.string())
    n = len(index)
    src_parts: list[np.ndarray] = []
    dst_parts: list[np.ndarray] = []
    uncrawled_parts: list[pa.Table] = []
    crawled = np.zeros(n, dtype=bool)
    words = np.zeros(n, dtype=np.int64)
    counts = {"pages": 0, "links": 0, "self_links": 0, "links_to_uncrawled": 0, "links_without_host": 0,
              "pages_without_host": 0}
    for batch in batches:
        counts["pages"] += batch.num_rows
        node_col = batch.column(nodes)
        src_of_page = pc.index_in(node_col, value_set=index_arr).to_numpy(zero_copy_only=False)
        src_of_page = np.nan_to_num(src_of_page.astype(float), nan=-1).astype(np.int64)
        ok = src_of_page >= 0
        counts["pages_without_host"] += int((~ok).sum())
        crawled[src_of_page[ok]] = True
        n_words = pc.fill_null(pc.list_value_length(batch.column("words")), 0).to_numpy(zero_copy_only=False)
        np.add.at(words, src_of_page[ok], n_words[ok])
        parents, target = link_targets(batch.column("links"), nofollow)
        counts["links"] += len(target)
        no_host = pc.fill_null(pc.equal(target, ""), True)
        counts["links_without_host"] += pc.sum(no_host).as_py() or 0
        if nodes == "domain":
            if to_domain is None:
                raise ValueError("nodes='domain' needs to_domain")
            encoded = pc.dictionary_encode(target).combine_chunks() if isinstance(
                target, pa.ChunkedArray) else pc.dictionary_encode(target)
            mapped = pa.array([to_domain(h) if h else "" for h in encoded.dictionary.to_pylist()], type=pa.string())
            target = mapped.take(encoded.indices)
        dst = pc.index_in(target, value_set=index_arr).to_numpy(zero_copy_only=False)
        dst = np.nan_to_num(dst.astype(float), nan=-1).astype(np.int64)
        src = src_of_page[parents.to_numpy(zero_copy_only=False)]
        has_host = ~no_host.to_numpy(zero_copy_only=False)
        uncrawled = has_host & (dst < 0)
        counts["links_to_uncrawled"] += int(uncrawled.sum())
        uncrawled &= src >= 0
        uncrawled_parts.append(pa.table({"source": pa.array(src[uncrawled], pa.int64()),
                                         "target": pc.filter(target, pa.array(uncrawled)),
                                         "links": pa.array(np.ones(int(uncrawled.sum()), np.int64))}))
        keep = (dst >= 0) & (src >= 0)
        self_link = keep & (src == dst)
        counts["self_links"] += int(self_link.sum())
        keep &= ~self_link
        src_parts.append(src[keep])
        dst_parts.append(dst[keep])
    src_all = np.concatenate(src_parts) if src_parts else np.zeros(0, dtype=np.int64)
    dst_all = np.concatenate(dst_parts) if dst_parts else np.zeros(0, dtype=np.int64)
    adjacency = sp.csr_matrix((np.ones(len(src_all)), (src_all, dst_all)), shape=(n, n))
    adjacency.sum_duplicates()
    counts["edges"] = int(adjacency.nnz)
    counts["hosts"] = int(crawled.sum())
    return HostGraph(snapshot, adjacency, crawled, words, counts, _count_links(uncrawled_parts))


def _count_links(parts: list[pa.Table]) -> pa.Table:
    """One row per distinct (source, target) of the parts, their ``links`` summed."""
    if not parts:
        return pa.table({"source": pa.array([], pa.int64()), "target": pa.array([], pa.string()),
                         "links": pa.array([], pa.int64())})
    table = pa.concat_tables(parts).group_by(["source", "target"]).aggregate([("links", "sum")])
    table = pa.table({"source": table["source"], "target": table["target"], "links": table["links_sum"]})
    return table.sort_by([("source", "ascending"), ("target", "ascending")])


def graph_from_edges(n: int, edges: Iterable[tuple[int, int]], snapshot: str = "t") -> HostGraph:
    """A binary HostGraph from (source, target) pairs over nodes 0..n-1 (tests, benchmarks);
    self-links are dropped, every node counts as crawled."""
    pairs = np.array([(a, b) for a, b in edges if a != b], dtype=np.int64).reshape(-1, 2)
    adjacency = sp.csr_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    adjacency.sum_duplicates()
    adjacency.data[:] = 1.0
    return HostGraph(snapshot, adjacency, np.ones(n, dtype=bool), np.zeros(n, dtype=np.int64))


# --- the same graph as (key, value) records, for the MapReduce edges job (mr_host_edges) ---

COUNT_KEYS = ("pages", "links", "self_links", "links_to_uncrawled", "links_without_host", "pages_without_host")
"""The counts ``build_host_graph`` keeps per snapshot (with ``edges`` and ``hosts``)."""


def page_records(batches: Iterable[pa.RecordBatch], nofollow: bool = True):
    """(key, value) records of pages with columns snapshot, host, words, links, in-mapper
    combined. The key ``"n <name>"`` gets ``["N"]`` (the node exists: it has a page, in any
    snapshot), ``["W", snapshot, words]`` and ``["L", snapshot, source or None, links]`` (page
    links to it, the target named by its host as ``link_targets`` finds it); the key
    ``"c ["snapshot", "count"]"`` gets the number. Keys are strings, since Spark hashes them.
    Rows without a snapshot only name nodes, as in ``load_graphs`` (whose node index takes
    every row)."""
    nodes: set[str] = set()
    words: dict[tuple[str, str], int] = {}
    links: dict[tuple[str, str, str | None], int] = {}
    counts: dict[tuple[str, str], int] = {}
    for batch in batches:
        snapshot = batch.column("snapshot").to_pylist()
        host = batch.column("host").to_pylist()
        n_words = pc.fill_null(pc.list_value_length(batch.column("words")), 0).to_pylist()
        for s, h, w in zip(snapshot, host, n_words):
            if h:
                nodes.add(h)
            if s is None:
                continue
            counts[s, "pages"] = counts.get((s, "pages"), 0) + 1
            if h:
                words[h, s] = words.get((h, s), 0) + w
            else:
                counts[s, "pages_without_host"] = counts.get((s, "pages_without_host"), 0) + 1
        parents, target = link_targets(batch.column("links"), nofollow)
        for row, t in zip(parents.to_pylist(), target.to_pylist()):
            s = snapshot[row]
            if s is None:
                continue
            counts[s, "links"] = counts.get((s, "links"), 0) + 1
            if not t:
                counts[s, "links_without_host"] = counts.get((s, "links_without_host"), 0) + 1
                continue
            key = (t, s, host[row] or None)
            links[key] = links.get(key, 0) + 1
    for name in sorted(nodes):
        yield f"n {name}", ["N"]
    for (name, s), w in sorted(words.items()):
        yield f"n {name}", ["W", s, w]
    for (name, s, source), c in sorted(links.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or "")):
        yield f"n {name}", ["L", s, source, c]
    for (s, what), c in sorted(counts.items()):
        yield "c " + json.dumps([s, what]), c


def merge_node_values(values: Iterable[list]) -> tuple[bool, dict[str, int], dict[tuple[str, str | None], int]]:
    """(node exists, words by snapshot, links by (snapshot, source)) of one node's records."""
    exists = False
    words: dict[str, int] = {}
    links: dict[tuple[str, str | None], int] = {}
    for value in values:
        if value[0] == "N":
            exists = True
        elif value[0] == "W":
            words[value[1]] = words.get(value[1], 0) + value[2]
        else:
            key = (value[1], value[2])
            links[key] = links.get(key, 0) + value[3]
    return exists, words, links


def node_output(name: str, values: Iterable[list]):
    """The edges job's output for one node name: ``["node", name]`` if it is a node,
    ``["page", snapshot, name, words]`` per snapshot it has pages in, ``["edge", snapshot,
    source, name, links]`` per source node linking to it, and ``["count", snapshot, key, n]``
    for the self-links it has, or for the links to it when it is no node (uncrawled); those
    links also as ``["uncrawled", snapshot, source, name, links]`` (``HostGraph.uncrawled``)."""
    exists, words, links = merge_node_values(values)
    if exists:
        yield ["node", name]
    for s, w in sorted(words.items()):
        yield ["page", s, name, w]
    dropped: dict[tuple[str, str], int] = {}
    for (s, source), c in sorted(links.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        if not exists:
            dropped[s, "links_to_uncrawled"] = dropped.get((s, "links_to_uncrawled"), 0) + c
            if source is not None:
                yield ["uncrawled", s, source, name, c]
        elif source == name:
            dropped[s, "self_links"] = dropped.get((s, "self_links"), 0) + c
        elif source is not None:
            yield ["edge", s, source, name, c]
    for (s, what), c in sorted(dropped.items()):
        yield ["count", s, what, c]


def graphs_from_records(records: Iterable[list]) -> tuple[np.ndarray, list[HostGraph]]:
    """The node index and the host graphs (snapshot order) from the edges job's output:
    the same arrays ``node_index`` and ``build_host_graph`` make from the page table."""
    names: list[str] = []
    pages: dict[str, list[tuple[str, int]]] = {}
    edges: dict[str, list[tuple[str, str, int]]] = {}
    uncrawled: dict[str, list[tuple[str, str, int]]] = {}
    counts: dict[str, dict[str, int]] = {}
    for r in records:
        if r[0] == "node":
            names.append(r[1])
        elif r[0] == "page":
            pages.setdefault(r[1], []).append((r[2], r[3]))
        elif r[0] == "edge":
            edges.setdefault(r[1], []).append((r[2], r[3], r[4]))
        elif r[0] == "uncrawled":
            uncrawled.setdefault(r[1], []).append((r[2], r[3], r[4]))
        else:
            per = counts.setdefault(r[1], dict.fromkeys(COUNT_KEYS, 0))
            per[r[2]] += r[3]
    index = np.array(sorted(names), dtype=object)
    position = {name: i for i, name in enumerate(index.tolist())}
    n = len(index)
    graphs = []
    for snapshot in sorted(counts):
        crawled = np.zeros(n, dtype=bool)
        words = np.zeros(n, dtype=np.int64)
        for name, w in pages.get(snapshot, []):
            crawled[position[name]] = True
            words[position[name]] += w
        mine = edges.get(snapshot, [])
        src = np.array([position[a] for a, _, _ in mine], dtype=np.int64)
        dst = np.array([position[b] for _, b, _ in mine], dtype=np.int64)
        weight = np.array([c for _, _, c in mine], dtype=np.float64)
        adjacency = sp.csr_matrix((weight, (src, dst)), shape=(n, n))
        adjacency.sum_duplicates()
        graph_counts = {**counts[snapshot], "edges": int(adjacency.nnz), "hosts": int(crawled.sum())}
        dropped = uncrawled.get(snapshot, [])
        links_out = pa.table({"source": pa.array([position[a] for a, _, _ in dropped], pa.int64()),
                              "target": pa.array([b for _, b, _ in dropped], pa.string()),
                              "links": pa.array([c for _, _, c in dropped], pa.int64())})
        graphs.append(HostGraph(snapshot, adjacency, crawled, words, graph_counts, _count_links([links_out])))
    return index, graphs
