"""The per-host table: a detector's promise of one row per (snapshot, host) with numeric features.

A detector declares the tables it writes (``Stage.host_tables``): the output name, the key
columns, and each feature column with a description and whether it is evidence (a value above
zero says the detector fired on the host).  The stage runner checks the promise when the stage
publishes (:func:`check_host_tables`) and writes the declaration into ``stage.json`` and run.json
(``host_tables``), so the classifier joins, and the report shows, any detector's table by its
declaration, knowing no detector by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from spamflow.errors import SpamflowError

HOST_KEY = ("snapshot", "host")
"""The key of a per-host table: the snapshot label and the host name, both non-null strings."""


def host_schema(*features: pa.Field) -> pa.Schema:
    """The schema of a per-host table: the key columns, then ``features``."""
    return pa.schema([pa.field("snapshot", pa.string(), nullable=False), pa.field("host", pa.string(), nullable=False),
                      *features])


@dataclass(frozen=True)
class HostFeature:
    name: str
    description: str
    evidence: bool = False
    """A value above ``above`` means the detector fired on the host (the report's "fired" column)."""
    above: float = 0.0


@dataclass(frozen=True)
class PerHostTable:
    """One per-host Parquet output of a stage.

    ``features`` are the columns the detector documents; every other numeric column of the table
    is a feature too (a detector whose columns depend on its parameters declares none).
    ``snapshot_column`` names the snapshot key (a table about the change up to a snapshot uses
    ``snapshot_t1``; such a table only adds columns to hosts of a snapshot table).  ``optional``: the
    stage writes it only for some parameters."""

    output: str = "hosts"
    features: tuple[HostFeature, ...] = ()
    snapshot_column: str = "snapshot"
    optional: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return (self.snapshot_column, "host")

    def to_json(self) -> dict[str, Any]:
        return {"key": list(self.key),
                "features": {f.name: {"description": f.description, "evidence": f.evidence}
                             | ({"above": f.above} if f.evidence else {}) for f in self.features}}


def check_host_tables(stage: str, tables: tuple[PerHostTable, ...], outdir: Path,
                      outputs: dict[str, str]) -> dict[str, Any]:
    """Check each declared table the stage wrote (Parquet, key columns non-null strings, each
    declared feature numeric); return the declaration for ``stage.json`` (``{output: {key,
    features}}``).  A broken promise is an error naming the stage, the file and the column."""
    import pyarrow.parquet as pq

    declared: dict[str, Any] = {}
    for table in tables:
        if table.output not in outputs:
            if table.optional:
                continue
            raise SpamflowError(f"stage {stage!r} declares a per-host table {table.output!r} but wrote no such output "
                                f"(it wrote {sorted(outputs)})")
        path = outdir / outputs[table.output]
        try:
            schema = pq.read_schema(path)
        except (OSError, pa.ArrowException) as exc:
            raise SpamflowError(f"stage {stage!r}: per-host table {table.output!r} ({path.name}) is not a readable "
                                f"Parquet file: {exc}") from None
        for column in table.key:
            if column not in schema.names or not pa.types.is_string(schema.field(column).type):
                raise SpamflowError(f"stage {stage!r}: per-host table {table.output!r} ({path.name}) needs a string "
                                    f"column {column!r} (it has {schema.names})")
        for feature in table.features:
            kind = schema.field(feature.name).type if feature.name in schema.names else None
            if kind is None or not (pa.types.is_integer(kind) or pa.types.is_floating(kind)
                                    or pa.types.is_boolean(kind)):
                raise SpamflowError(f"stage {stage!r}: per-host table {table.output!r} ({path.name}) declares the "
                                    f"feature {feature.name!r}, which is not a numeric column of it "
                                    f"({kind or 'missing'})")
        keys = pq.read_table(path, columns=list(table.key))
        for column in table.key:
            if keys[column].null_count:
                raise SpamflowError(f"stage {stage!r}: per-host table {table.output!r} ({path.name}) has "
                                    f"{keys[column].null_count} null {column!r} values")
        declared[table.output] = table.to_json()
    return declared
