"""The page record: one row per HTML response, the input of every detector.

``PAGE_SCHEMA`` is the Parquet schema of the ``pages`` output of the parse stage;
``docs/parse.md`` documents each field.  :func:`page_from_record` is a pure function from
a WARC record to a row, so it runs the same in a task, a test or a mapper.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from spamflow.domains import host_of, registered_domain
from spamflow.parse.charset import Decoded, decode_html
from spamflow.parse.html_text import Link, extract_spaced
from spamflow.parse.payload_digest import normalize_digest
from spamflow.parse.warc_records import WarcRecord
from spamflow.words import html_noise_utf8

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


@dataclass
class ParsedPage:
    """A page as the parse stage buffers it: its scalar columns, and its words and links in
    the form that is cheapest to turn into Arrow columns (:class:`PageBatch`).  ``page()``
    gives the :class:`Page`."""

    columns: dict[str, object]  # the scalar columns of PAGE_SCHEMA (not words, not links), by name; noise in UTF-8
    word_text: bytes  # the words in UTF-8, separated by runs of spaces (``spamflow.words.word_text``)
    links: list[Link]
    decode_errors: int = 0
    charset_source: str = ""

    def page(self) -> Page:
        columns = {**self.columns, "noise": self.columns["noise"].decode("utf-8", "surrogatepass")}  # type: ignore[attr-defined]
        return Page(**columns, words=self.word_text.decode("utf-8").split(),
                    links=[{"url": link.url, "anchor": link.anchor, "nofollow": link.nofollow} for link in self.links],
                    decode_errors=self.decode_errors, charset_source=self.charset_source)


class PageBatch:
    """Pages buffered column by column, flushed as one Arrow table.

    Building columns directly (words and links as flat arrays plus offsets) avoids a dict
    per row; ``nbytes`` lets the writer flush by size so memory stays bounded whatever
    the page size.  The words of a :class:`ParsedPage` stay one spaced string until Arrow
    splits them, a batch at a time: a Python string per word (~1,000 a page) cost as much
    as finding the words.
    """

    _SCALARS = [n for n in PAGE_SCHEMA.names if n not in ("words", "links")]

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.columns: dict[str, list[object]] = {n: [] for n in self._SCALARS}
        self.word_rows: list[bytes | list[str]] = []  # per row: a spaced word text, or a Page's word list
        self.links: list[tuple[str, str, bool]] = []
        self.link_offsets = [0]
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self.word_rows)

    def append(self, page: Page | ParsedPage) -> None:
        if isinstance(page, ParsedPage):
            for name, value in page.columns.items():
                self.columns[name].append(value)
            self.word_rows.append(page.word_text)
            self.links += page.links
            self.nbytes += 2 * page.columns["html_bytes"] + 10 * len(page.word_text)  # type: ignore[operator]
        else:
            for name in self._SCALARS:
                self.columns[name].append(getattr(page, name))
            self.word_rows.append(page.words)
            self.links += [(link["url"], link["anchor"], link["nofollow"]) for link in page.links]  # type: ignore[misc]
            self.nbytes += 2 * page.html_bytes + 64 * len(page.words)
        self.nbytes += 200 * (len(self.links) - self.link_offsets[-1])
        self.link_offsets.append(len(self.links))

    def to_table(self) -> pa.Table:
        arrays = []
        for field in PAGE_SCHEMA:
            if field.name == "words":
                arrays.append(self._words())
            elif field.name == "links":  # (url, anchor, nofollow) tuples convert to the structs in one call
                structs = pa.array(self.links, field.type.value_type)
                arrays.append(pa.ListArray.from_arrays(pa.array(self.link_offsets, pa.int32()), structs))
            else:
                arrays.append(pa.array(self.columns[field.name], field.type))
        return pa.Table.from_arrays(arrays, schema=PAGE_SCHEMA)

    def _words(self) -> pa.ListArray:
        if all(isinstance(row, bytes) for row in self.word_rows):
            return split_spaced(self.word_rows)  # type: ignore[arg-type]
        flat: list[str] = []
        offsets = [0]
        for row in self.word_rows:
            flat += row.decode("utf-8").split() if isinstance(row, bytes) else row
            offsets.append(len(flat))
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(flat, pa.string()))


def split_spaced(texts: list[bytes]) -> pa.ListArray:
    """Each UTF-8 text split at its runs of spaces, as ``bytes.split()`` splits it: an Arrow
    list of strings per text, with no empty string.  Arrow's split gives an empty string
    for a leading or trailing run and for an empty text, so the texts are stripped first
    and the single empty string of each empty text is dropped."""
    stripped = [text.strip(b" ") for text in texts]
    split = pc.ascii_split_whitespace(pa.array(stripped, pa.string()))
    empty = [i for i, text in enumerate(stripped) if not text]
    if not empty:
        return split
    offsets = split.offsets.to_numpy()
    keep = np.ones(offsets[-1], bool)
    keep[offsets[empty]] = False
    per_text = np.diff(offsets)
    per_text[empty] = 0
    new_offsets = np.zeros(len(texts) + 1, np.int32)
    np.cumsum(per_text, out=new_offsets[1:])
    return pa.ListArray.from_arrays(pa.array(new_offsets), split.values.filter(pa.array(keep)))


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
    return parse_record(rec, snapshot).page()


def parse_record(rec: WarcRecord, snapshot: str) -> ParsedPage:
    """:func:`page_from_record` as the parse stage buffers it (:class:`ParsedPage`)."""
    assert rec.payload is not None, "payload not read"
    url = rec.header("WARC-Target-URI") or ""
    url = url.strip().strip("<>")
    host = host_of(url)
    content_type = rec.http_header("Content-Type")
    decoded = decode_html(rec.payload, content_type)
    utf8 = _utf8_bytes(rec.payload, decoded)
    text = extract_spaced(decoded.text if utf8 is None else utf8, url)
    record_id = rec.header("WARC-Record-ID") or f"<{rec.file}#{rec.offset}>"
    status_line = rec.record.http_headers.get_statuscode() if rec.record.http_headers else None
    columns: dict[str, object] = {
        "doc_id": doc_id_of(record_id),
        "record_id": record_id,
        "url": url,
        "host": host,
        "domain": registered_domain(host),
        "ip": rec.header("WARC-IP-Address") or None,
        "snapshot": snapshot,
        "fetch_time": rec.date().value,
        "status": int(status_line) if status_line and str(status_line).isdigit() else None,
        "content_type": content_type,
        "charset": decoded.charset,
        "title": text.title,
        "noise": html_noise_utf8(decoded.text, utf8),  # UTF-8: Arrow takes it as it is
        "html_bytes": len(rec.payload),
        "truncated": rec.capped or rec.cut_short or rec.too_deep,
        "warc_file": rec.file,
        "warc_offset": rec.offset,
        "trec_id": trec_id_of(rec),
        "payload_digest": normalize_digest(rec.header("WARC-Payload-Digest")),
    }
    return ParsedPage(columns, text.word_text, text.links, decoded.errors, decoded.source)
