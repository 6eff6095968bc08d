"""The rows of an export, made from run.json alone: each finished stage's per-host table as its
plugin shows it in the report (``spamflow_report_host_columns``: headline columns and the rule
that says it fired; else its declared per-host table), and the verdicts of the stage that gives
scores.  Knows no detector by name, so a third-party plugin's table is exported the same way."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from spamflow.domains import registered_domain
from spamflow.errors import SpamflowError
from spamflow.report.host_columns import HostColumns, declared_columns, host_table_output
from spamflow.report.render import answers, finished

SCHEMA_VERSION = 1
"""Bumped when a column of schema 1 changes meaning or type; new columns do not bump it."""

KEY = ("snapshot", "host")

HOST_COLUMNS: dict[str, str] = {
    "schema_version": "the export schema's version (this page describes version 1)",
    "run_id": "16 hex digits identifying the run: a hash of every finished stage's name and signature",
    "snapshot": "the crawl snapshot label",
    "host": "the host name, lower case",
    "domain": "the host's registered domain (Public Suffix List)",
    "score": "the classifier's spam score in [0, 1], null where no classifier scored the host",
    "label": "the classifier's verdict (spam or nonspam) at its threshold, null where unscored",
    "fired": "the detectors whose rule fired on the host (their evidence columns are above the rule's threshold)",
}
"""The fixed columns of a host row, in order; then ``<stage>__<column>`` per detector."""

URL_COLUMNS: dict[str, str] = {
    "url": "the page's URL (WARC-Target-URI)",
    "record_id": "the WARC-Record-ID of the response record",
    "warc_file": "the WARC file the record is in, as the run read it",
    "warc_offset": "the record's byte offset in that file",
    "html_bytes": "bytes of the HTML payload",
}
"""The page columns of a URL row, after the host row's fixed columns."""


@dataclass(frozen=True)
class RunIdentity:
    """What names the run an export came from (every row has ``run_id``; ``export.json`` all)."""

    run_id: str
    spamflow_version: str
    config: str
    started_at: str
    finished_at: str
    stages: dict[str, str]
    score_stage: str | None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def run_identity(manifest: dict[str, Any], score_stage: str | None) -> RunIdentity:
    stages = {name: str(s.get("signature", "")) for name, s in finished(manifest["stages"]).items()}
    digest = hashlib.sha256("\n".join(f"{k}:{v}" for k, v in sorted(stages.items())).encode()).hexdigest()[:16]
    return RunIdentity(digest, str(manifest.get("spamflow_version", "")), str(manifest.get("config", "")),
                       str(manifest.get("started_at", "")), str(manifest.get("finished_at", "")), stages, score_stage)


@dataclass(frozen=True)
class StageColumns:
    """One stage's part of a host row: the columns it exports and its fired rule."""

    stage: str
    path: Path
    columns: tuple[str, ...]
    fired_column: str | None
    fired_above: float


def _stage_columns(plugins: Any, stage: str, record: dict[str, Any]) -> tuple[HostColumns | None, StageColumns | None]:
    import pyarrow.parquet as pq

    shown = [c for _, c in answers(plugins, "spamflow_report_host_columns", HostColumns, stage=stage,
                                   record=record)] or [c for c in (declared_columns(record),) if c]
    declared = shown[0] if shown else None
    path = record.get("outputs", {}).get(host_table_output(record))
    if not path or not str(path).endswith(".parquet") or not Path(path).is_file():
        return declared, None
    schema = pq.read_schema(path)
    if not set(KEY) <= set(schema.names):
        return declared, None
    numeric = [f.name for f in schema if f.name not in KEY
               and (pa.types.is_integer(f.type) or pa.types.is_floating(f.type) or pa.types.is_boolean(f.type))]
    spec = (record.get("host_tables") or {}).get(host_table_output(record)) or {}
    evidence = [n for n, f in (spec.get("features") or {}).items() if f.get("evidence")]
    wanted = list(declared.headline) if declared is not None and declared.headline is not None else numeric[:3]
    rule = declared.fired if declared is not None else None
    wanted += evidence + ([rule.column] if rule else [])
    columns = tuple(dict.fromkeys(n for n in wanted if n in numeric))
    return declared, StageColumns(stage, Path(path), columns, rule.column if rule and rule.column in numeric else None,
                                  float(rule.above) if rule else 0.0)


@dataclass
class HostRows:
    """Every (snapshot, host) of the run with its columns, and what made them."""

    identity: RunIdentity
    table: pa.Table
    columns: dict[str, str]
    """Every column with what it means."""


def host_rows(manifest: dict[str, Any], plugins: Any) -> HostRows:
    """The host rows of a run: one per (snapshot, host) any stage's per-host table or the
    classifier names, sorted by snapshot then host."""
    import pyarrow.parquet as pq

    done = finished(manifest["stages"])
    values: dict[tuple[str, str], dict[str, Any]] = {}
    fired: dict[tuple[str, str], set[str]] = {}
    columns: dict[str, str] = dict(HOST_COLUMNS)
    stage_fields: list[str] = []
    score_stage: str | None = None
    scores: dict[tuple[str, str], Any] = {}
    for stage, record in done.items():
        declared, part = _stage_columns(plugins, stage, record)
        if declared is not None and declared.scores is not None:
            score_stage, scores = stage, declared.scores
        if part is None:
            continue
        read = list(dict.fromkeys([*KEY, *part.columns]))
        features = (record.get("host_tables") or {}).get(host_table_output(record), {}).get("features") or {}
        for name in part.columns:
            stage_fields.append(f"{stage}__{name}")
            what = features.get(name, {}).get("description") or f"the {stage} stage's {name!r} column"
            rule = f" (the stage fired when above {part.fired_above:g})" if name == part.fired_column else ""
            columns[f"{stage}__{name}"] = what + rule
        for item in pq.read_table(part.path, columns=read).to_pylist():
            key = (item["snapshot"], item["host"])
            row = values.setdefault(key, {})
            for name in part.columns:
                value = item[name]
                row[f"{stage}__{name}"] = float(value) if value is not None else None
            if part.fired_column and (item[part.fired_column] or 0) > part.fired_above:
                fired.setdefault(key, set()).add(stage)
    for key, verdict in scores.items():
        values.setdefault(key, {})
        if verdict.fired is not None:
            fired.setdefault(key, set()).update(verdict.fired)
    identity = run_identity(manifest, score_stage)
    keys = sorted(values)
    data: dict[str, list[Any]] = {
        "schema_version": [SCHEMA_VERSION] * len(keys), "run_id": [identity.run_id] * len(keys),
        "snapshot": [k[0] for k in keys], "host": [k[1] for k in keys],
        "domain": [registered_domain(k[1]) for k in keys],
        "score": [scores[k].score if k in scores else None for k in keys],
        "label": [scores[k].label if k in scores else None for k in keys],
        "fired": [sorted(fired.get(k, ())) for k in keys],
    }
    for name in stage_fields:
        data[name] = [values[k].get(name) for k in keys]
    schema = pa.schema([pa.field("schema_version", pa.int32(), nullable=False),
                        pa.field("run_id", pa.string(), nullable=False),
                        pa.field("snapshot", pa.string(), nullable=False),
                        pa.field("host", pa.string(), nullable=False),
                        pa.field("domain", pa.string(), nullable=False), pa.field("score", pa.float64()),
                        pa.field("label", pa.string()), pa.field("fired", pa.list_(pa.string()), nullable=False),
                        *(pa.field(n, pa.float64()) for n in stage_fields)])
    return HostRows(identity, pa.table(data, schema=schema), columns)


PAGE_READ = ("snapshot", "host", "url", "record_id", "warc_file", "warc_offset", "html_bytes")


def has_pages(manifest: dict[str, Any]) -> bool:
    """Whether the run has a page table (a run on ``input.hostgraph`` has none: host rows only)."""
    pages = finished(manifest["stages"]).get("parse", {}).get("outputs", {}).get("pages")
    return bool(pages) and Path(pages).is_dir()


def pages_dir(manifest: dict[str, Any]) -> Path:
    """The run's page table (the parse stage's ``pages`` output)."""
    pages = finished(manifest["stages"]).get("parse", {}).get("outputs", {}).get("pages")
    if not pages or not Path(pages).is_dir():
        raise SpamflowError("export: the run has no finished parse stage with a page table (run.json: stages.parse."
                            "outputs.pages); per-URL rows need it")
    return Path(pages)


def url_batches(manifest: dict[str, Any], hosts: pa.Table, batch_rows: int = 65536) -> Iterator[pa.Table]:
    """The URL rows of a run, batch by batch in page-table order: each page's identity joined
    with its (snapshot, host) row.  Memory grows with the host table and one batch."""
    import pyarrow.dataset as ds

    dataset = ds.dataset(str(pages_dir(manifest)), format="parquet")
    index = hosts.select(list(KEY)).append_column("_row", pa.array(range(hosts.num_rows), pa.int64()))
    carried = [n for n in hosts.schema.names if n not in KEY and n not in ("schema_version", "run_id", "domain",
                                                                            "fired")]
    run_id = hosts.column("run_id")[0].as_py() if hosts.num_rows else ""
    for batch in dataset.to_batches(columns=list(PAGE_READ), batch_size=batch_rows):
        if not batch.num_rows:
            continue
        pages = pa.Table.from_batches([batch]).append_column("_order", pa.array(range(batch.num_rows), pa.int64()))
        # Arrow's join keeps no order and carries no list column: join the row numbers, then take
        rows = pages.join(index, keys=list(KEY), join_type="left outer").sort_by("_order").column("_row")
        found = hosts.take(rows)
        n = pages.num_rows
        hosts_of = batch.column("host").to_pylist()
        domains = found.column("domain").to_pylist()
        columns: dict[str, Any] = {
            "schema_version": pa.array([SCHEMA_VERSION] * n, pa.int32()),
            "run_id": pa.array([run_id] * n, pa.string()),
            "snapshot": batch.column("snapshot"), "host": batch.column("host"),
            "domain": pa.array([d or registered_domain(h) for d, h in zip(domains, hosts_of)], pa.string()),
            "score": found.column("score"), "label": found.column("label"),
            "fired": pa.array([f or [] for f in found.column("fired").to_pylist()], pa.list_(pa.string())),
        }
        columns.update({name: batch.column(name) for name in URL_COLUMNS})
        columns.update({name: found.column(name) for name in carried if name not in columns})
        yield pa.table(columns)


def describe(rows: HostRows) -> dict[str, Any]:
    """The schema of both row kinds, as ``export.json`` carries it."""
    return {"schema_version": SCHEMA_VERSION, "run": rows.identity.to_json(),
            "host_columns": rows.columns,
            "url_columns": {**HOST_COLUMNS, **URL_COLUMNS,
                            **{k: v for k, v in rows.columns.items() if k not in HOST_COLUMNS}}}


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
