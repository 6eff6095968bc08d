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

import re
from pathlib import Path

from warcio.recordloader import ArcWarcRecord

# url ip 14-digit-date content-type length (ARC v1); the date may be shorter in old files
ARC_HEADER = re.compile(rb"\S+ \S+ \d{8,14} \S* ?\d+\r?\n")
_FIRST_LINE = re.compile(rb"filedesc://\S*|" + ARC_HEADER.pattern)
_NEXT_HEADER = re.compile(rb"\n(?=" + ARC_HEADER.pattern + rb")")


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
