"""One-to-all HS-similarity (HSS section 4.1): rank every page by Sim_b against one page,
and the decreasing-similarity curve of Figure 4, whose gaps separate templates and sites."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from spamflow_hss.fingerprint import matched_dimensions
from spamflow_hss.fingerprint_table import read_fingerprints


def find_page(table: pa.Table, query: str, snapshot: str | None = None) -> int:
    """Row of the page named by ``query``, a doc_id or a URL (the first snapshot's if the URL
    was fetched in several and ``snapshot`` is not given)."""
    rows = table.column("snapshot").to_pylist()
    doc_ids = table.column("doc_id").to_pylist()
    urls = table.column("url").to_pylist()
    wanted = [i for i, (d, u) in enumerate(zip(doc_ids, urls)) if u == query or (query.isdigit() and d == int(query))]
    if snapshot is not None:
        wanted = [i for i in wanted if rows[i] == snapshot]
    if not wanted:
        where = f" in snapshot {snapshot!r}" if snapshot else ""
        raise LookupError(f"no page with doc_id or URL {query!r}{where} in the fingerprints table")
    return min(wanted, key=lambda i: (rows[i], doc_ids[i]))


def rank_by_similarity(table: pa.Table, row: int, m: int) -> pa.Table:
    """Every page of ``table`` with its Sim_b to page ``row``, best first (ties by doc_id)."""
    fingerprints = read_fingerprints(table, m)
    similarity = matched_dimensions(fingerprints, fingerprints[row]) / m
    similarity[row] = 1.0
    order = np.lexsort((table.column("doc_id").to_numpy(), -similarity))
    ranked = table.select(["doc_id", "snapshot", "url", "host", "domain"]).take(pa.array(order))
    return ranked.append_column("rank", pa.array(np.arange(1, len(order) + 1))).append_column(
        "sim_b", pa.array(similarity[order]))


def plot_curve(ranked: pa.Table, path: Path, title: str) -> None:
    """Sim_b against rank (the paper's Figure 4), drawn as the report draws it."""
    from spamflow_hss.report_section import similarity_curve

    similarity_curve(ranked.column("sim_b").to_numpy(), path, title)
