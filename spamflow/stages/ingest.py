"""Stage ``ingest``: check the input WARC files and give each its snapshot label.

A file's snapshot is the label the config gives it, else the month (``YYYY-MM``) of its
first record's WARC-Date.  A file that is not WARC at all is reported (or, with
``--strict``, an error) rather than handed to the parser.
"""

from __future__ import annotations

import json
from pathlib import Path

from spamflow.detector import DetectorParams, Stage, StageContext, StageResult
from spamflow.errors import BadInputError
from spamflow.warc_records import BadRecord, iter_records, warc_date


class WarcFile(DetectorParams):
    path: str
    bytes: int
    mtime_ns: int
    snapshot: str | None = None


class IngestParams(DetectorParams):
    files: tuple[WarcFile, ...] = ()
    """The input files with size and mtime, so that a changed file makes a new ingest."""
    from_demo: bool = False
    """Take the files written by the ``demo`` stage (one folder per snapshot)."""
    from_crawl: bool = False
    """Take the files written by the ``crawl`` stage (one folder per snapshot)."""


def first_record_snapshot(path: Path) -> str | None:
    """``YYYY-MM`` of the first record's WARC-Date, None if the file has no readable record."""
    for item in iter_records(path):
        if isinstance(item, BadRecord):
            return None
        date = warc_date(item.header("WARC-Date"))
        return date.strftime("%Y-%m") if date else None
    return None


class IngestStage(Stage):
    name = "ingest"
    version = "1"
    description = "List the input WARC files with their snapshot labels."
    Params = IngestParams
    requires = ()

    def run(self, ctx: StageContext) -> StageResult:
        params = ctx.params
        assert isinstance(params, IngestParams)
        files: list[tuple[Path, str | None]] = [(Path(f.path), f.snapshot) for f in params.files]
        if params.from_demo:
            warc_dir = ctx.inputs["demo"]["warc"]
            files = [(p, p.parent.name) for p in sorted(warc_dir.glob("*/*.warc.gz"))]
        if params.from_crawl:
            warc_dir = ctx.inputs["crawl"]["warc"]
            files = [(p, p.parent.name) for p in sorted(warc_dir.glob("*/*.warc.gz"))]
        rows: list[dict[str, str | int]] = []
        bad: list[dict[str, object]] = []
        total = 0
        for path, label in files:
            snapshot = label or first_record_snapshot(path)
            if snapshot is None:
                reason = "no readable WARC record with a WARC-Date at its start"
                if ctx.settings.strict:
                    raise BadInputError(f"{path} at offset 0: {reason}")
                bad.append({"file": str(path), "offset": 0, "kind": "not_warc", "reason": reason})
                continue
            size = path.stat().st_size
            total += size
            rows.append({"path": str(path), "snapshot": snapshot, "bytes": size})
        with open(ctx.outdir / "warcs.jsonl", "w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row) + "\n")
        snapshots = {str(r["snapshot"]) for r in rows}
        return StageResult(
            outputs={"warcs": "warcs.jsonl"},
            counts={"files": len(rows), "bytes": total, "snapshots": len(snapshots), "bad_not_warc": len(bad)},
            bad_records=bad,
        )


def read_warc_list(path: Path) -> list[dict[str, object]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
