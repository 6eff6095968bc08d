"""Reading WARC files record by record without losing the run to one bad record.

warcio does the reading.  When a record cannot be read (corrupt gzip member, broken
headers, a file cut short), the failure is reported as a :class:`BadRecord` naming the file
and offset, and reading resumes at the next place a record starts: the next gzip member
for ``.gz`` files, the next ``WARC/1.`` line otherwise.  A record whose Content-Length
does not match where it ends (``spamflow.warc_lengths``) comes with ``length_problem`` set,
its body cut at its real end, and reading resumes at the next record.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from warcio.recordloader import ArcWarcRecord

from spamflow.warc_lengths import LengthProblem, QuietArchiveIterator, RecordEnds

_GZIP_MAGIC = b"\x1f\x8b\x08"
_WARC_MAGIC = b"WARC/1."
_SCAN_CHUNK = 1 << 20


@dataclass(frozen=True)
class BadRecord:
    """A place in a WARC file that could not be read or used."""

    file: str
    offset: int
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "offset": self.offset, "reason": self.reason}


@dataclass
class WarcRecord:
    """One record, its offset in the file, and its HTTP payload if it was asked for."""

    file: str
    offset: int
    record: ArcWarcRecord
    payload: bytes | None = None
    capped: bool = False  # the payload was longer than the cap and was cut there
    cut_short: bool = False  # the body read stops before its end: the file ended, or Content-Length is too short
    length_problem: str | None = None  # Content-Length does not match where the record ends: why

    @property
    def rec_type(self) -> str:
        return self.record.rec_type or ""

    def header(self, name: str) -> str | None:
        return self.record.rec_headers.get_header(name)

    def http_header(self, name: str) -> str | None:
        return self.record.http_headers.get_header(name) if self.record.http_headers else None

    def _read_payload(self, max_bytes: int) -> None:
        stream = self.record.content_stream()
        body = stream.read(max_bytes + 1)
        self.capped = len(body) > max_bytes
        self.payload = body[:max_bytes]
        while self.capped and stream.read(1 << 16):
            pass
        self.cut_short = getattr(self.record.raw_stream, "limit", 0) > 0  # no limit: no Content-Length


def warc_date(value: str | None) -> datetime | None:
    """Parse a WARC-Date (ISO 8601, 'Z' or offset, optional fraction) to aware UTC."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _next_start(fh: BinaryIO, after: int, gz: bool) -> int | None:
    """The offset of the next possible record start strictly after ``after``."""
    magic = _GZIP_MAGIC if gz else b"\n" + _WARC_MAGIC
    pos = after + 1
    while True:
        fh.seek(pos)
        chunk = fh.read(_SCAN_CHUNK + len(magic))
        if len(chunk) < len(magic):
            return None
        hit = chunk.find(magic)
        if hit >= 0:
            return pos + hit + (0 if gz else 1)
        pos += _SCAN_CHUNK


def _unread_tail(fh: BinaryIO, offset: int) -> int:
    """Bytes after ``offset`` that are not just blank padding."""
    fh.seek(0, 2)
    size = fh.tell()
    if size <= offset:
        return 0
    fh.seek(offset)
    rest = fh.read(min(size - offset, 4096))
    return 0 if not rest.strip() and size - offset <= 4096 else size - offset


def is_gzip(path: str | Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(3) == _GZIP_MAGIC


def iter_records(path: str | Path, wants_payload: Callable[[WarcRecord], bool] = lambda r: False,
                 max_bytes: int = 5_000_000) -> Iterator[WarcRecord | BadRecord]:
    """Every record of a WARC file (gzip or not) in order, and a BadRecord where one fails.

    Records for which ``wants_payload`` is true come with their HTTP payload read (up to
    ``max_bytes``); reading it here lets a corrupt payload be reported like a corrupt header.
    """
    name = str(path)
    gz = is_gzip(path)
    with open(path, "rb") as fh, RecordEnds(path, gz) as ends:
        start: int | None = 0
        scanning = False  # ``start`` is a guess found by scanning, not a known record start
        while start is not None:
            fh.seek(start)
            iterator = QuietArchiveIterator(fh)
            yielded = 0
            restart: int | None = None
            try:
                for record in iterator:
                    if record.format != "warc":
                        raise ValueError(f"not a WARC record (read as {record.format}); "
                                         "spamflow reads WARC/1.0 and WARC/1.1 only")
                    item = WarcRecord(name, iterator.offset, record)
                    if wants_payload(item):
                        item._read_payload(max_bytes)
                    errors_before = iterator.err_count
                    iterator.read_to_end()
                    problem = ends.check(iterator, item.offset, record, errors_before, keep=max_bytes + (64 << 10))
                    if problem is not None:
                        item = _with_length_problem(item, problem, wants_payload, max_bytes)
                    yielded += 1
                    scanning = False
                    yield item
                    if problem is not None:
                        restart = problem.next_start
                        break
                else:
                    tail = _unread_tail(fh, iterator.offset)
                    if tail:
                        yield BadRecord(name, iterator.offset, f"the file ends with {tail} bytes that are "
                                        "not a complete record (file cut short?)")
                if restart is None:
                    return
                start = restart
            except Exception as exc:  # noqa: BLE001 - any failure of the reader is a bad record
                if yielded == 0 and scanning:
                    # a resync candidate that is not a record start: keep scanning silently
                    start = _next_start(fh, start, gz)
                    continue
                failed_at = max(iterator.offset, start)  # warcio's offset can fall back (gzip): never go back
                yield BadRecord(name, failed_at, f"unreadable record: {type(exc).__name__}: {exc}".strip())
                start = _next_start(fh, failed_at, gz)
                scanning = True


def _with_length_problem(item: WarcRecord, problem: LengthProblem, wants_payload: Callable[[WarcRecord], bool],
                         max_bytes: int) -> WarcRecord:
    """The record as far as it really goes: too short, what was read, marked cut short;
    otherwise read again from its real block (its HTTP headers too: with no usable
    Content-Length warcio did not parse them)."""
    if not problem.too_short:
        item = WarcRecord(item.file, item.offset, problem.reread())
        if wants_payload(item):
            item._read_payload(max_bytes)
            item.capped = item.capped or problem.block_len > len(problem.block)
    item.cut_short = problem.too_short
    item.length_problem = problem.reason
    return item
