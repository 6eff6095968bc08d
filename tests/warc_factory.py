"""Build small WARC files for tests with warcio's own writer, so tests read real WARC."""

from __future__ import annotations

import gzip as gz
import io
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter


@dataclass
class Resp:
    url: str
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: str = "200 OK"
    ip: str | None = "127.0.0.1"
    date: str = "2026-01-15T10:00:00Z"
    record_id: str = field(default_factory=lambda: f"<urn:uuid:{uuid.uuid4()}>")
    kind: str = "response"  # response | revisit | request | resource
    warc_headers: dict[str, str] = field(default_factory=dict)  # extra WARC headers, e.g. WARC-Refers-To


def warc_bytes(records: list[Resp], gzip: bool = True) -> tuple[bytes, list[int]]:
    """The WARC file bytes and the offset at which each record starts.  Gzipped as warcio
    writes it, one gzip member per record, but at compression level 1: warcio's level 9 was
    a quarter of the CPU of a test that writes ~900 real pages, and the bytes read back are
    the same."""
    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=False, warc_version="WARC/1.1")
    offsets, out = [], io.BytesIO()
    for r in records:
        offsets.append(out.tell())
        headers = {"WARC-Record-ID": r.record_id, "WARC-Date": r.date}
        if r.ip:
            headers["WARC-IP-Address"] = r.ip
        headers.update(r.warc_headers)
        if r.kind in ("response", "revisit"):
            fields = [("Content-Type", r.content_type)] if r.content_type else []  # "" = no Content-Type (a 304)
            http = StatusAndHeaders(r.status, fields + [("Content-Length", str(len(r.body)))], protocol="HTTP/1.1")
            rec = writer.create_warc_record(r.url, r.kind, payload=io.BytesIO(r.body if r.kind == "response" else b""),
                                            http_headers=http, warc_headers_dict=headers)
        else:
            rec = writer.create_warc_record(r.url, r.kind, payload=io.BytesIO(r.body),
                                            warc_content_type=r.content_type, warc_headers_dict=headers)
        writer.write_record(rec)
        record = buf.getvalue()
        buf.seek(0)
        buf.truncate()
        out.write(gz.compress(record, compresslevel=1, mtime=0) if gzip else record)
    return out.getvalue(), offsets


def write_warc(path: Path, records: list[Resp], gzip: bool = True) -> list[int]:
    data, offsets = warc_bytes(records, gzip=gzip)
    path.write_bytes(data)
    return offsets


def html(title: str, body: str, head: str = "") -> bytes:
    return f"<!doctype html><html><head><title>{title}</title>{head}</head><body>{body}</body></html>".encode()


def warc_with_content_length(records: list[Resp], lengths: dict[int, int | str | None],
                             gzip: bool) -> tuple[bytes, list[int]]:
    """A WARC file whose records ``i`` declare ``Content-Length: lengths[i]`` whatever their
    real block (no Content-Length line if None; one gzip member per record when ``gzip``),
    and each record's offset."""
    plain, offsets = warc_bytes(records, gzip=False)
    ends = offsets[1:] + [len(plain)]
    out, new_offsets = b"", []
    for i, (start, end) in enumerate(zip(offsets, ends)):
        record = plain[start:end]
        if i in lengths:
            line = b"" if lengths[i] is None else f"Content-Length: {lengths[i]}\r\n".encode()
            record = re.sub(rb"Content-Length: \d+\r\n", line, record, count=1)
        new_offsets.append(len(out))
        out += gz.compress(record, mtime=0) if gzip else record
    return out, new_offsets


def block_length(records: list[Resp], i: int) -> int:
    """The real Content-Length of record ``i`` (its block: HTTP header and body)."""
    plain, offsets = warc_bytes(records, gzip=False)
    match = re.compile(rb"Content-Length: (\d+)").search(plain, offsets[i])
    assert match is not None
    return int(match.group(1))


def write_two_months(folder: Path) -> Path:
    """``jan/jan.warc.gz`` (3 pages) and ``feb/feb.warc.gz`` (2 pages) on two hosts: the small
    two-snapshot crawl the DAG tests run."""
    for month, n in (("jan", 3), ("feb", 2)):
        (folder / month).mkdir()
        write_warc(folder / month / f"{month}.warc.gz", [
            Resp(f"http://site{i % 2}.example.co.uk/{month}/{i}", html(f"{month} {i}", f"<p>text {i}</p>"))
            for i in range(n)])
    return folder
