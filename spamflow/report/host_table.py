"""The per-host table of the report: one row per (snapshot, host) with a few headline columns
of every stage's ``hosts`` output, which detectors fired, a page title to tell what the host
is, and a classifier's score when one ran.  What each stage shows is its plugin's
``spamflow_report_host_columns``; the table knows no detector."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spamflow.report.evidence import HostKey
from spamflow.report.host_columns import HostColumns, column_names, host_table_output

__all__ = ["HostKey", "HostRow", "HostTable", "build_host_table"]


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
    rules: list[tuple[str, str]] = field(default_factory=list)
    """(stage, what firing means) of every stage with a fired rule, in run order."""
    names: dict[str, str] = field(default_factory=dict)
    """``stage.column`` -> the column's human name (``column_names``), for the header."""

    def name(self, column: str) -> str:
        return self.names.get(column) or column.split(".", 1)[-1]


def _headline(declared: HostColumns | None, table: Any) -> list[str]:
    if declared is not None and declared.headline is not None:
        return [n for n in declared.headline if n in table.schema.names]
    numeric = [f.name for f in table.schema if f.name not in ("snapshot", "host")
               and (str(f.type).startswith(("int", "uint", "double", "float", "bool")))]
    return numeric[:3]


def build_host_table(stages: dict[str, dict[str, Any]], links: dict[HostKey, list[tuple[str, str]]],
                     max_hosts: int, declared: dict[str, HostColumns] | None = None) -> HostTable:
    """Join the ``hosts`` Parquet output of every stage that has one, each shown as its plugin
    ``declared``, and the verdicts of the stages that give scores."""
    import pyarrow.parquet as pq

    declared = declared or {}
    rows: dict[HostKey, HostRow] = {}

    def row(snapshot: str, host: str) -> HostRow:
        key = (snapshot, host)
        if key not in rows:
            rows[key] = HostRow(snapshot, host)
        return rows[key]

    columns: list[str] = []
    names_of: dict[str, str] = {}
    for stage, record in stages.items():
        path = record.get("outputs", {}).get(host_table_output(record))
        if not path or not str(path).endswith(".parquet") or not Path(path).is_file():
            continue
        table = pq.read_table(path)
        if not {"snapshot", "host"} <= set(table.schema.names):
            continue
        names = _headline(declared.get(stage), table)
        columns += [f"{stage}.{n}" for n in names]
        human = column_names(record, declared.get(stage))
        names_of.update({f"{stage}.{n}": human[n] for n in names if n in human})
        rule = declared[stage].fired if stage in declared else None
        fired_col = rule.column if rule else ""
        data = table.select(["snapshot", "host", *names] + ([fired_col] if fired_col in table.schema.names
                                                          and fired_col not in names else [])).to_pylist()
        for item in data:
            r = row(item["snapshot"], item["host"])
            for n in names:
                r.values[f"{stage}.{n}"] = item[n]
            if rule and (item.get(fired_col) or 0) > rule.above:
                r.fired.append(stage)
    scored = False
    for stage in stages:
        scores = declared[stage].scores if stage in declared else None
        if scores is None:
            continue
        scored = True
        for (snapshot, host), verdict in scores.items():
            r = row(snapshot, host)
            r.score, r.label, r.true_label = verdict.score, verdict.label, verdict.true_label
            r.evidence = verdict.evidence
            if verdict.fired is not None:
                r.fired = sorted(set(r.fired) | set(verdict.fired))
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
    rules = [(stage, declared[stage].fired.text) for stage in stages  # type: ignore[union-attr]
             if stage in declared and declared[stage].fired is not None]
    return HostTable(columns, shown, max(0, len(ordered) - max_hosts), scored, rules, names_of)


def host_titles(pages: Path, wanted: set[HostKey]) -> dict[HostKey, str]:
    """For each wanted (snapshot, host), the title of its page with the shortest URL (the
    home page when it was crawled; ties: the smallest URL), so a reader sees what a host
    is about in its own language.  Reads the page table batch by batch: memory grows with
    ``wanted``, not with the table."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

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
