"""The page record: one row per HTML response, the input of every detector.

``PAGE_SCHEMA`` is the Parquet schema of the ``pages`` output of the parse stage;
``docs/parse.md`` documents each field.  :func:`page_from_record` is a pure function from
a WARC record to a row, so it runs the same in a task, a test or a mapper.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pyarrow as pa
import xxhash

from spamflow.domains import host_of, registered_domain
from spamflow.parse.charset import Decoded, decode_html
from spamflow.parse.html_text import extract
from spamflow.parse.payload_digest import normalize_digest
from spamflow.parse.warc_records import WarcRecord, warc_date
from spamflow.words import html_noise

HTML_TYPES = ("text/html", "application/xhtml+xml")

PAGE_SCHEMA = pa.schema([
    pa.field("doc_id", pa.int64(), nullable=False),
    pa.field("record_id", pa.string(), nullable=False),
    pa.field("url", pa.string(), nullable=False),
    pa.field("host", pa.string(), nullable=False),
    pa.field("domain", pa.string(), nullable=False),
    pa.field("ip", pa.string()),
    pa.field("snapshot", pa.string(), nullable=False),
    pa.field("fetch_time", pa.timestamp("us", tz="UTC")),
    pa.field("status", pa.int32()),
    pa.field("content_type", pa.string()),
    pa.field("charset", pa.string()),
    pa.field("title", pa.string()),
    pa.field("words", pa.list_(pa.string())),
    pa.field("links", pa.list_(pa.struct([
        pa.field("url", pa.string()), pa.field("anchor", pa.string()), pa.field("nofollow", pa.bool_()),
    ]))),
    pa.field("noise", pa.string()),
    pa.field("html_bytes", pa.int64()),
    pa.field("truncated", pa.bool_()),
    pa.field("warc_file", pa.string()),
    pa.field("warc_offset", pa.int64()),
    pa.field("trec_id", pa.string()),  # WARC-TREC-ID (ClueWeb09/12 document id), null elsewhere
    pa.field("payload_digest", pa.string()),  # WARC-Payload-Digest, normalised: revisits find their original by it
])

PARQUET_OPTIONS: dict[str, object] = {
    "compression": "zstd",
    # min/max statistics only for the scalar columns: those of ``words``, ``links`` and
    # ``noise`` (every word, every ~16 KB noise string compared) cost ~20 % of the write,
    # and no reader filters a page table on them.
    "write_statistics": [n for n in PAGE_SCHEMA.names if n not in ("words", "links", "noise")],
}
"""Options of ``pyarrow.parquet.ParquetWriter`` for page tables (parse and revisit parts)."""


@dataclass
class Page:
    """One parsed HTML page (a row of ``PAGE_SCHEMA``)."""

    doc_id: int
    record_id: str
    url: str
    host: str
    domain: str
    ip: str | None
    snapshot: str
    fetch_time: datetime | None
    status: int | None
    content_type: str | None
    charset: str
    title: str
    words: list[str]
    links: list[dict[str, object]]
    noise: str
    html_bytes: int
    truncated: bool
    warc_file: str
    warc_offset: int
    trec_id: str | None = None
    payload_digest: str | None = None
    decode_errors: int = 0  # not stored: counted by the parse stage
    charset_source: str = ""  # not stored: how the charset was chosen (``Decoded.source``), counted

    def row(self) -> dict[str, object]:
        """The Parquet row (a shallow copy: the word and link lists are shared, not copied)."""
        return {name: getattr(self, name) for name in PAGE_SCHEMA.names}


class PageBatch:
    """Pages buffered column by column, flushed as one Arrow table.

    Building columns directly (words and links as flat arrays plus offsets) avoids a dict
    per row; ``nbytes`` lets the writer flush by size so memory stays bounded whatever
    the page size.
    """

    _SCALARS = [n for n in PAGE_SCHEMA.names if n not in ("words", "links")]

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.columns: dict[str, list[object]] = {n: [] for n in self._SCALARS}
        self.words: list[str] = []
        self.word_offsets = [0]
        self.link_url: list[str] = []
        self.link_anchor: list[str] = []
        self.link_nofollow: list[bool] = []
        self.link_offsets = [0]
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self.word_offsets) - 1

    def append(self, page: Page) -> None:
        for name in self._SCALARS:
            self.columns[name].append(getattr(page, name))
        self.words.extend(page.words)
        self.word_offsets.append(len(self.words))
        for link in page.links:
            self.link_url.append(link["url"])  # type: ignore[arg-type]
            self.link_anchor.append(link["anchor"])  # type: ignore[arg-type]
            self.link_nofollow.append(link["nofollow"])  # type: ignore[arg-type]
        self.link_offsets.append(len(self.link_url))
        self.nbytes += 2 * page.html_bytes + 64 * len(page.words) + 200 * len(page.links)

    def to_table(self) -> pa.Table:
        arrays = []
        for field in PAGE_SCHEMA:
            if field.name == "words":
                arrays.append(pa.ListArray.from_arrays(pa.array(self.word_offsets, pa.int32()),
                                                       pa.array(self.words, pa.string())))
            elif field.name == "links":
                structs = pa.StructArray.from_arrays(
                    [pa.array(self.link_url, pa.string()), pa.array(self.link_anchor, pa.string()),
                     pa.array(self.link_nofollow, pa.bool_())], fields=list(field.type.value_type))
                arrays.append(pa.ListArray.from_arrays(pa.array(self.link_offsets, pa.int32()), structs))
            else:
                arrays.append(pa.array(self.columns[field.name], field.type))
        return pa.Table.from_arrays(arrays, schema=PAGE_SCHEMA)


def doc_id_of(record_id: str) -> int:
    """Stable 63-bit id of a WARC-Record-ID (xxh3-64, top bit cleared so it fits int64 and
    JVM longs as a positive number).

    >>> doc_id_of("<urn:uuid:12345678-1234-5678-1234-567812345678>")
    4305714077980288852
    """
    return xxhash.xxh3_64_intdigest(record_id.encode("utf-8")) & 0x7FFF_FFFF_FFFF_FFFF


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_html_response(rec: WarcRecord) -> bool:
    """A WARC response record carrying HTML (by its HTTP Content-Type)."""
    return rec.rec_type == "response" and media_type(rec.http_header("Content-Type")) in HTML_TYPES


def trec_id_of(rec: WarcRecord) -> str | None:
    """The record's ``WARC-TREC-ID`` (``clueweb09-en0000-00-00000``), the id TREC
    judgements and the Waterloo spam rankings use; None when absent or blank."""
    return (rec.header("WARC-TREC-ID") or "").strip() or None


def _utf8_bytes(payload: bytes, decoded: Decoded) -> bytes | None:
    """``payload`` when it is exactly ``decoded.text`` in UTF-8 (a UTF-8 page with no byte
    replaced and no byte-order mark removed), else None."""
    if decoded.charset == "utf-8" and not decoded.errors and decoded.source != "bom":
        return payload
    return None


def page_from_record(rec: WarcRecord, snapshot: str) -> Page:
    """Parse a response record whose payload was read (see ``iter_records``)."""
    assert rec.payload is not None, "payload not read"
    url = rec.header("WARC-Target-URI") or ""
    url = url.strip().strip("<>")
    host = host_of(url)
    content_type = rec.http_header("Content-Type")
    decoded = decode_html(rec.payload, content_type)
    utf8 = _utf8_bytes(rec.payload, decoded)
    text = extract(decoded.text if utf8 is None else utf8, url)
    record_id = rec.header("WARC-Record-ID") or f"<{rec.file}#{rec.offset}>"
    status_line = rec.record.http_headers.get_statuscode() if rec.record.http_headers else None
    return Page(
        doc_id=doc_id_of(record_id),
        record_id=record_id,
        url=url,
        host=host,
        domain=registered_domain(host),
        ip=rec.header("WARC-IP-Address") or None,
        snapshot=snapshot,
        fetch_time=warc_date(rec.header("WARC-Date")),
        status=int(status_line) if status_line and str(status_line).isdigit() else None,
        content_type=content_type,
        charset=decoded.charset,
        title=text.title,
        words=text.words,
        links=[{"url": link.url, "anchor": link.anchor, "nofollow": link.nofollow} for link in text.links],
        noise=html_noise(decoded.text, utf8),
        html_bytes=len(rec.payload),
        truncated=rec.capped or rec.cut_short,
        warc_file=rec.file,
        warc_offset=rec.offset,
        trec_id=trec_id_of(rec),
        payload_digest=normalize_digest(rec.header("WARC-Payload-Digest")),
        decode_errors=decoded.errors,
        charset_source=decoded.source,
    )
