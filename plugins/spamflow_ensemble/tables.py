"""Feature tables: the selected detectors' per-host tables joined on (snapshot, host), or an
external CSV, Parquet or Weka ARFF table with a host or id column.

A :class:`FeatureTable` is a float matrix (NaN where a host is missing from one detector's
table or snapshot), its column names ``group.feature``, the feature groups (one per detector
table) as column indices, and per row its ``snapshot`` and ``host`` (or id).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from spamflow.errors import BadInputError

KEY_COLUMNS = ("snapshot", "host")
ID_COLUMNS = ("host", "hostid", "host_id", "id")
LABEL_COLUMNS = ("class", "label", "assessmentscore", "spamicity")
"""Columns of an external table that carry the label (or a score derived from it): never features."""


@dataclass
class FeatureTable:
    snapshot: list[str]
    host: list[str]
    X: np.ndarray
    features: list[str]
    groups: dict[str, list[int]]
    labels: list[str | None] | None = None
    """Labels found in the table itself (an ARFF ``class`` column), if any."""
    skipped: dict[str, int] = field(default_factory=dict)

    def rows(self, mask: np.ndarray) -> FeatureTable:
        idx = np.flatnonzero(mask)
        return FeatureTable([self.snapshot[i] for i in idx], [self.host[i] for i in idx], self.X[idx],
                            self.features, self.groups,
                            None if self.labels is None else [self.labels[i] for i in idx], self.skipped)

    def columns(self, keep: list[int]) -> FeatureTable:
        """Only the columns ``keep`` (groups renumbered, empty groups dropped)."""
        new = {old: n for n, old in enumerate(keep)}
        groups = {g: [new[c] for c in cols if c in new] for g, cols in self.groups.items()}
        return FeatureTable(self.snapshot, self.host, self.X[:, keep], [self.features[c] for c in keep],
                            {g: c for g, c in groups.items() if c}, self.labels, self.skipped)


def _numeric_columns(table: pa.Table, skip: tuple[str, ...], where: str,
                     skipped: dict[str, int]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for name in table.column_names:
        if name in skip:
            continue
        col = table[name]
        if pa.types.is_boolean(col.type):
            col = col.cast(pa.int8())
        if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_decimal(col.type):
            out[name] = col.cast(pa.float64()).to_numpy(zero_copy_only=False)
        else:
            skipped[f"non_numeric_column:{where}.{name}"] = 1
    return out


def join_host_tables(tables: dict[str, tuple[Path, str]]) -> FeatureTable:
    """Outer-join per-host Parquet tables on (snapshot, host).

    ``tables`` maps a feature-group name to (path, snapshot column): a detector's
    ``hosts.parquet`` has ``snapshot``; links' ``temporal.parquet`` has ``snapshot_t1``
    (features about the change up to that snapshot, missing for a host's first).
    """
    keys: dict[tuple[str, str], int] = {}
    blocks: list[tuple[str, list[int], dict[str, np.ndarray]]] = []
    skipped: dict[str, int] = {}
    # per-snapshot tables first: they say which hosts a snapshot holds; a temporal table only
    # adds columns to those (its rows for hosts absent from the snapshot are counted and dropped)
    # (and by name: rows and columns come out in one order however ``tables`` was built,
    # so a model trained by the stage and by `spamflow train -c` is the same model)
    ordered_tables = sorted(tables.items(), key=lambda kv: (kv[1][1] != "snapshot", kv[0]))
    for group, (path, snapshot_col) in ordered_tables:
        table = pq.read_table(path)
        for col in (snapshot_col, "host"):
            if col not in table.column_names:
                raise BadInputError(f"{path}: per-host table of {group!r} has no {col!r} column "
                                    f"(it has {table.column_names})")
        snaps = table[snapshot_col].to_pylist()
        hosts = table["host"].to_pylist()
        rows = []
        kept = []
        adds_rows = snapshot_col == "snapshot" or not keys
        for n, key in enumerate(zip(snaps, hosts)):
            if key[0] is None or key[1] is None:
                raise BadInputError(f"{path}: row {n} has a null {snapshot_col} or host")
            if adds_rows:
                rows.append(keys.setdefault(key, len(keys)))
                kept.append(n)
            elif key in keys:
                rows.append(keys[key])
                kept.append(n)
        if len(kept) < table.num_rows:
            skipped[f"rows_not_in_snapshot:{group}"] = table.num_rows - len(kept)
            table = table.take(pa.array(kept, type=pa.int64()))
        other_keys = tuple(c for c in table.column_names if c.startswith("snapshot"))
        blocks.append((group, rows, _numeric_columns(table, other_keys + ("host",), group, skipped)))
    n = len(keys)
    features: list[str] = []
    groups: dict[str, list[int]] = {}
    columns: list[np.ndarray] = []
    for group, rows, cols in blocks:
        idx = np.asarray(rows, dtype=np.int64)
        for name, values in cols.items():
            full = np.full(n, np.nan)
            full[idx] = values
            groups.setdefault(group, []).append(len(features))
            features.append(f"{group}.{name}")
            columns.append(full)
    ordered = sorted(keys, key=lambda k: keys[k])
    X = np.column_stack(columns) if columns else np.zeros((n, 0))
    return FeatureTable([k[0] for k in ordered], [k[1] for k in ordered], X, features, groups, None, skipped)


def _read_arff(path: Path) -> pa.Table:
    """Weka ARFF (numeric and nominal attributes) via scipy; gzip allowed."""
    import gzip
    import io

    from scipy.io import arff

    raw = gzip.open(path, "rt", encoding="utf-8").read() if path.suffix == ".gz" else path.read_text(encoding="utf-8")
    try:
        data, meta = arff.loadarff(io.StringIO(raw))
    except Exception as exc:  # scipy raises several types for malformed ARFF
        raise BadInputError(f"{path}: not a readable ARFF file: {exc}") from exc
    cols = {}
    for name in meta.names():
        values = data[name]
        if values.dtype.kind in "SO":
            cols[name] = pa.array([v.decode() if isinstance(v, bytes) else str(v) for v in values])
        else:
            cols[name] = pa.array(values.astype(np.float64))
    return pa.table(cols)


def table_group_name(path: Path) -> str:
    """A feature-group name from a file name: without format suffixes, the last dotted part.

    >>> table_group_name(Path("uk-2007-05.link_based_features.csv.train.arff.gz"))
    'link_based_features'
    """
    parts = [p for p in path.name.split(".") if p.lower() not in ("gz", "arff", "csv", "tsv", "parquet", "train")]
    return parts[-1] if parts else path.name


def read_table(path: str | Path, group: str | None = None) -> FeatureTable:
    """An external feature table (``.csv``, ``.parquet``, ``.arff``, each optionally ``.gz``):
    one row per host, identified by a ``host``/``hostid``/``id`` column (else the row number);
    an optional ``snapshot`` column; ``class``/``label`` (kept as labels) and
    ``assessmentscore``/``spamicity`` are never features.  All features form one group named
    ``group`` (default: the file name)."""
    path = Path(path)
    if not path.is_file():
        raise BadInputError(f"feature table {path} does not exist")
    suffixes = [s.lower() for s in path.suffixes]
    if ".arff" in suffixes:
        table = _read_arff(path)
    elif ".parquet" in suffixes:
        table = pq.read_table(path)
    elif ".csv" in suffixes or ".tsv" in suffixes:
        opts = pacsv.ParseOptions(delimiter="\t" if ".tsv" in suffixes else ",")
        table = pacsv.read_csv(path, parse_options=opts)
    else:
        raise BadInputError(f"{path}: unknown table format; use .csv, .tsv, .parquet or .arff (optionally .gz)")
    lower = {c.lower(): c for c in table.column_names}
    id_col = next((lower[c] for c in ID_COLUMNS if c in lower), None)
    ids = ([str(int(v)) if isinstance(v, float) and v.is_integer() else str(v) for v in table[id_col].to_pylist()]
           if id_col else [str(i) for i in range(table.num_rows)])
    snaps = [str(s) for s in table[lower["snapshot"]].to_pylist()] if "snapshot" in lower else [""] * table.num_rows
    label_col = next((lower[c] for c in ("class", "label") if c in lower), None)
    labels = None
    if label_col is not None:
        labels = [None if v is None else str(v) for v in pc.cast(table[label_col], pa.string()).to_pylist()]
    skip = tuple(c for c in table.column_names if c.lower() in (*LABEL_COLUMNS, "snapshot") or c == id_col)
    skipped: dict[str, int] = {}
    cols = _numeric_columns(table, skip, path.name, skipped)
    name = group or table_group_name(path)
    X = np.column_stack(list(cols.values())) if cols else np.zeros((table.num_rows, 0))
    return FeatureTable(snaps, ids, X, [f"{name}.{c}" for c in cols], {name: list(range(len(cols)))},
                        labels, skipped)


def add_table_transforms(table: FeatureTable, transforms: list[Callable[[dict], dict]]) -> tuple[FeatureTable, int]:
    """The table with the columns the plugins' ``spamflow_table_transforms`` derive appended to
    every group that holds their inputs (e.g. the links plugin's transformed features of a Web
    Spam Challenge link table), and how many columns were added.  Columns already present (a
    transformed table) are not added again."""
    X, features = [table.X], list(table.features)
    groups = {g: list(cols) for g, cols in table.groups.items()}
    added = 0
    for group, cols in table.groups.items():
        prefix = f"{group}."
        raw = {table.features[c][len(prefix):]: table.X[:, c] for c in cols if table.features[c].startswith(prefix)}
        for transform in transforms:
            for name, values in transform(raw).items():
                if name in raw:
                    continue
                raw[name] = values
                groups[group].append(len(features))
                features.append(prefix + name)
                X.append(np.asarray(values, dtype=np.float64)[:, None])
                added += 1
    if not added:
        return table, 0
    return FeatureTable(table.snapshot, table.host, np.hstack(X), features, groups, table.labels,
                        table.skipped), added


def merge_tables(tables: list[FeatureTable]) -> FeatureTable:
    """Outer-join feature tables on (snapshot, host); groups and features are kept apart
    (a feature name that two tables share is an error)."""
    if len(tables) == 1:
        return tables[0]
    keys: dict[tuple[str, str], int] = {}
    for t in tables:
        for key in zip(t.snapshot, t.host):
            keys.setdefault(key, len(keys))
    n = len(keys)
    features: list[str] = []
    groups: dict[str, list[int]] = {}
    blocks = []
    labels: list[str | None] = [None] * n
    skipped: dict[str, int] = {}
    for t in tables:
        idx = np.asarray([keys[k] for k in zip(t.snapshot, t.host)], dtype=np.int64)
        block = np.full((n, t.X.shape[1]), np.nan)
        block[idx] = t.X
        blocks.append(block)
        for g, cols in t.groups.items():
            if g in groups:
                raise BadInputError(f"two tables hold a feature group named {g!r}; rename a file")
            groups[g] = [len(features) + c for c in cols]
        features += t.features
        if t.labels is not None:
            for i, lab in zip(idx, t.labels):
                labels[i] = labels[i] or lab
        skipped.update(t.skipped)
    ordered = sorted(keys, key=lambda k: keys[k])
    has_labels = any(t.labels is not None for t in tables)
    return FeatureTable([k[0] for k in ordered], [k[1] for k in ordered], np.hstack(blocks), features, groups,
                        labels if has_labels else None, skipped)


def detector_host_tables(stages: dict[str, dict[str, Path]], declared: dict[str, dict[str, Any]] | None = None
                         ) -> tuple[dict[str, tuple[Path, str]], list[str]]:
    """The per-host Parquet tables of detector stages, as :func:`join_host_tables` takes them,
    and the stages that have none.

    A stage's ``declared`` per-host tables (``host_tables`` of its record, :mod:`spamflow.per_host`)
    are taken as declared: the first is the group named after the stage, each other
    ``<stage>_<output>``.  A stage that declares none (a record written before declarations)
    is read by the old rule: its ``hosts`` output, and links' ``temporal`` with ``snapshot_t1``."""
    tables: dict[str, tuple[Path, str]] = {}
    without: list[str] = []
    for stage, outputs in stages.items():
        own = (declared or {}).get(stage) or {}
        if own:
            for n, (output, spec) in enumerate(own.items()):
                tables[stage if n == 0 else f"{stage}_{output}"] = (Path(outputs[output]), spec["key"][0])
            continue
        hosts = outputs.get("hosts")
        if hosts is None or not str(hosts).endswith(".parquet"):
            without.append(stage)
            continue
        tables[stage] = (Path(hosts), "snapshot")
        temporal = outputs.get("temporal")
        if temporal is not None and str(temporal).endswith(".parquet"):
            names = pq.read_schema(temporal).names
            if "host" in names and "snapshot_t1" in names:
                tables[f"{stage}_temporal"] = (Path(temporal), "snapshot_t1")
    return tables, without


def host_ips(pages: Path) -> dict[str, list[str]]:
    """Every IP address a host was fetched from, from the parse stage's page table."""
    import pyarrow.dataset as pads

    table = pads.dataset(pages, format="parquet").to_table(columns=["host", "ip"])
    grouped = table.group_by(["host", "ip"]).aggregate([])
    out: dict[str, list[str]] = {}
    for host, ip in zip(grouped["host"].to_pylist(), grouped["ip"].to_pylist()):
        if ip:
            out.setdefault(host, []).append(ip)
    return {h: sorted(v) for h, v in out.items()}
