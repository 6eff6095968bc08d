"""Where a page's identifiers come from: its row of the page table (links) and its HTML body,
read again from the WARC record the row names (the page table keeps no script text).

Importable without spamflow (the MapReduce job uses it): the WARC reader, the doc_id
derivation and the remote-file download are core spamflow functions imported inside
:func:`warc_html_ids`, the only function that needs them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from spamflow_ids.extract import IdRules, html_ids, page_ids

PAGE_COLUMNS = ["doc_id", "snapshot", "host", "domain", "url", "links"]


def _open(path: str) -> Any:
    """A part open for reading, a local file or a URL (a remote workdir's part)."""
    from spamflow.storage import open_input

    return open_input(path)


def part_pages(path: str) -> Iterator[tuple[int, str, str, str, str, list[str]]]:
    """(doc_id, snapshot, host, domain, url, link urls) of every row of one page-table part."""
    with _open(path) as source, pq.ParquetFile(source) as part:
        for batch in part.iter_batches(batch_size=2048, columns=PAGE_COLUMNS):
            cols = batch.to_pydict()
            for doc_id, snapshot, host, domain, url, links in zip(cols["doc_id"], cols["snapshot"], cols["host"],
                                                                 cols["domain"], cols["url"], cols["links"]):
                yield doc_id, snapshot, host, domain, url, [link["url"] for link in links or ()]


def part_page_ids(path: str, rules: IdRules) -> Iterator[tuple[int, str, str, str, str, list[str]]]:
    """(doc_id, snapshot, host, domain, url, link identifiers) of every row of one part."""
    for doc_id, snapshot, host, domain, url, links in part_pages(path):
        yield doc_id, snapshot, host, domain, url, page_ids(links, host, domain, rules)


def warc_html_ids(location: str, kinds: list[str], max_bytes: int, spool: Path) -> Iterator[tuple[int, list[str]]]:
    """(doc_id, identifiers) of every HTML response of one WARC or ARC file that carries any:
    the same records, doc_ids and body cap as the parse stage's. Revisit records carry no body:
    their pages get their link identifiers only. Unreadable records are skipped (parse has
    reported them)."""
    from spamflow.inputs import local_copy
    from spamflow.parse.pages import doc_id_of, is_html_response
    from spamflow.parse.warc_records import WarcRecord, iter_records

    with local_copy(location, spool) as path:
        for rec in iter_records(path, wants_payload=is_html_response, max_bytes=max_bytes, name=location):
            if not isinstance(rec, WarcRecord) or rec.payload is None:
                continue
            found = html_ids(rec.payload.decode("latin-1"), kinds)  # the ids are ASCII: any byte decoding keeps them
            if found:
                record_id = rec.header("WARC-Record-ID") or f"<{rec.file}#{rec.offset}>"
                yield doc_id_of(record_id), found
