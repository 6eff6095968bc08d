"""Writing an export's rows: Parquet and JSONL files of host and URL rows, and dolma attribute
files (one per WARC file the run read, one line per parsed page, in the file's record order)."""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa

from spamflow.atomic import atomic_path, write_text_atomic
from spamflow.export.rows import HostRows, describe, dumps

FORMATS = ("parquet", "jsonl", "dolma")
DOLMA_PREFIX = "spamflow"
"""dolma names attributes ``<experiment>__<tagger>__<attribute>``: ours are ``spamflow__host__score``,
``spamflow__host__spam``, ``spamflow__host__fired`` and ``spamflow__<stage>__<column>``."""


def write_parquet(hosts: HostRows, urls: Iterable[pa.Table] | None, out: Path) -> dict[str, int]:
    """``hosts.parquet`` and ``urls.parquet`` (none without a page table: ``urls`` None)."""
    import pyarrow.parquet as pq

    with atomic_path(out / "hosts.parquet") as tmp:
        pq.write_table(hosts.table, tmp)
    if urls is None:
        return {"hosts": hosts.table.num_rows}
    count = 0
    with atomic_path(out / "urls.parquet") as tmp:
        writer = None
        for batch in urls:
            if writer is None:
                writer = pq.ParquetWriter(tmp, batch.schema)
            writer.write_table(batch)
            count += batch.num_rows
        if writer is None:  # an empty page table
            pq.write_table(hosts.table.schema.empty_table(), tmp)
        else:
            writer.close()
    return {"hosts": hosts.table.num_rows, "urls": count}


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN or infinity
    return value


def _lines(table: pa.Table) -> Iterable[str]:
    for row in table.to_pylist():
        yield dumps({k: _jsonable(v) for k, v in row.items()}) + "\n"


def write_jsonl(hosts: HostRows, urls: Iterable[pa.Table] | None, out: Path) -> dict[str, int]:
    """``hosts.jsonl`` and ``urls.jsonl`` (none without a page table: ``urls`` None)."""
    with atomic_path(out / "hosts.jsonl") as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.writelines(_lines(hosts.table))
    if urls is None:
        return {"hosts": hosts.table.num_rows}
    count = 0
    with atomic_path(out / "urls.jsonl") as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for batch in urls:
            fh.writelines(_lines(batch))
            count += batch.num_rows
    return {"hosts": hosts.table.num_rows, "urls": count}


SCORE, SPAM, FIRED = (f"{DOLMA_PREFIX}__host__{name}" for name in ("score", "spam", "fired"))


def dolma_attributes(row: dict[str, Any], stage_columns: list[str],
                     names: list[str] | None = None) -> dict[str, list[list[float]]]:
    """One page's dolma attributes: each a single span ``[0, html_bytes, value]`` covering the
    whole document (the verdicts are about its host); a value that is null is left out.
    ``names``: the attribute name of each of ``stage_columns`` (made here if not given)."""
    end = int(row.get("html_bytes") or 0)
    out: dict[str, list[list[float]]] = {}
    score, label = row.get("score"), row.get("label")
    if score is not None and math.isfinite(score):
        out[SCORE] = [[0, end, float(score)]]
    if label is not None:
        out[SPAM] = [[0, end, 1.0 if label == "spam" else 0.0]]
    out[FIRED] = [[0, end, float(len(row.get("fired") or ()))]]
    for column, name in zip(stage_columns, names or [f"{DOLMA_PREFIX}__{c}" for c in stage_columns]):
        value = row.get(column)
        if value is not None and math.isfinite(value):
            out[name] = [[0, end, float(value)]]
    return out


def _dolma_name(warc_file: str, snapshot: str, taken: set[str]) -> str:
    base = warc_file.replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".gz", ".warc", ".arc"):
        base = base.removesuffix(suffix)
    name, n = f"{snapshot}/{base}.jsonl.gz", 1
    while name in taken:
        n += 1
        name = f"{snapshot}/{base}-{n}.jsonl.gz"
    taken.add(name)
    return name


def write_dolma(hosts: HostRows, urls: Iterable[pa.Table], out: Path, id_field: str = "record_id") -> dict[str, int]:
    """``out/attributes/spamflow/<snapshot>/<warc name>.jsonl.gz``: dolma's layout, one file per
    WARC file, its lines in record order, ``{"id", "attributes"}``.  Holds the lines of the run
    in memory until the end (a few hundred bytes per page)."""
    stage_columns = [n for n in hosts.table.schema.names if "__" in n]
    names = [f"{DOLMA_PREFIX}__{c}" for c in stage_columns]
    files: dict[str, list[tuple[int, str]]] = {}
    snapshots: dict[str, str] = {}
    for batch in urls:
        for row in batch.to_pylist():
            line = dumps({"id": row[id_field], "attributes": dolma_attributes(row, stage_columns, names)})
            files.setdefault(row["warc_file"], []).append((int(row["warc_offset"]), line))
            snapshots.setdefault(row["warc_file"], row["snapshot"])
    root = out / "attributes" / DOLMA_PREFIX
    taken: set[str] = set()
    index = {}
    for warc_file in sorted(files):
        name = _dolma_name(warc_file, snapshots[warc_file], taken)
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as tmp, gzip.open(tmp, "wt", encoding="utf-8") as fh:
            fh.writelines(line + "\n" for _, line in sorted(files[warc_file], key=lambda item: item[0]))
        index[warc_file] = str(target.relative_to(out))
    write_text_atomic(root / "files.json", json.dumps(index, indent=1))
    return {"dolma_files": len(files), "urls": sum(len(v) for v in files.values())}


def write_description(hosts: HostRows, out: Path, fmt: str, counts: dict[str, int], extra: dict[str, Any]) -> Path:
    path = out / "export.json"
    write_text_atomic(path, json.dumps({**describe(hosts), "format": fmt, "counts": counts, **extra}, indent=1))
    return path
