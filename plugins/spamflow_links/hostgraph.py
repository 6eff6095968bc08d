"""Host graphs from the page table: one weighted directed scipy.sparse matrix per snapshot,
all on one node index, so that row i is the same host in every snapshot.

An edge a -> b has weight = number of page links from pages of a to pages of b (one page
linking twice counts twice). Self-links (a -> a) are dropped and counted. Nodes are the hosts
(or registered domains) that have pages in at least one snapshot; links to anything else
are dropped and counted, since a host that was never crawled has no out-links to compare.
"""

from __future__ import annotations

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
    return HostGraph(snapshot, adjacency, crawled, words, counts)


def graph_from_edges(n: int, edges: Iterable[tuple[int, int]], snapshot: str = "t") -> HostGraph:
    """A binary HostGraph from (source, target) pairs over nodes 0..n-1 (tests, benchmarks);
    self-links are dropped, every node counts as crawled."""
    pairs = np.array([(a, b) for a, b in edges if a != b], dtype=np.int64).reshape(-1, 2)
    adjacency = sp.csr_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    adjacency.sum_duplicates()
    adjacency.data[:] = 1.0
    return HostGraph(snapshot, adjacency, np.ones(n, dtype=bool), np.zeros(n, dtype=np.int64))
