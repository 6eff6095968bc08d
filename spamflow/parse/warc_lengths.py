"""Checking that each WARC record ends where its Content-Length says, and finding where it
really ends when it does not.

warcio trusts Content-Length.  When it is too short, the rest of the body is left behind
(and in an uncompressed file read as the next record); when it is too long, the body takes
in the next record's header and text and that record is lost.  Both are caught at the
record's declared end:

* uncompressed: a record's block is followed by ``CRLF CRLF`` and then the next record's
  ``WARC/x.y`` line or the end of the file.  If not, the real end is the first record
  boundary (a blank line, then a ``WARC/x.y`` line) after the block starts: before the
  declared end, Content-Length was too long; after it, too short.
* gzip (one member per record): the member must end right after the block's ``CRLF CRLF``.
  Bytes left in the member (warcio's "Record not followed by newline") mean too short; a
  member that ends before the declared length, with more of the file after it, too long.

A Content-Length that swallows whole records and ends exactly on a later boundary cannot
be told from a record whose body holds WARC records (an archived WARC file), and is trusted.
"""

from __future__ import annotations

import io
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import DecompressingBufferedReader
from warcio.recordloader import ArchiveLoadFailed, ArcWarcRecord, ArcWarcRecordLoader

_RECORD_LINE = rb"WARC/[01]\.[0-9]{1,2}\r?\n"  # WARC/1.0, 1.1, and ClueWeb's 0.18
_BOUNDARY = re.compile(rb"\r?\n\r?\n(?=" + _RECORD_LINE + rb")")
_NEXT_RECORD = re.compile(rb"[\r\n]*(?:" + _RECORD_LINE + rb"|\Z)")
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_CONTENT_LENGTH = re.compile(rb"(?im)^(content-length[ \t]*:[ \t]*)[^\r\n]*")
_CHUNK = 1 << 20
_MAX_HEADER = 1 << 20
_MAX_LINE = 1 << 20  # one header line; HTTP servers refuse lines far shorter (8-64 KB)


class _NamingLoader(ArcWarcRecordLoader):
    """warcio's record loader, saying what is wrong where warcio fails on a missing header
    with ``AttributeError: 'NoneType' object has no attribute 'startswith'``."""

    def load_http_headers(self, rec_type, uri, stream, length):
        if uri is None and length != 0 and rec_type in self.HTTP_RECORDS:
            raise ArchiveLoadFailed(f"a {rec_type} record without a WARC-Target-URI header: its URL is unknown "
                                    "and its HTTP headers cannot be read")
        return super().load_http_headers(rec_type, uri, stream, length)


class _LineCappedReader(DecompressingBufferedReader):
    """warcio's reader with a bound on one line: its ``readline`` joins buffers one by one,
    which is quadratic in the line's length (a 50 MB line with no newline cost 80 s of CPU).
    A longer line is returned in pieces of ``_MAX_LINE`` bytes, each read as a bad line."""

    def readline(self, length: int | None = None) -> bytes:
        return super().readline(_MAX_LINE if length is None or length > _MAX_LINE else length)


class QuietArchiveIterator(ArchiveIterator):
    """warcio's iterator without its stderr warning on a bad Content-Length: spamflow reports
    that record itself (counted, with file and offset); and with a loader that names a
    missing WARC-Target-URI."""

    INC_RECORD = ""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.loader.__class__ = _NamingLoader  # warcio's loader as it configured it, one method more
        self.reader.__class__ = _LineCappedReader  # and its reader, nothing read yet


@dataclass(frozen=True)
class LengthProblem:
    """A record whose Content-Length does not match where it ends."""

    reason: str
    next_start: int | None  # where reading goes on; None: this record runs to the end of the file
    too_short: bool  # the body read stops before its real end
    header: bytes = b""  # too long: the record's WARC header, and
    block: bytes = b""  # its real block (at most ``keep`` bytes), to read it again
    block_len: int = 0  # the real block's full length

    def reread(self) -> ArcWarcRecord:
        """The record again, its Content-Length set to the real block kept."""
        length = str(len(self.block)).encode()
        header, found = _CONTENT_LENGTH.subn(lambda m: m.group(1) + length, self.header, count=1)
        if not found:  # no Content-Length at all: add one before the blank line
            end = _HEADER_END.search(header)
            header = header[:end.start()] + b"\r\nContent-Length: " + length + header[end.start():] if end else header
        iterator = ArchiveIterator(io.BytesIO(header + self.block + b"\r\n\r\n"))
        return next(iter(iterator))


class RecordEnds:
    """Checks each record's end in one WARC file, through a handle of its own (warcio's
    handle and buffers are left untouched)."""

    def __init__(self, path: str | Path, gz: bool) -> None:
        self._fh: BinaryIO = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._fh.seek(0, 2)
        self.size = self._fh.tell()
        self.gz = gz
        self._last_scan: tuple[int, tuple[int, int] | None] = (self.size + 1, None)

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> RecordEnds:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def check(self, iterator: ArchiveIterator, start: int, record: ArcWarcRecord, errors_before: int,
              keep: int) -> LengthProblem | None:
        """Call after ``iterator.read_to_end()`` for the record that starts at ``start``;
        ``errors_before`` is ``iterator.err_count`` before that call.  ``keep`` bounds the
        block kept for a re-read (0: keep none)."""
        raw = record.rec_headers.get_header("Content-Length")
        if raw is not None and raw.strip().isdigit():
            what, declared = f"Content-Length {int(raw)}", int(raw)
        else:  # warcio reads a record with no usable length as empty, or to the end of the file
            what = "no Content-Length:" if raw is None else f"Content-Length {raw.strip()!r} is not a length:"
            declared = -1
        if self.gz:
            return self._check_member(iterator, start, record, what, declared, errors_before, keep)
        return self._check_plain(start, what, declared, keep)

    def _read(self, offset: int, n: int) -> bytes:
        self._fh.seek(offset)
        return self._fh.read(n)

    def _header_len(self, start: int, data: bytes | None = None) -> int | None:
        """Length of the WARC header at ``start`` with its blank line; from ``data`` (the
        decompressed member) when given, else from the file."""
        if data is not None:
            found = _HEADER_END.search(data)
            return found.end() if found else None
        n = 8192
        while True:
            data = self._read(start, n)
            found = _HEADER_END.search(data)
            if found:
                return found.end()
            if len(data) < n or n >= _MAX_HEADER:
                return None
            n *= 4

    def _check_plain(self, start: int, what: str, declared: int, keep: int) -> LengthProblem | None:
        header_len = self._header_len(start)
        if header_len is None:
            return None
        block_start = start + header_len
        declared_end = block_start + max(declared, 0)
        after = self._read(declared_end, 64) if declared_end <= self.size else b""
        if declared >= 0 and declared_end <= self.size and _NEXT_RECORD.match(after):
            return None
        boundary = self._next_boundary(block_start)
        if declared >= 0 and after.startswith(b"\r\n\r\n") and (boundary is None or boundary[0] >= declared_end):
            return None  # the record ends as it should and junk follows: unreadable, at the junk's offset
        if boundary is None:
            if declared < 0:  # the record runs to the end of the file
                real = len(self._read(block_start, self.size - block_start).rstrip(b"\r\n"))
                return self._reread(f"{what} the record runs to the end of the file, {real} bytes of block; "
                                    "parsed those", None, start, header_len, real, keep)
            if declared_end > self.size:
                return None  # the file ends inside the record: a cut-short file, not a wrong length
            return LengthProblem(
                f"{what} is too short: {self.size - declared_end} bytes of the record follow its declared end, "
                "up to the end of the file; parsed the declared bytes", None, too_short=True)
        cut, next_start = boundary
        real = cut - block_start
        if declared < 0:
            return self._reread(f"{what} the next record starts at offset {next_start}, {real} bytes into the "
                                "block; parsed those and read on from there", next_start, start, header_len,
                                real, keep)
        if cut < declared_end:
            return self._reread(f"{what} is too long: the next record starts at offset {next_start}, {real} bytes "
                                f"into the declared block; parsed those {real} bytes and read on from there",
                                next_start, start, header_len, real, keep)
        return LengthProblem(
            f"{what} is too short: {cut - declared_end} more bytes of the record follow its declared end, "
            f"up to the next record at offset {next_start}; parsed the declared bytes", next_start, too_short=True)

    def _reread(self, reason: str, next_start: int | None, start: int, header_len: int, real: int,
                keep: int) -> LengthProblem:
        return LengthProblem(reason, next_start, too_short=False, header=self._read(start, header_len),
                             block=self._read(start + header_len, min(real, keep)), block_len=real)

    def _next_boundary(self, offset: int) -> tuple[int, int] | None:
        """(where the blank line before the next ``WARC/x.y`` line starts, where that line
        starts), searching from ``offset``.  The last answer is reused when it still holds,
        so a file whose every record fails the check is scanned once, not once a record."""
        last_from, last = self._last_scan
        if last_from <= offset and (last is None or last[0] >= offset):
            return last
        found_at = None
        pos = offset
        while pos < self.size:
            chunk = self._read(pos, _CHUNK + 16)
            found = _BOUNDARY.search(chunk)
            if found and found.start() < _CHUNK:
                found_at = pos + found.start(), pos + found.end()
                break
            pos += _CHUNK
        self._last_scan = offset, found_at
        return found_at

    def _check_member(self, iterator: ArchiveIterator, start: int, record: ArcWarcRecord, what: str,
                      declared: int, errors_before: int, keep: int) -> LengthProblem | None:
        next_line = iterator.next_line or b""
        if iterator.err_count == errors_before and next_line.startswith(b"WARC/"):
            return None  # the next record in the same member: one gzip for the whole file, which warcio reports
        left_over = iterator.err_count > errors_before or bool(next_line)
        ran_out = getattr(record.raw_stream, "limit", 0) > 0
        if declared >= 0 and not (left_over or ran_out):
            return None
        reread = ran_out or declared < 0
        member = self._member(start, keep + _MAX_HEADER if reread else _MAX_HEADER)
        if member is None:
            return None  # a broken or cut member: warcio's error, or cut_short
        head, content_len, tail, member_end = member
        header_len = self._header_len(start, head)
        if header_len is None:
            return None
        block_len = content_len - header_len - (4 if tail.endswith(b"\r\n\r\n") else 0)
        next_start = member_end if member_end < self.size else None
        if reread:
            if ran_out and next_start is None:
                return None  # the file ends inside the record: cut_short
            lead = f"{what} is too long:" if declared >= 0 else what
            return LengthProblem(
                f"{lead} the record's gzip member holds {block_len} bytes of block; parsed those and "
                f"read on at the next member, offset {member_end}",
                next_start, too_short=False, header=head[:header_len],
                block=head[header_len:header_len + min(block_len, keep)], block_len=block_len)
        return LengthProblem(
            f"{what} is too short: its gzip member holds {block_len - declared} more bytes of block; parsed the "
            f"declared bytes and read on at the next member, offset {member_end}", next_start, too_short=True)

    def _member(self, start: int, keep: int) -> tuple[bytes, int, bytes, int] | None:
        """Decompress the gzip member at ``start``: its first ``keep`` bytes, its length,
        its last 4 bytes and the offset where it ends; None if it does not end."""
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        head = bytearray()
        tail = b""
        length = 0
        pos = start
        pending = b""
        while not inflate.eof:
            if not pending:
                pending = self._read(pos, _CHUNK)
                if not pending:
                    return None
                pos += len(pending)
            try:  # at most _CHUNK bytes out per step: a member that inflates 1000-fold stays small
                out = inflate.decompress(pending, _CHUNK)
            except zlib.error:
                return None
            pending = inflate.unconsumed_tail
            length += len(out)
            if len(head) < keep:
                head += out[:keep - len(head)]
            tail = (tail + out)[-4:]
        return bytes(head), length, tail, pos - len(inflate.unused_data)  # at eof the tail is unused_data too
