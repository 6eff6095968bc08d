"""Small page tables for the content tests: rows of the parse stage's PAGE_SCHEMA."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spamflow.parse.pages import PAGE_SCHEMA, doc_id_of


def page_row(url: str, words: list[str], *, snapshot: str = "2026-01", title: str = "",
             links: list[tuple[str, str]] = (), html_bytes: int = 1000) -> dict:
    host = url.split("/")[2]
    record_id = f"<urn:test:{snapshot}:{url}>"
    return {"doc_id": doc_id_of(record_id), "record_id": record_id, "url": url, "host": host, "domain": host,
            "ip": None, "snapshot": snapshot, "fetch_time": None, "status": 200, "content_type": "text/html",
            "charset": "utf-8", "title": title, "words": words,
            "links": [{"url": u, "anchor": a, "nofollow": False} for u, a in links],
            "noise": "", "html_bytes": html_bytes, "truncated": False, "warc_file": "test.warc.gz",
            "warc_offset": 0}


def write_pages(rows: list[dict], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=PAGE_SCHEMA), folder / "part-00000.parquet")
    return folder
