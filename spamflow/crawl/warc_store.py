"""WARC/1.1 output: one gzip member per record, files rotated by size, named by snapshot.

Files are ``<dir>/<snapshot>-<NNNNN>.warc.gz``; each starts with a ``warcinfo`` record.  A
fetch is written as its ``response`` then its ``request`` (``WARC-Concurrent-To`` links them)
and flushed, so once ``write_exchange`` returns the record survives a SIGKILL.  A file cut
short by a kill ends in a partial gzip member, or in a response whose request never got
written: :func:`repair` cuts it back to the end of the last complete exchange.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path
from typing import BinaryIO

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

import spamflow

_CHUNK = 1 << 20
_HEAD = 4096  # a WARC header block of ours is well under this


def warc_now() -> str:
    """WARC/1.1 dates carry microseconds."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def complete_length(path: Path) -> int:
    """Bytes of ``path`` up to the end of its last complete exchange: complete gzip members,
    ending after a ``request`` or ``warcinfo`` record, never after a ``response`` whose
    ``request`` a kill cut off (its page is fetched again rather than stored half-paired)."""
    good = 0
    member_start = 0
    decomp = zlib.decompressobj(31)
    head = b""  # the first bytes of the current member's record: enough for its WARC-Type
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            data = chunk
            while data:
                try:
                    out = decomp.decompress(data)
                except zlib.error:
                    return good
                if len(head) < _HEAD:
                    head += out[:_HEAD - len(head)]
                if decomp.eof:
                    member_start += len(data) - len(decomp.unused_data)
                    if not _is_response(head):
                        good = member_start
                    data = decomp.unused_data
                    decomp = zlib.decompressobj(31)
                    head = b""
                else:
                    member_start += len(data)
                    data = b""
    return good


def _is_response(head: bytes) -> bool:
    """Whether a record's header block (its first bytes) says ``WARC-Type: response``."""
    return re.search(rb"(?im)^WARC-Type:[ \t]*response[ \t]*\r?$", head.split(b"\r\n\r\n", 1)[0]) is not None


def repair(path: Path) -> int:
    """Truncate a WARC file to its complete records (remove it if none is); returns the bytes cut off."""
    size = path.stat().st_size
    good = complete_length(path)
    if good == 0:
        path.unlink()
    elif good < size:
        with open(path, "r+b") as fh:
            fh.truncate(good)
    return size - good


@dataclass
class Exchange:
    """One HTTP fetch as it goes to WARC."""

    url: str
    ip: str
    date: str
    request_line: str
    request_headers: list[tuple[str, str]]
    protocol: str
    status_line: str
    response_headers: list[tuple[str, str]]
    body: bytes
    truncated: str | None = None  # WARC-Truncated reason: length | time


class WarcStore:
    """Appends exchanges to the current file of a snapshot, opening a new one past ``max_bytes``."""

    def __init__(self, directory: Path, snapshot: str, max_bytes: int, description: str = "") -> None:
        self.directory = directory
        self.snapshot = snapshot
        self.max_bytes = max_bytes
        self.description = description
        directory.mkdir(parents=True, exist_ok=True)
        self._fh: BinaryIO | None = None
        self._writer: WARCWriter | None = None
        self.files: list[Path] = []
        self.records = 0

    def existing(self) -> list[Path]:
        return sorted(self.directory.glob(f"{self.snapshot}-*.warc.gz"))

    def _open(self) -> WARCWriter:
        if self._writer is not None and self._fh is not None and self._fh.tell() < self.max_bytes:
            return self._writer
        self.close()
        done = self.existing()
        number = int(done[-1].name[len(self.snapshot) + 1:].split(".")[0]) + 1 if done else 1
        path = self.directory / f"{self.snapshot}-{number:05d}.warc.gz"
        self._fh = open(path, "xb")  # noqa: SIM115 (closed by close())
        self._writer = WARCWriter(self._fh, gzip=True, warc_version="1.1")
        fields = (f"software: spamflow/{spamflow.__version__} crawler\r\nformat: WARC File Format 1.1\r\n"
                  f"isPartOf: {self.snapshot}\r\nrobots: obey\r\n"
                  + (f"description: {self.description}\r\n" if self.description else "")).encode()
        info = self._writer.create_warc_record("", "warcinfo", payload=BytesIO(fields), length=len(fields),
                                               warc_content_type="application/warc-fields",
                                               warc_headers_dict={"WARC-Date": warc_now(), "WARC-Filename": path.name})
        self._writer.write_record(info)
        self._fh.flush()
        self.files.append(path)
        return self._writer

    def write_exchange(self, ex: Exchange) -> None:
        writer = self._open()
        http = StatusAndHeaders(ex.status_line, ex.response_headers, protocol=ex.protocol)
        warc_headers = {"WARC-Date": ex.date, "WARC-IP-Address": ex.ip}
        if ex.truncated:
            warc_headers["WARC-Truncated"] = ex.truncated
        response = writer.create_warc_record(ex.url, "response", payload=BytesIO(ex.body), length=len(ex.body),
                                             http_headers=http, warc_headers_dict=warc_headers)
        request_http = StatusAndHeaders(ex.request_line, ex.request_headers, protocol="HTTP/1.1",
                                        is_http_request=True)
        request = writer.create_warc_record(ex.url, "request", http_headers=request_http,
                                            warc_headers_dict={"WARC-Date": ex.date, "WARC-IP-Address": ex.ip})
        writer.write_request_response_pair(request, response)  # response first, then request
        assert self._fh is not None
        self._fh.flush()
        self.records += 2

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
        self._fh = None
        self._writer = None
