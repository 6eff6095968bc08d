"""The per-host table of the report: one row per (snapshot, host) with the classifier's score
when a ``classify`` stage ran, a page title to tell what the host is, and a few headline
features of every detector beside it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

HEADLINE_FEATURES: dict[str, tuple[str, ...]] = {
    "obvious": ("number_of_pages",),
    "quilt": ("quilted_pages", "quilted_fraction"),
    "hss": ("largest_cluster_domains", "multi_domain_fraction"),
    "spin": ("campaign_pages", "max_campaign_hosts", "is_promoted"),
    "links": ("pagerank", "trustrank", "reciprocity"),
    "content": ("AVG_52", "AVG_54"),
}
"""Columns shown per known detector; a detector not listed shows its first three numeric columns."""

FIRED: dict[str, tuple[str, float]] = {
    "quilt": ("quilted_pages", 0),
    "hss": ("largest_cluster_domains", 1),
    "spin": ("campaign_pages", 0),
}
"""A detector "fired" on a host when this column is above this value (shown, and the order
of the table before a classifier exists)."""

HostKey = tuple[str, str]


@dataclass
class HostRow:
    snapshot: str
    host: str
    values: dict[str, Any] = field(default_factory=dict)
    fired: list[str] = field(default_factory=list)
    score: float | None = None
    label: str | None = None
    true_label: str | None = None
    evidence: dict[str, Any] | None = None
    links: list[tuple[str, str]] = field(default_factory=list)
    """Evidence anchors in the report: (text, href)."""
    title: str = ""
    """The title of the host's page nearest its root (see :func:`host_titles`)."""


@dataclass
class HostTable:
    columns: list[str]
    rows: list[HostRow]
    hidden: int
    """Rows left out past ``max_hosts`` (counted, not silently dropped)."""
    scored: bool


def _headline(stage: str, table: Any) -> list[str]:
    names = [n for n in HEADLINE_FEATURES.get(stage, ()) if n in table.schema.names]
    if names or stage in HEADLINE_FEATURES:
        return names
    numeric = [f.name for f in table.schema if f.name not in ("snapshot", "host")
               and (str(f.type).startswith(("int", "uint", "double", "float", "bool")))]
    return numeric[:3]


def build_host_table(stages: dict[str, dict[str, Any]], links: dict[HostKey, list[tuple[str, str]]],
                     max_hosts: int) -> HostTable:
    """Join the ``hosts`` Parquet output of every stage that has one, and ``classify``'s scores."""
    rows: dict[HostKey, HostRow] = {}

    def row(snapshot: str, host: str) -> HostRow:
        key = (snapshot, host)
        if key not in rows:
            rows[key] = HostRow(snapshot, host)
        return rows[key]

    columns: list[str] = []
    for stage, record in stages.items():
        path = record.get("outputs", {}).get("hosts")
        if not path or not str(path).endswith(".parquet") or not Path(path).is_file():
            continue
        table = pq.read_table(path)
        if not {"snapshot", "host"} <= set(table.schema.names):
            continue
        names = _headline(stage, table)
        columns += [f"{stage}.{n}" for n in names]
        fired_col, above = FIRED.get(stage, ("", 0.0))
        data = table.select(["snapshot", "host", *names] + ([fired_col] if fired_col in table.schema.names
                                                          and fired_col not in names else [])).to_pylist()
        for item in data:
            r = row(item["snapshot"], item["host"])
            for n in names:
                r.values[f"{stage}.{n}"] = item[n]
            if fired_col and (item.get(fired_col) or 0) > above:
                r.fired.append(stage)
    scored = False
    classify = stages.get("classify", {}).get("outputs", {}).get("scores")
    if classify and Path(classify).is_file():
        scored = True
        for item in pq.read_table(classify).to_pylist():
            r = row(item["snapshot"], item["host"])
            r.score, r.label, r.true_label = item["score"], item["label"], item.get("true_label")
            r.evidence = json.loads(item["evidence"]) if item.get("evidence") else None
            if r.evidence:
                r.fired = sorted(set(r.fired) | set(r.evidence.get("detectors", {})))
    for key, anchors in links.items():
        if key in rows:
            rows[key].links = anchors
    ordered = sorted(rows.values(), key=lambda r: (-(r.score if r.score is not None else -1.0),
                                                   -len(r.fired), r.snapshot, r.host))
    shown = ordered[:max_hosts]
    pages = stages.get("parse", {}).get("outputs", {}).get("pages")
    if pages and Path(pages).is_dir():
        titles = host_titles(Path(pages), {(r.snapshot, r.host) for r in shown})
        for r in shown:
            r.title = titles.get((r.snapshot, r.host), "")
    return HostTable(columns, shown, max(0, len(ordered) - max_hosts), scored)


def host_titles(pages: Path, wanted: set[HostKey]) -> dict[HostKey, str]:
    """For each wanted (snapshot, host), the title of its page with the shortest URL (the
    home page when it was crawled; ties: the smallest URL), so a reader sees what a host
    is about in its own language.  Reads the page table batch by batch: memory grows with
    ``wanted``, not with the table."""
    best: dict[HostKey, tuple[int, str, str]] = {}
    hosts = pa.array(sorted({host for _, host in wanted}), pa.string())
    dataset = ds.dataset(str(pages), format="parquet")
    for batch in dataset.to_batches(columns=["snapshot", "host", "url", "title"]):
        batch = batch.filter(pc.is_in(batch.column("host"), value_set=hosts))
        for snapshot, host, url, title in zip(*(batch.column(n).to_pylist() for n in batch.schema.names)):
            key = (snapshot, host)
            if key in wanted and title:
                candidate = (len(url), url, title)
                if key not in best or candidate < best[key]:
                    best[key] = candidate
    return {key: title for key, (_, _, title) in best.items()}
