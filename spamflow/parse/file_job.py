"""One WARC file's share of the parse stage as a plain value, so the in-process stage and the
MapReduce job (``mr_parse``) run the very same function on it and cannot drift apart.

A :class:`FileJob` says everything the work on one file needs (where the file is, its
snapshot, which part file to write); :func:`run_file_job` does it; a :class:`FileParse` goes
back to the stage as one JSON line (:func:`result_line`), with its revisits, which the stage
resolves across files once every file is parsed.

``out_dir`` is a local folder, or under a remote workdir a URL (the parse stage's staging
prefix): the task then writes the part in its own scratch space and uploads it, so a cluster
worker never needs the driver's disk.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from spamflow.errors import BadInputError
from spamflow.inputs import RemoteInputError, local_copy
from spamflow.parse.html_depth import DEFAULT_MAX_DEPTH
from spamflow.parse.revisits import Revisit
from spamflow.parse.warc_file import FileParse, parse_warc_file
from spamflow.storage import Location

_REVISIT_DATES = tuple(f.name for f in fields(Revisit) if "datetime" in str(f.type))


def part_name(index: int) -> str:
    """The page table's part file for the ``index``-th input file (input order)."""
    return f"part-{index:05d}.parquet"


@dataclass(frozen=True)
class FileJob:
    """The parse of one input file: ``location`` (a path or URL) read as ``snapshot`` into
    ``out_dir/part-<part>.parquet``."""

    location: str
    snapshot: str
    part: int
    out_dir: str
    max_bytes: int
    strict: bool
    max_depth: int = DEFAULT_MAX_DEPTH

    @property
    def out_path(self) -> str:
        return str(Location.of(self.out_dir).join(part_name(self.part)))

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> FileJob:
        return cls(**json.loads(text))


def run_file_job(job: FileJob, progress: Callable[[int], None] | None = None) -> FileParse:
    """Parse one file into its part file (both engines call this); a part under a URL is
    written to a temporary folder first and uploaded whole (an object store has no appends:
    :meth:`~spamflow.storage.Location.writing`)."""
    with Location.of(job.out_path).writing() as out:
        return parse_location(job.location, job.snapshot, str(out), max_bytes=job.max_bytes,
                              strict=job.strict, progress=progress, max_depth=job.max_depth)


def parse_location(location: str, snapshot: str, out: str, *, max_bytes: int, strict: bool,
                   progress: Callable[[int], None] | None = None, max_depth: int = DEFAULT_MAX_DEPTH) -> FileParse:
    """``parse_warc_file`` of a local path, or of a remote file downloaded to a spool file
    beside ``out`` (deleted after); a download that fails is a counted bad input."""
    try:
        with local_copy(location, Path(out).parent / "spool") as path:
            return parse_warc_file(path, snapshot, out, max_bytes=max_bytes, strict=strict,
                                   progress=progress, name=location, max_depth=max_depth)
    except RemoteInputError as exc:
        reason = f"cannot download: {exc}"
        if strict:
            raise BadInputError(f"{location} at offset 0: download: {reason} (drop --strict to count and go on)") \
                from None
        result = FileParse(location)
        result.counts["bad_download"] += 1
        result.bad_records.append({"file": location, "offset": 0, "kind": "download", "reason": reason})
        return result


def result_line(part: int, result: FileParse) -> str:
    """One file's outcome as a JSON line: counts, bad records and revisits, each in the order
    the file gave them (so the stage's counts and ``bad_records.jsonl`` read the same)."""
    return json.dumps({"part": part, "file": result.file, "counts": dict(result.counts),
                       "bad_records": result.bad_records,
                       "revisits": [_revisit_dict(r) for r in result.revisits]})


def error_line(part: int, file: str, message: str) -> str:
    """A file that stopped at a bad record under ``--strict``, with the error's message."""
    return json.dumps({"part": part, "file": file, "error": message})


def read_result_line(text: str) -> tuple[int, FileParse | str]:
    """``(part, FileParse)`` from :func:`result_line`, or ``(part, message)`` from :func:`error_line`."""
    data = json.loads(text)
    if "error" in data:
        return int(data["part"]), str(data["error"])
    result = FileParse(data["file"], counts=Counter(data["counts"]), bad_records=data["bad_records"],
                       revisits=[_revisit_from(r) for r in data["revisits"]])
    return int(data["part"]), result


def _revisit_dict(revisit: Revisit) -> dict[str, Any]:
    data = asdict(revisit)
    for name in _REVISIT_DATES:
        if data[name] is not None:
            data[name] = data[name].isoformat()
    return data


def _revisit_from(data: dict[str, Any]) -> Revisit:
    values = dict(data)
    for name in _REVISIT_DATES:
        if values[name] is not None:
            values[name] = datetime.fromisoformat(values[name])
    return Revisit(**values)
