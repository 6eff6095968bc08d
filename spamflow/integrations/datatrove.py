"""A datatrove filter that keeps or drops documents by their host's spam score, read from a
``spamflow export`` (Parquet or JSONL; docs/pipelines.md).  Install with ``pip install
spamflow[datatrove]``; in a pipeline: ``SpamflowHostFilter("export/", threshold=0.5)``.

A document's host is the host of ``doc.metadata["url"]`` (datatrove's WarcReader sets it), or
with ``by="record_id"`` its id is looked up among the export's URL rows (the WARC-Record-ID,
which is WarcReader's document id)."""

from __future__ import annotations

import json
from typing import Any, Literal

from datatrove.data import Document
from datatrove.pipeline.filters.base_filter import BaseFilter
from datatrove.pipeline.writers.disk_base import DiskWriter

from spamflow.domains import host_of

SUPPORTED_SCHEMA = 1


def _rows(export: str, name: str, columns: list[str]) -> list[dict[str, Any]]:
    """The ``name`` rows (hosts or urls) of the export folder ``export`` (a path or a URL),
    Parquet if it has them else JSONL, with ``columns`` only.  Another schema version is refused."""
    import pyarrow.parquet as pq

    from spamflow.errors import SpamflowError
    from spamflow.storage import StorageError, join, open_input

    with open_input(join(export, "export.json")) as fh:
        description = json.load(fh)
    if description.get("schema_version") != SUPPORTED_SCHEMA:
        raise SpamflowError(f"{join(export, 'export.json')}: schema version {description.get('schema_version')!r}; "
                            f"this filter reads version {SUPPORTED_SCHEMA}")
    fmt = description.get("format")
    if fmt not in ("parquet", "jsonl"):
        raise SpamflowError(f"{export}: a {fmt!r} export; the filter reads a parquet or jsonl one")
    try:
        with open_input(join(export, f"{name}.{fmt}")) as fh:
            if fmt == "parquet":
                return pq.read_table(fh, columns=columns).to_pylist()
            lines = fh.read().splitlines()  # open_input may give a pyarrow file, which iterates no lines
            return [{k: row.get(k) for k in columns} for row in map(json.loads, filter(None, lines)) if row]
    except (OSError, StorageError) as exc:
        raise SpamflowError(f"{join(export, f'{name}.{fmt}')}: cannot read the export's {name}: {exc}") from exc


def latest_scores(rows: list[dict[str, Any]], key: str, snapshot: str | None) -> dict[str, tuple[float, str]]:
    """``key`` -> (score, label): of ``snapshot``, else of the latest snapshot that scored it."""
    best: dict[str, tuple[str, float, str]] = {}
    for row in rows:
        if row["score"] is None or (snapshot is not None and row["snapshot"] != snapshot):
            continue
        name = row[key]
        if name not in best or row["snapshot"] > best[name][0]:
            best[name] = (row["snapshot"], float(row["score"]), str(row["label"]))
    return {name: (score, label) for name, (_, score, label) in best.items()}


class SpamflowHostFilter(BaseFilter):
    """Drops a document whose host spamflow scored as spam: its score at or above
    ``threshold``, or (``threshold=None``) the classifier's own label ``spam``.  A host the export
    does not score is kept (``unknown="drop"`` drops it).  With ``annotate=True`` every document
    kept gets ``doc.metadata["spamflow_host_score"]``: the score, NaN where the host is unscored
    (always a float, so that a Parquet writer sees one type).  The export is read on the first
    document, in the worker, not when the pipeline is built and pickled."""

    name = "🥫 spamflow host score"

    def __init__(self, export: str, threshold: float | None = None, *, snapshot: str | None = None,
                 by: Literal["host", "record_id"] = "host", unknown: Literal["keep", "drop"] = "keep",
                 annotate: bool = False, exclusion_writer: DiskWriter | None = None) -> None:
        super().__init__(exclusion_writer)
        if by not in ("host", "record_id"):
            raise ValueError(f"by: 'host' or 'record_id', not {by!r}")
        if unknown not in ("keep", "drop"):
            raise ValueError(f"unknown: 'keep' or 'drop', not {unknown!r}")
        self.export, self.threshold, self.snapshot, self.by, self.unknown = export, threshold, snapshot, by, unknown
        self.annotate = annotate
        self._scores: dict[str, tuple[float, str]] | None = None

    def scores(self) -> dict[str, tuple[float, str]]:
        if self._scores is None:
            name, key = ("hosts", "host") if self.by == "host" else ("urls", "record_id")
            self._scores = latest_scores(_rows(self.export, name, ["snapshot", key, "score", "label"]), key,
                                         self.snapshot)
        return self._scores

    def filter(self, doc: Document) -> bool | tuple[bool, str]:
        key = host_of(str(doc.metadata.get("url") or "")) if self.by == "host" else doc.id
        verdict = self.scores().get(key)
        if verdict is None:
            self.stat_update("spamflow_unscored")
            if self.unknown == "drop":
                return False, "spamflow_unscored"
            if self.annotate:
                doc.metadata["spamflow_host_score"] = float("nan")
            return True
        score, label = verdict
        spam = label == "spam" if self.threshold is None else score >= self.threshold
        if spam:
            return False, "spamflow_spam"
        if self.annotate:
            doc.metadata["spamflow_host_score"] = score
        return True
