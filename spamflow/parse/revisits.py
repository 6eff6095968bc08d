"""WARC ``revisit`` records as pages: a revisit says "this URL, at this time, had the content
of an earlier capture", so its page row is the earlier capture's row with the revisit's own
identity (id, URL, snapshot, time, address, place in the WARC).

Parse reads files one at a time (in parallel), and a revisit's original is usually in
another file (an earlier snapshot's), so revisits are collected while parsing
(:func:`revisit_of`) and resolved once every file is parsed (:func:`resolve_revisits`),
against the page table itself.  The original is found by ``WARC-Refers-To`` (the same
``doc_id_of`` as for every page), else by ``WARC-Refers-To-Target-URI`` +
``WARC-Refers-To-Date`` (WARC/1.1 section 6.7.2), else by the target URI (or
``WARC-Refers-To-Target-URI``) + ``WARC-Payload-Digest``: Heritrix's deduplication writes
WARC/1.0 ``identical-payload-digest`` revisits with no refers-to headers at all, and
CDX-based replay tools find their original the same way.  A revisit of a revisit follows
the chain.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from spamflow.domains import host_of, registered_domain
from spamflow.parse.pages import HTML_TYPES, PAGE_SCHEMA, PARQUET_OPTIONS, doc_id_of, media_type, trec_id_of
from spamflow.parse.payload_digest import normalize_digest
from spamflow.parse.warc_records import WarcRecord, iter_records, warc_date

NOT_MODIFIED = 304
READ_ROWS = 4096  # rows per batch when scanning the page table

Key = tuple[str, object]  # ("id", doc_id), ("at", (url, fetch_time)) or ("digest", (url, payload digest))


@dataclass(frozen=True)
class Revisit:
    """What a revisit record says about itself and about the capture it repeats."""

    file: str
    offset: int
    record_id: str
    url: str
    ip: str | None
    snapshot: str
    fetch_time: datetime | None
    status: int | None
    content_type: str | None
    refers_to: str | None
    refers_to_url: str | None
    refers_to_date: datetime | None
    trec_id: str | None = None
    payload_digest: str | None = None  # normalised (spamflow.parse.payload_digest)

    @property
    def doc_id(self) -> int:
        return doc_id_of(self.record_id)

    @property
    def keys(self) -> list[Key]:
        """How the original can be recognised, best first."""
        keys: list[Key] = []
        if self.refers_to:
            keys.append(("id", doc_id_of(self.refers_to)))
        if self.refers_to_url and self.refers_to_date is not None:
            keys.append(("at", (self.refers_to_url, self.refers_to_date)))
        if self.payload_digest:
            keys.append(("digest", (self.refers_to_url or self.url, self.payload_digest)))
        return keys

    @property
    def own_keys(self) -> list[Key]:
        """How another revisit may refer to this one."""
        keys: list[Key] = [("id", self.doc_id)]
        if self.fetch_time is not None:
            keys.append(("at", (self.url, self.fetch_time)))
        return keys

    @property
    def declares_non_html(self) -> bool:
        """The revisit carries a Content-Type of its own that is not HTML (robots.txt, CSS...)."""
        return bool(self.content_type) and media_type(self.content_type) not in HTML_TYPES

    def where(self) -> str:
        return f"revisit {self.record_id} of {self.url}"

    def refers(self) -> str:
        """What the revisit names as its original, for messages."""
        said = []
        if self.refers_to:
            said.append(self.refers_to)
        if self.refers_to_url or self.refers_to_date:
            said.append(f"{self.refers_to_url} at {self.refers_to_date}")
        if self.payload_digest:
            said.append(f"payload {self.payload_digest}")
        return ", ".join(said) or "nothing"


def _clean_url(value: str | None) -> str:
    return (value or "").strip().strip("<>")


def revisit_of(rec: WarcRecord, snapshot: str) -> Revisit:
    """The :class:`Revisit` of a ``revisit`` record (its payload is not needed)."""
    status = rec.record.http_headers.get_statuscode() if rec.record.http_headers else None
    return Revisit(
        file=rec.file,
        offset=rec.offset,
        record_id=rec.header("WARC-Record-ID") or f"<{rec.file}#{rec.offset}>",
        url=_clean_url(rec.header("WARC-Target-URI")),
        ip=rec.header("WARC-IP-Address") or None,
        snapshot=snapshot,
        fetch_time=warc_date(rec.header("WARC-Date")),
        status=int(status) if status and str(status).isdigit() else None,
        content_type=rec.http_header("Content-Type"),
        refers_to=(rec.header("WARC-Refers-To") or "").strip() or None,
        refers_to_url=_clean_url(rec.header("WARC-Refers-To-Target-URI")) or None,
        refers_to_date=warc_date(rec.header("WARC-Refers-To-Date")),
        trec_id=trec_id_of(rec),
        payload_digest=normalize_digest(rec.header("WARC-Payload-Digest")),
    )


@dataclass
class Resolution:
    """What became of the revisits: ``pages`` rows written, the rest with a reason."""

    pages: int
    unresolved: list[tuple[Revisit, str]]


def _chain_ends(revisits: list[Revisit]) -> list[list[Key]]:
    """For each revisit, the keys of the capture at the end of its chain of revisits."""
    by_key: dict[Key, int] = {}
    for i, r in enumerate(revisits):
        for key in r.own_keys:
            by_key.setdefault(key, i)
    ends = []
    for i, r in enumerate(revisits):
        seen = {i}
        current = r
        while True:
            nxt = next((by_key[k] for k in current.keys if k in by_key and by_key[k] not in seen), None)
            if nxt is None:
                break
            seen.add(nxt)
            current = revisits[nxt]
        ends.append(current.keys)
    return ends


def _batch_matches(batch: pa.RecordBatch, ids: pa.Array, urls: pa.Array,
                   digests: pa.Array) -> Iterator[tuple[int, Key]]:
    """(row, key) for the rows of ``batch`` whose doc_id is in ``ids``, whose url is in
    ``urls`` or whose payload digest is in ``digests`` (vectorised: only those rows become
    Python objects)."""
    for row in np.flatnonzero(pc.is_in(batch.column("doc_id"), value_set=ids).to_numpy(zero_copy_only=False)):
        yield int(row), ("id", batch.column("doc_id")[row].as_py())
    hits = np.flatnonzero(pc.is_in(batch.column("url"), value_set=urls).to_numpy(zero_copy_only=False))
    if len(hits):
        picked = pa.array(hits)
        for row, url, when in zip(hits, batch.column("url").take(picked).to_pylist(),
                                  batch.column("fetch_time").take(picked).to_pylist()):
            yield int(row), ("at", (url, when))
    if "payload_digest" not in batch.schema.names:
        return  # a page table written before the column existed
    hits = np.flatnonzero(pc.is_in(batch.column("payload_digest"), value_set=digests)
                          .to_numpy(zero_copy_only=False))
    if len(hits):
        picked = pa.array(hits)
        for row, url, digest in zip(hits, batch.column("url").take(picked).to_pylist(),
                                    batch.column("payload_digest").take(picked).to_pylist()):
            yield int(row), ("digest", (url, digest))


def resolve_revisits(revisits: list[Revisit], parts: Iterable[Path], out_path: Path) -> Resolution:
    """Write one page row per revisit whose original is a row of ``parts`` to ``out_path``.

    The row is the original's, with the revisit's own ``doc_id``, ``record_id``, ``url``
    (and so ``host``, ``domain``), ``ip``, ``snapshot``, ``fetch_time``, ``warc_file`` and
    ``warc_offset``, and its own ``status`` unless that is 304 (``server-not-modified``:
    the server confirms the earlier answer, so the original's status stands).  Two passes
    over the page table: its key columns to find the originals, then the parts that hold
    one, batch by batch, so memory is bounded by the revisits, not the table.
    """
    wanted: dict[Key, list[tuple[int, int]]] = {}  # key -> (revisit, preference: 0 is best)
    for i, keys in enumerate(_chain_ends(revisits)):
        for rank, key in enumerate(keys):
            wanted.setdefault(key, []).append((i, rank))
    best: dict[int, tuple[int, int, int]] = {}  # revisit -> (preference, part, row), first match kept
    ids = pa.array([k[1] for k in wanted if k[0] == "id"], pa.int64())
    urls = pa.array(list({k[1][0] for k in wanted if k[0] == "at"}), pa.string())  # type: ignore[index]
    digests = pa.array(list({k[1][1] for k in wanted if k[0] == "digest"}), pa.string())  # type: ignore[index]
    parts = list(parts)
    for p, part in enumerate(parts):
        base = 0
        table = pq.ParquetFile(part)
        columns = [c for c in ("doc_id", "url", "fetch_time", "payload_digest") if c in table.schema_arrow.names]
        for batch in table.iter_batches(batch_size=READ_ROWS, columns=columns):
            for row, key in _batch_matches(batch, ids, urls, digests):
                for i, rank in wanted.get(key, ()):
                    if i not in best or rank < best[i][0]:
                        best[i] = (rank, p, base + row)
            base += batch.num_rows
    found = {i: (p, row) for i, (_, p, row) in best.items()}
    by_part: dict[int, list[tuple[int, int]]] = {}
    for i, (p, row) in sorted(found.items()):
        by_part.setdefault(p, []).append((row, i))
    written = 0
    with pq.ParquetWriter(str(out_path), PAGE_SCHEMA, **PARQUET_OPTIONS) as writer:
        for p, wants in sorted(by_part.items()):
            wants.sort()
            base, k = 0, 0
            for batch in pq.ParquetFile(parts[p]).iter_batches(batch_size=READ_ROWS):
                here = []
                while k < len(wants) and wants[k][0] < base + batch.num_rows:
                    here.append(wants[k])
                    k += 1
                if here:
                    originals = pa.Table.from_batches([batch]).take([row - base for row, _ in here])
                    writer.write_table(_as_revisits(originals, [revisits[i] for _, i in here]))
                    written += len(here)
                base += batch.num_rows
                if k == len(wants):
                    break
    unresolved = [(r, "its original is not an HTML page of the input") for i, r in enumerate(revisits)
                  if i not in found]
    return Resolution(written, unresolved)


def _as_revisits(originals: pa.Table, revisits: list[Revisit]) -> pa.Table:
    """The original rows with each revisit's own identity."""
    statuses = originals.column("status").to_pylist()
    same_url = [r.url == url for r, url in zip(revisits, originals.column("url").to_pylist())]
    hosts = [old if same else host_of(r.url)
             for r, old, same in zip(revisits, originals.column("host").to_pylist(), same_url)]
    domains = [old if same else registered_domain(host)
               for old, host, same in zip(originals.column("domain").to_pylist(), hosts, same_url)]
    own = {
        "doc_id": [r.doc_id for r in revisits],
        "record_id": [r.record_id for r in revisits],
        "url": [r.url for r in revisits],
        "host": hosts,
        "domain": domains,
        "ip": [r.ip for r in revisits],
        "snapshot": [r.snapshot for r in revisits],
        "fetch_time": [r.fetch_time for r in revisits],
        "status": [old if r.status in (None, NOT_MODIFIED) else r.status for r, old in zip(revisits, statuses)],
        "warc_file": [r.file for r in revisits],
        "warc_offset": [r.offset for r in revisits],
        "trec_id": [r.trec_id for r in revisits],  # the revisit's own id, not its original's
    }
    table = originals
    for name, values in own.items():
        index = PAGE_SCHEMA.get_field_index(name)
        table = table.set_column(index, PAGE_SCHEMA.field(name), pa.array(values, PAGE_SCHEMA.field(name).type))
    return table


def non_html_originals(unresolved: list[Revisit], files: Iterable[str | Path]) -> set[int]:
    """Indexes of ``unresolved`` whose original is a non-HTML ``response`` of ``files``.

    A 304 revisit of a robots.txt or an image carries no Content-Type, so only its
    original tells that it is not a page.  Headers only: payloads are not read.
    """
    wanted: dict[Key, list[int]] = {}
    for i, r in enumerate(unresolved):
        for key in r.keys:
            wanted.setdefault(key, []).append(i)
    hits: set[int] = set()
    if not wanted:
        return hits
    for path in files:
        for item in iter_records(path):
            if not isinstance(item, WarcRecord) or item.rec_type != "response":
                continue
            if media_type(item.http_header("Content-Type")) in HTML_TYPES:
                continue  # an HTML original that is not a page was reported when it was parsed
            record_id = item.header("WARC-Record-ID")
            at = (_clean_url(item.header("WARC-Target-URI")), warc_date(item.header("WARC-Date")))
            keys: list[Key] = [("at", at)]
            if record_id:
                keys.append(("id", doc_id_of(record_id)))
            digest = normalize_digest(item.header("WARC-Payload-Digest"))
            if digest:
                keys.append(("digest", (at[0], digest)))
            for key in keys:
                hits.update(wanted.get(key, ()))
    return hits
