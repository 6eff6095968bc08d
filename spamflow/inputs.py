"""Input WARC files where users keep them: local paths, ``s3://`` and ``http(s)://`` URLs,
and Common Crawl paths files (``warc.paths.gz``: one path per line, relative to a base URL).

Where a file is and how it is read is :class:`spamflow.storage.Location`'s (fsspec for remote
objects: ``http`` via aiohttp, ``s3`` via s3fs, with the server's own identity of each object:
ETag, Last-Modified, size; pyarrow.fs was the other candidate but has no HTTP filesystem).
S3 settings come from the usual AWS variables (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ...).
This module keeps what is about *inputs*: paths files, and how much of a file ingest reads.

The WARC readers need a seekable local file (resynchronisation, record offsets), so each
remote file is downloaded to a spool file in the stage's work folder and deleted after
(:meth:`~spamflow.storage.Location.local_copy`).
"""

from __future__ import annotations

import gzip
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from spamflow.storage import (
    HEAD_WORKERS,
    Location,
    RemoteInputError,
    remote_identities,
    remote_identity,
    url_under,
)

__all__ = ["FIRST_HEAD_BYTES", "HEAD_BYTES", "HEAD_WORKERS", "RemoteInputError", "archive_kind", "folder_archives",
           "is_paths_file", "kind_from_head", "local_copy", "read_paths_file", "remote_identities",
           "remote_identity"]


def is_paths_file(location: str) -> bool:
    """A Common Crawl style list of WARC paths (``*.paths`` or ``*.paths.gz``)."""
    return location.endswith((".paths", ".paths.gz"))


def read_paths_file(location: str, base_url: str | None) -> list[str]:
    """The WARC locations a paths file lists: each non-empty line joined to ``base_url``
    (a line that is already a URL is kept as it is)."""
    raw = Location.of(location).read_input_bytes()
    try:
        text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    except Exception as exc:  # noqa: BLE001
        raise RemoteInputError(f"{location}: {type(exc).__name__}: {exc}") from exc
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        url = url_under(base_url, line)
        if url is None:
            raise RemoteInputError(f"{location}: relative path {line!r} and no input.base_url to join it to")
        out.append(url)
    return out


FIRST_HEAD_BYTES = 1 << 16
"""How much of a remote file ingest reads first to find its first WARC-Date."""
HEAD_BYTES = 1 << 20
"""How much it reads next, when the first head does not settle it."""


@contextmanager
def local_copy(location: str, spool_dir: Path) -> Iterator[Path]:
    """A local path to read ``location`` from: itself if local, else a spool file in
    ``spool_dir`` holding the downloaded object, deleted on exit."""
    with Location.of(location).local_copy(spool_dir) as path:
        yield path


ARCHIVE_SUFFIXES = {".warc.gz": "WARC (gzip)", ".warc": "WARC", ".arc.gz": "ARC (gzip)", ".arc": "ARC"}
"""The usual names of the files the parser reads, and what each is (``.warc`` before ``.arc``:
every ``.warc`` name also ends in ``arc``)."""
SNIFF_BYTES = 4096
"""How much of a file with another name is read to tell what it is."""


def kind_from_head(head: bytes) -> str | None:
    """What a file starting with ``head`` is, as the parser tells it (a WARC or ARC header
    line, gzipped or not: ``spamflow.parse.warc_records``), None if neither."""
    from spamflow.parse.arc_records import starts_like_arc

    gz = head[:2] == b"\x1f\x8b"
    if gz:
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, SNIFF_BYTES)
        except zlib.error:
            return None
    suffix = " (gzip)" if gz else ""
    if head.startswith(b"WARC/"):
        return "WARC" + suffix
    if starts_like_arc(head):
        return "ARC" + suffix
    return None


def archive_kind(location: Location) -> str | None:
    """What an input file is: by its name when it has one of the usual suffixes (no read),
    else by its first bytes (:func:`kind_from_head`); None for anything else."""
    name = location.name.lower()
    for suffix, kind in ARCHIVE_SUFFIXES.items():
        if name.endswith(suffix):
            return kind
    return kind_from_head(location.head_bytes(SNIFF_BYTES))


def folder_archives(folder: Location) -> tuple[list[Location], Counter[str]]:
    """Every WARC and ARC file under ``folder`` (any depth, local or remote), sorted, and how
    many of each kind were found, with the other files counted as ``other`` (left out)."""
    found: list[Location] = []
    kinds: Counter[str] = Counter()
    for location in folder.find():
        kind = archive_kind(location)
        kinds[kind or "other"] += 1
        if kind is not None:
            found.append(location)
    return found, kinds


def kinds_line(kinds: Counter[str]) -> str:
    """``5 WARC (gzip), 2 ARC (gzip), 1 other``: the kinds most common first (ties by name),
    other files last."""
    shown = sorted(((n, k) for k, n in kinds.items() if k != "other"), key=lambda nk: (-nk[0], nk[1]))
    parts = [f"{n} {k}" for n, k in shown] + ([f"{kinds['other']} other (left out)"] if kinds.get("other") else [])
    return ", ".join(parts) or "nothing"
