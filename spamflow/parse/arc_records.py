"""ARC files (the Internet Archive's format, 1996 to ~2009, and Heritrix's before WARC).

An ARC record is one header line, ``URL IP-address Archive-date Content-type Length``
(ARC version 1, as Heritrix and the Internet Archive wrote it), then ``Length`` bytes: the
HTTP response, headers and body.  The file starts with a ``filedesc://`` record.  warcio
reads ARC records as WARC ones (``arc2warc``): ``WARC-Target-URI``, ``WARC-IP-Address``
and ``WARC-Date`` come from the header line, so pages from ARC have the same fields as
pages from WARC.  What warcio does not give is a stable record id (it makes a random
UUID per read), so :func:`arc_record_id` derives one from the file name and offset, as
CDX indexes identify ARC records.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.recordloader import ArcWarcRecord

from spamflow.parse.warc_lengths import LengthProblem, RecordEnds

# url ip 14-digit-date content-type length (ARC v1); the date may be shorter in old files
ARC_HEADER = re.compile(rb"[A-Za-z][A-Za-z0-9+.-]*:\S* \S+ \d{8,14} \S* ?\d+\r?\n")
_FIRST_LINE = re.compile(rb"filedesc://\S*|" + ARC_HEADER.pattern)
_NEXT_HEADER = re.compile(rb"\n(?=" + ARC_HEADER.pattern + rb")")
_MAX_LINE = 4096  # an ARC header line is shorter
_CHUNK = 1 << 20


def starts_like_arc(first_bytes: bytes) -> bool:
    """Whether the (decompressed) start of a file is an ARC header line."""
    return _FIRST_LINE.match(first_bytes) is not None and not first_bytes.startswith(b"WARC/")


def check_arc_header(record: ArcWarcRecord) -> None:
    """Raise ValueError for a record read from a line that is no ARC header: warcio takes
    any line of five words for one (its length a word, its date the year 2999)."""
    headers = record.rec_headers
    length = headers.get_header("Content-Length") or ""
    date = headers.get_header("WARC-Date") or ""
    if not length.isdigit() or date.startswith("2999-"):
        uri = headers.get_header("WARC-Target-URI") or headers.get_header("WARC-Filename")
        raise ValueError(f"not an ARC header line (URL {uri!r}, date {date!r}, length {length!r})")


def arc_record_id(path: str | Path, offset: int) -> str:
    """A stable ``WARC-Record-ID`` for the ARC record at ``offset`` of ``path``: the same
    record read twice, or in two runs, gets the same ``doc_id``."""
    return f"<urn:x-arc:{Path(path).name}#{offset}>"


def next_arc_header(chunk: bytes) -> int:
    """Where the first ARC header line after a newline starts in ``chunk`` (after its
    newline), or -1: where reading an uncompressed ARC file resumes after a bad record."""
    found = _NEXT_HEADER.search(chunk)
    return -1 if found is None else found.end()


@dataclass(frozen=True)
class ArcLengthProblem(LengthProblem):
    """A wrong ARC length: re-read from the ARC header line (its last field is the length)."""

    def reread(self) -> ArcWarcRecord:
        fields = self.header.rstrip(b"\r\n").split(b" ")
        line = b" ".join(fields[:-1] + [str(len(self.block)).encode()]) + b"\n"
        return next(iter(ArchiveIterator(io.BytesIO(line + self.block + b"\n"), arc2warc=True)))


class ArcRecordEnds(RecordEnds):
    """Checks that each ARC record ends where its length says, as ``RecordEnds`` does for
    WARC: an ARC record is its header line, ``length`` bytes, then a newline, and the next
    record's header line (uncompressed) or the end of its gzip member.  Only records that
    warcio found something wrong with (bytes left over, or a body that ran out) are looked
    at again, so a good file costs nothing."""

    def check(self, iterator: ArchiveIterator, start: int, record: ArcWarcRecord, errors_before: int,
              keep: int) -> LengthProblem | None:
        declared = record.length
        left_over = iterator.err_count > errors_before
        ran_out = getattr(record.raw_stream, "limit", 0) > 0
        if declared is None or record.rec_type == "warcinfo" or not (left_over or ran_out):
            return None  # the filedesc record's length is warcio's own, not the file's
        if self.gz:
            return self._check_arc_member(start, declared, ran_out, keep)
        return self._check_arc_plain(start, declared, keep)

    def _check_arc_plain(self, start: int, declared: int, keep: int) -> LengthProblem | None:
        header = self._read(start, _MAX_LINE).split(b"\n", 1)[0] + b"\n"
        block_start = start + len(header)
        declared_end = block_start + declared
        next_start = self._next_header(block_start)
        if next_start is None:
            if declared_end >= self.size:
                return None  # the file ends inside the record: cut_short
            return ArcLengthProblem(
                f"ARC length {declared} is too short: {self.size - declared_end} bytes of the record follow its "
                "declared end, up to the end of the file; parsed the declared bytes", None, too_short=True)
        real = next_start - 1 - block_start  # the record's closing newline is not block
        if real < declared:
            return ArcLengthProblem(
                f"ARC length {declared} is too long: the next record starts at offset {next_start}, {real} bytes "
                "into the declared block; parsed those bytes and read on from there", next_start, too_short=False,
                header=header, block=self._read(block_start, min(real, keep)), block_len=real)
        return ArcLengthProblem(
            f"ARC length {declared} is too short: {real - declared} more bytes of the record follow its declared "
            f"end, up to the next record at offset {next_start}; parsed the declared bytes", next_start,
            too_short=True)

    def _next_header(self, offset: int) -> int | None:
        """Where the next ARC header line after ``offset`` starts."""
        pos = offset
        while pos < self.size:
            chunk = self._read(pos, _CHUNK + _MAX_LINE)
            hit = next_arc_header(chunk)
            if 0 <= hit <= _CHUNK:
                return pos + hit
            pos += _CHUNK
        return None

    def _check_arc_member(self, start: int, declared: int, ran_out: bool, keep: int) -> LengthProblem | None:
        member = self._member(start, keep + _MAX_LINE if ran_out else _MAX_LINE)
        if member is None:
            return None  # a broken or cut member: warcio's error, or cut_short
        head, content_len, tail, member_end = member
        header_len = head.find(b"\n") + 1
        if header_len == 0:
            return None
        block_len = content_len - header_len - (1 if tail.endswith(b"\n") else 0)
        if ran_out:
            if member_end >= self.size:
                return None  # the file ends inside the record: cut_short
            return ArcLengthProblem(
                f"ARC length {declared} is too long: the record's gzip member ends after {block_len} bytes of block; "
                f"parsed those and read on at the next member, offset {member_end}", member_end, too_short=False,
                header=head[:header_len], block=head[header_len:header_len + min(block_len, keep)],
                block_len=block_len)
        if block_len <= declared:
            return None
        return ArcLengthProblem(
            f"ARC length {declared} is too short: its gzip member holds {block_len - declared} more bytes of block; "
            f"parsed the declared bytes and read on at the next member, offset {member_end}",
            member_end if member_end < self.size else None, too_short=True)
