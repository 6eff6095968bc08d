"""Reading WARC files record by record without losing the run to one bad record.

warcio does the reading.  When a record cannot be read (corrupt gzip member, broken
headers, a file cut short), the failure is reported as a :class:`BadRecord` naming the file
and offset, and reading resumes at the next place a record starts: the next gzip member
for ``.gz`` files, the next ``WARC/1.x`` or ``WARC/0.x`` line (ClueWeb09 writes
``WARC/0.18``) otherwise.  A record whose Content-Length
does not match where it ends (``spamflow.parse.warc_lengths``) comes with ``length_problem`` set,
its body cut at its real end, and reading resumes at the next record.

ARC files are read too (``spamflow.parse.arc_records``), and so are files gzipped as one stream
rather than record by record (``spamflow.parse.gzip_stream``).
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from warcio.recordloader import ArcWarcRecord

from spamflow.parse import content_encoding
from spamflow.parse.arc_records import ArcRecordEnds, arc_record_id, check_arc_header, next_arc_header, starts_like_arc
from spamflow.parse.fast_records import fast_records
from spamflow.parse.gzip_stream import decompressed_copy, is_one_stream
from spamflow.parse.warc_dates import WarcDate, parse_warc_date
from spamflow.parse.warc_lengths import LengthProblem, QuietArchiveIterator, RecordEnds

content_encoding.install()  # brotli and zstd bodies are decoded like gzip ones

_GZIP_MAGIC = b"\x1f\x8b\x08"
_WARC_LINE = re.compile(rb"\nWARC/[01]\.[0-9]")  # a record start after a line end: 1.0, 1.1, 0.18
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
    too_deep: bool = False  # the payload was cut before elements nested deeper than parse.max_depth
    length_problem: str | None = None  # Content-Length does not match where the record ends: why
    _headers: dict[str, str] | None = field(default=None, repr=False, compare=False)
    _http_headers: dict[str, str] | None = field(default=None, repr=False, compare=False)
    _date: WarcDate | None = field(default=None, repr=False, compare=False)

    @property
    def rec_type(self) -> str:
        return self.record.rec_type or ""

    def header(self, name: str) -> str | None:
        """The first WARC header named ``name`` (any case), as warcio's ``get_header``."""
        if self._headers is None:
            self._headers = _by_lower_name(self.record.rec_headers.headers)
        return self._headers.get(name.lower())

    def date(self) -> WarcDate:
        """The record's ``WARC-Date``, parsed once (the stage checks it and stores it)."""
        if self._date is None:
            self._date = parse_warc_date(self.header("WARC-Date"))
        return self._date

    def http_header(self, name: str) -> str | None:
        """The first HTTP header named ``name`` (any case); None without HTTP headers."""
        if self._http_headers is None:
            http = self.record.http_headers
            self._http_headers = _by_lower_name(http.headers) if http else {}
        return self._http_headers.get(name.lower())

    def _read_payload(self, max_bytes: int) -> None:
        with content_encoding.output_limit(max_bytes + 1):  # a brotli or zstd bomb stops here, as gzip does
            stream = self.record.content_stream()
        body = stream.read(max_bytes + 1)
        self.capped = len(body) > max_bytes
        self.payload = body[:max_bytes]
        while self.capped and stream.read(1 << 16):
            pass
        self.cut_short = getattr(self.record.raw_stream, "limit", 0) > 0  # no limit: no Content-Length


def _by_lower_name(headers: list[tuple[str, str]]) -> dict[str, str]:
    """Headers by lower-cased name, the first of each name kept: what warcio's linear
    ``get_header`` finds, in one dictionary per record (a page looks up ~15 headers)."""
    found: dict[str, str] = {}
    for name, value in headers:
        found.setdefault(name.lower(), value)
    return found


def warc_date(value: str | None) -> datetime | None:
    """Parse a WARC-Date (ISO 8601, 'Z' or offset, optional fraction; ClueWeb09's
    day-of-year dates repaired, see ``spamflow.parse.warc_dates``) to aware UTC."""
    return parse_warc_date(value).value


def _next_start(fh: BinaryIO, after: int, gz: bool, arc: bool = False) -> int | None:
    """The offset of the next possible record start strictly after ``after``."""
    width = len(_GZIP_MAGIC) if gz else len(b"\nWARC/1.0")
    overlap = 4096 if arc and not gz else width  # an ARC header line is at most this long
    pos = after + 1
    while True:
        fh.seek(pos)
        chunk = fh.read(_SCAN_CHUNK + overlap)
        if len(chunk) < width:
            return None
        if arc and not gz:
            hit = next_arc_header(chunk)
            if 0 <= hit <= _SCAN_CHUNK:
                return pos + hit
        elif gz:
            hit = chunk.find(_GZIP_MAGIC)
            if hit >= 0:
                return pos + hit
        else:
            found = _WARC_LINE.search(chunk)
            if found:
                return pos + found.start() + 1
        if len(chunk) <= _SCAN_CHUNK:
            return None
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


def is_arc(path: str | Path) -> bool:
    """Whether ``path`` (gzip or not) starts with an ARC header line."""
    with open(path, "rb") as raw:
        fh: BinaryIO = gzip.GzipFile(fileobj=raw) if raw.read(3) == _GZIP_MAGIC else raw  # type: ignore[assignment]
        raw.seek(0)
        try:
            return starts_like_arc(fh.read(512))
        except (OSError, EOFError, zlib.error):
            return False


def iter_records(path: str | Path, wants_payload: Callable[[WarcRecord], bool] = lambda r: False,
                 max_bytes: int = 5_000_000, name: str | None = None) -> Iterator[WarcRecord | BadRecord]:
    """Every record of a WARC or ARC file (gzip per record, gzip as one stream, or not) in
    order, and a BadRecord where one fails.

    Records for which ``wants_payload`` is true come with their HTTP payload read (up to
    ``max_bytes``); reading it here lets a corrupt payload be reported like a corrupt header.
    ``name``: the file as records and problems name it (a remote file's URL, not its local spool).
    """
    name = name or str(path)
    if is_gzip(path) and is_one_stream(path):
        with decompressed_copy(path) as copy:
            yield from _iter_file(copy.path, name, wants_payload, max_bytes)
            if copy.error:
                yield BadRecord(name, copy.error_offset,
                                f"file gzipped as one stream: decompression stopped after {copy.error_offset} bytes: "
                                f"{copy.error}; the records before were read")
        return
    yield from _iter_file(path, name, wants_payload, max_bytes)


def _iter_file(path: str | Path, name: str, wants_payload: Callable[[WarcRecord], bool],
               max_bytes: int) -> Iterator[WarcRecord | BadRecord]:
    """``iter_records`` of a seekable file; ``name`` is the file the user gave."""
    gz = is_gzip(path)
    arc = is_arc(path)
    with open(path, "rb") as fh, (ArcRecordEnds if arc else RecordEnds)(path, gz) as ends:
        start: int | None = 0

        def item_of(offset: int, record: ArcWarcRecord) -> WarcRecord:
            item = WarcRecord(name, offset, record)
            if wants_payload(item):
                item._read_payload(max_bytes)
            return item

        if gz and not arc:  # the well-formed records first, inflated by FastWARC (``spamflow.parse.fast_records``)
            start = yield from fast_records(fh, item_of)
        # warcio words an unreadable record's error by whether it has read a record before;
        # after records read fast it has, as if it had read them itself
        known_format = "warc" if start else None
        scanning = False  # ``start`` is a guess found by scanning, not a known record start
        while start is not None:
            fh.seek(start)
            iterator = QuietArchiveIterator(fh, arc2warc=arc)
            iterator.known_format, known_format = known_format, None
            yielded = 0
            restart: int | None = None
            try:
                for record in iterator:
                    if record.format not in ("warc", "arc2warc"):
                        raise ValueError(f"not a WARC or ARC record (read as {record.format}); spamflow reads "
                                         "WARC/1.0, WARC/1.1, WARC/0.18 and ARC")
                    if arc:
                        check_arc_header(record)
                        record.rec_headers.replace_header("WARC-Record-ID", arc_record_id(name, iterator.offset))
                    item = item_of(iterator.offset, record)
                    errors_before = iterator.err_count
                    iterator.read_to_end()
                    if item.payload is None and getattr(record.raw_stream, "limit", 0) > 0:
                        item.cut_short = True  # the file ends inside this record (perhaps inside its HTTP headers)
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
                    start = _next_start(fh, start, gz, arc)
                    continue
                failed_at = max(iterator.offset, start)  # warcio's offset can fall back (gzip): never go back
                yield BadRecord(name, failed_at, f"unreadable record: {type(exc).__name__}: {exc}".strip())
                start = _next_start(fh, failed_at, gz, arc)
                scanning = True


def _with_length_problem(item: WarcRecord, problem: LengthProblem, wants_payload: Callable[[WarcRecord], bool],
                         max_bytes: int) -> WarcRecord:
    """The record as far as it really goes: too short, what was read, marked cut short;
    otherwise read again from its real block (its HTTP headers too: with no usable
    Content-Length warcio did not parse them)."""
    if not problem.too_short:
        record = problem.reread()
        record_id = item.header("WARC-Record-ID")
        if record_id:  # an ARC record's stable id (a re-read ARC record gets a random one)
            record.rec_headers.replace_header("WARC-Record-ID", record_id)
        item = WarcRecord(item.file, item.offset, record)
        if wants_payload(item):
            item._read_payload(max_bytes)
            item.capped = item.capped or problem.block_len > len(problem.block)
    item.cut_short = problem.too_short
    item.length_problem = problem.reason
    return item
