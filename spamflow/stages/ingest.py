"""Stage ``ingest``: check the input WARC files and give each its snapshot label.

A file's snapshot is the label the config gives it, else the month (``YYYY-MM``) of its
first readable WARC-Date (ClueWeb09's malformed dates repaired), or ``undated`` (reported)
when its first records have none.  A file that is not WARC at all is reported (or, with
``--strict``, an error) rather than handed to the parser.
"""

from __future__ import annotations

import json
from pathlib import Path

from spamflow.detector import DetectorParams, Stage, StageContext, StageResult
from spamflow.errors import BadInputError
from spamflow.inputs import RemoteInputError, is_remote, local_copy
from spamflow.parse.warc_records import BadRecord, iter_records, warc_date


class WarcFile(DetectorParams):
    path: str
    """A local path, or an ``s3://`` / ``http(s)://`` URL (``spamflow.inputs``)."""
    bytes: int
    mtime_ns: int
    snapshot: str | None = None
    etag: str | None = None
    """Remote objects: the server's ETag and Last-Modified are part of the identity."""
    last_modified: str | None = None
    error: str | None = None
    """Why the server could not describe a remote object: a counted bad input."""


class IngestParams(DetectorParams):
    files: tuple[WarcFile, ...] = ()
    """The input files with size and mtime, so that a changed file makes a new ingest."""
    from_demo: bool = False
    """Take the files written by the ``demo`` stage (one folder per snapshot)."""
    from_crawl: bool = False
    """Take the files written by the ``crawl`` stage (one folder per snapshot)."""


UNDATED = "undated"
"""The snapshot of a WARC file none of whose first records has a readable WARC-Date."""
DATED_WITHIN = 10
"""How many records into a file ingest looks for a readable WARC-Date."""


def first_record_snapshot(path: Path) -> str | None:
    """``YYYY-MM`` of the first readable WARC-Date among the file's first records
    (ClueWeb09's day-of-year dates are repaired: ``spamflow.parse.warc_dates``); ``UNDATED`` if
    the file starts with WARC records but none of them has one; None if it does not start
    with a readable WARC record (not a WARC file)."""
    seen = 0
    for item in iter_records(path):
        if isinstance(item, BadRecord) or seen >= DATED_WITHIN:
            break
        seen += 1
        date = warc_date(item.header("WARC-Date"))
        if date is not None:
            return date.strftime("%Y-%m")
    return UNDATED if seen else None


class IngestStage(Stage):
    name = "ingest"
    version = "2"  # 2: ClueWeb09 dates repaired, undated files kept
    description = "List the input WARC files with their snapshot labels."
    Params = IngestParams
    requires = ()

    def run(self, ctx: StageContext) -> StageResult:
        params = ctx.params
        assert isinstance(params, IngestParams)
        files: list[tuple[Path, str | None]] = [(Path(f.path), f.snapshot) for f in params.files
                                                 if not is_remote(f.path)]
        remote = [f for f in params.files if is_remote(f.path)]
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
            if snapshot == UNDATED:
                reason = (f"none of the first {DATED_WITHIN} WARC records has a readable WARC-Date; "
                          f"snapshot '{UNDATED}' (give the file a snapshot label in the config)")
                if ctx.settings.strict:
                    raise BadInputError(f"{path} at offset 0: {reason}")
                bad.append({"file": str(path), "offset": 0, "kind": "undated", "reason": reason})
            size = path.stat().st_size
            total += size
            rows.append({"path": str(path), "snapshot": snapshot, "bytes": size})
        for f in remote:
            try:
                if f.error:
                    raise RemoteInputError(f.error)
                with local_copy(f.path, ctx.outdir / "spool") as spooled:
                    snapshot = f.snapshot or first_record_snapshot(spooled)
            except RemoteInputError as exc:
                reason = f"cannot download: {exc}"
                if ctx.settings.strict:
                    raise BadInputError(f"{f.path} at offset 0: {reason}") from None
                bad.append({"file": f.path, "offset": 0, "kind": "download", "reason": reason})
                continue
            if snapshot is None or snapshot == UNDATED:
                kind = "not_warc" if snapshot is None else "undated"
                reason = ("no readable WARC record with a WARC-Date at its start" if snapshot is None else
                          f"none of the first {DATED_WITHIN} WARC records has a readable WARC-Date")
                if ctx.settings.strict:
                    raise BadInputError(f"{f.path} at offset 0: {reason}")
                bad.append({"file": f.path, "offset": 0, "kind": kind, "reason": reason})
                if snapshot is None:
                    continue
            total += f.bytes
            rows.append({"path": f.path, "snapshot": snapshot, "bytes": f.bytes})
        if (ctx.outdir / "spool").exists():
            (ctx.outdir / "spool").rmdir()
        with open(ctx.outdir / "warcs.jsonl", "w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row) + "\n")
        snapshots = {str(r["snapshot"]) for r in rows}
        counts = {"files": len(rows), "bytes": total, "snapshots": len(snapshots),
                  "bad_not_warc": sum(b["kind"] == "not_warc" for b in bad)}
        for kind in ("undated", "download"):
            n = sum(b["kind"] == kind for b in bad)
            if n:
                counts[f"bad_{kind}"] = n
        return StageResult(
            outputs={"warcs": "warcs.jsonl"},
            counts=counts,
            bad_records=bad,
        )


def read_warc_list(path: Path) -> list[dict[str, object]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
