"""Stage ``ingest``: check the input WARC files and give each its snapshot label.

A file's snapshot is the label the config gives it, else the month (``YYYY-MM``) of its
first readable WARC-Date (ClueWeb09's malformed dates repaired), or ``undated`` (reported)
when its first records have none.  A file that is not WARC at all is reported (or, with
``--strict``, an error) rather than handed to the parser.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from spamflow.detector import DetectorParams, Stage, StageContext, StageResult
from spamflow.errors import BadInputError, plain_reason
from spamflow.inputs import FIRST_HEAD_BYTES, HEAD_BYTES, HEAD_WORKERS, RemoteInputError
from spamflow.parse.derived_files import DerivedFile, derived_file
from spamflow.parse.warc_records import BadRecord, iter_records, warc_date
from spamflow.storage import Location


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
        files = list(params.files)
        if params.from_demo or params.from_crawl:
            warc_dir = ctx.inputs["demo" if params.from_demo else "crawl"]["warc"]
            # a file of a remote workdir's local cache by its URL, the input's own location: the
            # page table's warc_file must name a file every machine can read (issue 42 item 3)
            files = [WarcFile(path=str(Location.of(p).published()), bytes=p.stat().st_size, mtime_ns=0,
                              snapshot=p.parent.name) for p in sorted(warc_dir.glob("*/*.warc.gz"))]
        rows: list[dict[str, str | int]] = []
        bad: list[dict[str, object]] = []
        for f, (snapshot, derived) in zip(files, _snapshots(files, ctx.outdir / "spool")):
            if isinstance(snapshot, RemoteInputError):
                _report(bad, f.path, "download", f"cannot download: {snapshot}", ctx.settings.strict)
                continue
            if derived is not None:
                _report(bad, f.path, derived.kind.lower(), derived.reason(), ctx.settings.strict)
                continue
            if snapshot is None:
                _report(bad, f.path, "not_warc", "no readable WARC record with a WARC-Date at its start",
                        ctx.settings.strict)
                continue
            if snapshot == UNDATED:
                _report(bad, f.path, "undated",
                        f"none of the first {DATED_WITHIN} WARC records has a readable WARC-Date; "
                        f"snapshot '{UNDATED}' (give the file a snapshot label in the config)", ctx.settings.strict)
            rows.append({"path": f.path, "snapshot": snapshot, "bytes": f.bytes})  # as planned: its identity
        if (ctx.outdir / "spool").exists():
            (ctx.outdir / "spool").rmdir()
        with open(ctx.outdir / "warcs.jsonl", "w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row) + "\n")
        snapshots = {str(r["snapshot"]) for r in rows}
        counts = {"files": len(rows), "bytes": sum(int(r["bytes"]) for r in rows), "snapshots": len(snapshots),
                  "bad_not_warc": sum(b["kind"] == "not_warc" for b in bad)}
        for kind in ("undated", "download", "wet", "wat"):
            n = sum(b["kind"] == kind for b in bad)
            if n:
                counts[f"bad_{kind}"] = n
        if not rows and any(b["kind"] in ("wet", "wat") for b in bad):
            raise BadInputError("no WARC file of captures to parse: " + "; ".join(
                f"{b['file']} is {b['reason']}" for b in bad if b["kind"] in ("wet", "wat")))
        return StageResult(
            outputs={"warcs": "warcs.jsonl"},
            counts=counts,
            bad_records=bad,
        )


Start = tuple[str | None | RemoteInputError, DerivedFile | None]


def _snapshots(files: list[WarcFile], spool_dir: Path) -> list[Start]:
    """Each file's snapshot (its label, or from its first records), or why it could not be
    read, and whether it is a WET or WAT file (a file on this machine always, a remote one
    when its head is read for its snapshot); unlabelled files are read ``HEAD_WORKERS`` at a
    time (one after another, the ~90,000 remote files of a Common Crawl paths file took hours)."""
    def one(f: WarcFile) -> Start:
        try:
            if f.error:
                raise RemoteInputError(f.error)
            return _snapshot_of(f, spool_dir)
        except RemoteInputError as exc:
            return exc, None

    if sum(1 for f in files if not f.snapshot and not f.error) < 2:
        return [one(f) for f in files]
    with ThreadPoolExecutor(HEAD_WORKERS) as pool:
        return list(pool.map(one, files))


def _snapshot_of(f: WarcFile, spool_dir: Path) -> Start:
    """The snapshot of a file (its label, or from its first records) and whether it is a WET
    or WAT file.  A labelled file is read only when it is on this machine; an unlabelled one's
    first 64 KiB are read first (a warcinfo or first response record, with its date, is much
    shorter), then its first MiB, and all of it only when that does not settle it (a first
    record longer than the head, or no date in it)."""
    location = Location.of(f.path)
    if f.snapshot:
        here = location.on_this_machine()
        return f.snapshot, (None if here is None else derived_file(here))
    for nbytes in (FIRST_HEAD_BYTES, HEAD_BYTES):
        with location.head_copy(spool_dir, nbytes) as (head, whole):
            snapshot, derived = first_record_snapshot(head), derived_file(head, name=f.path)
        if snapshot not in (None, UNDATED) or whole or f.bytes <= nbytes:
            return snapshot, derived
    with location.local_copy(spool_dir) as copy:
        return first_record_snapshot(copy), derived_file(copy, name=f.path)


def _report(bad: list[dict[str, object]], location: str, kind: str, reason: str, strict: bool) -> None:
    """A bad input file: an error under ``--strict``, else a counted ``bad_<kind>`` record."""
    reason = plain_reason(reason)
    if strict:
        raise BadInputError(f"{location} at offset 0: {reason}")
    bad.append({"file": location, "offset": 0, "kind": kind, "reason": reason})


def read_warc_list(path: Path) -> list[dict[str, object]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
