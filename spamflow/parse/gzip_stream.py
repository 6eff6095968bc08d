"""WARC and ARC files gzipped as one stream instead of one gzip member per record.

Crawlers compress each record on its own, so a reader can seek to any record; ``gzip
file.warc`` compresses the whole file as one stream (warcio's "non-chunked gzip").  Such a
file is still a valid archive, only not seekable: :func:`is_one_stream` tells it from a
per-record file by looking past the first record's end inside the first gzip member, and
:func:`decompressed_copy` writes the decompressed file to a temporary file that is read
like any uncompressed WARC (offsets are then offsets in the decompressed stream, as
``zcat FILE | tail -c +OFFSET`` finds them).  ``warcio recompress FILE OUT`` turns such a
file into a per-record one.
"""

from __future__ import annotations

import re
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from spamflow.parse.arc_records import ARC_HEADER

_GZIP_MAGIC = b"\x1f\x8b\x08"
_CHUNK = 1 << 16
_MAX_HEADER = 1 << 20
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_CONTENT_LENGTH = re.compile(rb"(?im)^content-length[ \t]*:[ \t]*(\d+)")
_RECORD_START = re.compile(rb"[\r\n]*(?:WARC/[01]\.[0-9]{1,2}\r?\n|" + ARC_HEADER.pattern + rb")")


def _first_record_end(head: bytes) -> int | None:
    """Where the first record of a decompressed WARC or ARC start ``head`` ends, if its
    header is complete in ``head``."""
    if head.startswith(b"WARC/"):
        end = _HEADER_END.search(head)
        length = _CONTENT_LENGTH.search(head, 0, end.start() if end else 0)
        return end.end() + int(length.group(1)) if end and length else None
    line_end = head.find(b"\n")
    fields = head[:line_end].split()
    if line_end < 0 or not fields or not fields[-1].isdigit():
        return None
    return line_end + 1 + int(fields[-1])


def is_one_stream(path: str | Path) -> bool:
    """Whether the gzip file ``path`` holds more than one record in its first gzip member."""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    head = b""
    end: int | None = None
    seen = 0  # decompressed bytes so far
    after = b""  # decompressed bytes from the first record's end on
    with open(path, "rb") as fh:
        if fh.read(3) != _GZIP_MAGIC:
            return False
        fh.seek(0)
        while not inflate.eof:
            data = fh.read(_CHUNK)
            if not data:
                return False
            try:
                out = inflate.decompress(data)
            except zlib.error:
                return False  # a broken member: reported where it is read
            if end is None:
                head += out
                end = _first_record_end(head)
                if end is None:
                    if len(head) > _MAX_HEADER:
                        return False
                    seen += len(out)
                    continue
                out, seen = head, 0
            if seen + len(out) > end:
                after += out[max(0, end - seen):]
            seen += len(out)
            if len(after) >= 64:
                return _RECORD_START.match(after) is not None
    return False  # the member ended within 64 bytes of the record: one member per record


@dataclass
class Copy:
    """The decompressed file, and what stopped decompression early (None: nothing)."""

    path: Path
    error: str | None = None
    error_offset: int = 0


@contextmanager
def decompressed_copy(path: str | Path) -> Iterator[Copy]:
    """The whole decompressed file in a temporary file, removed afterwards.  A corrupt or
    cut stream is copied as far as it decompresses, and the error is kept to report."""
    with tempfile.TemporaryDirectory(prefix="spamflow-gunzip-") as tmp:
        copy = Copy(Path(tmp) / (Path(path).name.removesuffix(".gz") or "archive"))
        with open(path, "rb") as src, open(copy.path, "wb") as dst:
            copy.error = _gunzip(src, dst)
            copy.error_offset = dst.tell()
        yield copy


def _gunzip(src: BinaryIO, dst: BinaryIO) -> str | None:
    """Decompress every gzip member of ``src`` into ``dst``, writing as it goes so that a
    corrupt or cut stream leaves what came before it; what went wrong, or None."""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    while True:
        data = src.read(_CHUNK)
        if not data:
            return None if inflate.eof else "the gzip stream ends before its end marker (file cut short?)"
        while data:
            try:
                dst.write(inflate.decompress(data))
            except zlib.error as exc:
                return f"corrupt gzip data: {exc}"
            if not inflate.eof:
                break
            data = inflate.unused_data
            if data.strip(b"\0"):  # another member follows (padding of NULs is not one)
                inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
            else:
                data = b""
