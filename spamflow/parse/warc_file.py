"""The parse stage's work on one WARC file: records in, Parquet page rows out, every
skip counted and every problem reported with file and offset."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from spamflow.errors import BadInputError, plain_reason
from spamflow.parse.content_encoding import decodable
from spamflow.parse.html_depth import DEFAULT_MAX_DEPTH, cut_offset
from spamflow.parse.pages import PAGE_SCHEMA, PARQUET_OPTIONS, PageBatch, is_html_response, media_type, parse_record
from spamflow.parse.revisits import Revisit, revisit_of
from spamflow.parse.warc_records import BadRecord, WarcRecord, iter_records

BATCH_ROWS = 512
BATCH_BYTES = 128 << 20  # flush earlier when pages are large: memory stays flat


@dataclass
class FileParse:
    """What parsing one WARC file produced."""

    file: str
    counts: Counter[str] = field(default_factory=Counter)
    bad_records: list[dict[str, object]] = field(default_factory=list)
    revisits: list[Revisit] = field(default_factory=list)
    """Revisits that may be HTML pages, resolved once every file is parsed (``spamflow.parse.revisits``)."""


def parse_warc_file(path: str | Path, snapshot: str, out_path: str | Path, *, max_bytes: int,
                    strict: bool = False, progress: Callable[[int], None] | None = None,
                    name: str | None = None, max_depth: int = DEFAULT_MAX_DEPTH) -> FileParse:
    """Parse every HTML response of ``path`` into the Parquet file ``out_path``; collect
    the revisits that may be pages in ``FileParse.revisits``.

    A page nested deeper than ``max_depth`` is parsed up to the start tag that would open the
    deeper element and reported ``too_deep`` (:mod:`spamflow.parse.html_depth`).

    ``progress`` is called with the number of bytes of the file read so far.  ``name``: the
    file as rows and problems name it (a remote file's URL when ``path`` is its local spool).
    """
    result = FileParse(name or str(path))
    counts = result.counts

    def problem(file: str, offset: int, kind: str, detail: str) -> None:
        detail = plain_reason(detail)  # a reason may quote the file's bytes: one short printable line
        entry = {"file": file, "offset": offset, "kind": kind, "reason": detail}
        if strict:
            raise BadInputError(f"{file} at offset {offset}: {kind}: {detail} (drop --strict to count and go on)")
        counts[f"bad_{kind}"] += 1
        result.bad_records.append(entry)

    batch = PageBatch()
    with pq.ParquetWriter(str(out_path), PAGE_SCHEMA, **PARQUET_OPTIONS) as writer:
        for item in iter_records(path, wants_payload=is_html_response, max_bytes=max_bytes,
                                 name=result.file):
            if isinstance(item, BadRecord):
                problem(item.file, item.offset, "unreadable", item.reason)
                continue
            counts["records"] += 1
            counts[f"records_{item.rec_type or 'unknown'}"] += 1
            if item.length_problem:
                problem(item.file, item.offset, "wrong_length", item.length_problem)
            _note_date(item, counts, problem)
            if progress is not None:
                progress(item.offset)
            if item.rec_type == "revisit":
                revisit = revisit_of(item, snapshot)
                if revisit.declares_non_html:
                    counts["skipped_revisit_non_html"] += 1
                else:
                    result.revisits.append(revisit)
                continue
            if item.rec_type != "response":
                continue
            if not is_html_response(item):
                if item.cut_short and not item.http_header("Content-Type") and not item.length_problem:
                    problem(item.file, item.offset, "cut_short", "the file ends inside this record's HTTP headers, "
                            "before a Content-Type: no page (it may have been one)")
                else:
                    counts["skipped_non_html"] += 1
                continue
            encoding = item.http_header("Content-Encoding")
            if not decodable(encoding):
                problem(item.file, item.offset, "undecoded_encoding",
                        f"Content-Encoding {encoding!r} is not one spamflow decodes (gzip, deflate, br, zstd); "
                        "page skipped rather than parsed from compressed bytes")
                continue
            _note_payload_problems(item, problem, max_bytes)
            if item.payload and (cut := cut_offset(item.payload, max_depth)) is not None:
                problem(item.file, item.offset, "too_deep", f"elements nested deeper than parse.max_depth={max_depth}; "
                        f"parsed the first {cut} of {len(item.payload)} bytes, up to the start tag that went deeper")
                item.payload, item.too_deep = item.payload[:cut], True
            try:
                page = parse_record(item, snapshot)
            except Exception as exc:  # noqa: BLE001 - a parser bug must not lose the file
                problem(item.file, item.offset, "unparseable", f"{type(exc).__name__}: {exc}")
                continue
            if page.decode_errors:
                problem(item.file, item.offset, "decode_errors",
                        f"{page.decode_errors} undecodable bytes replaced (charset {page.columns['charset']})")
            if page.charset_source in ("fallback", "detected"):  # declared nothing, not UTF-8
                counts[f"charset_{page.charset_source}"] += 1
            batch.append(page)
            counts["pages"] += 1
            if len(batch) >= BATCH_ROWS or batch.nbytes >= BATCH_BYTES:
                writer.write_table(batch.to_table())
                batch.clear()
        if len(batch):
            writer.write_table(batch.to_table())
    return result


def _note_date(item: WarcRecord, counts: Counter[str], problem: Callable[[str, int, str, str], None]) -> None:
    """Count a repaired WARC-Date (``dates_repaired_<rule>``); report one that cannot be read."""
    raw = item.header("WARC-Date")
    parsed = item.date()
    if parsed.repair:
        counts[f"dates_repaired_{parsed.repair.replace('-', '_')}"] += 1
    elif parsed.value is None and raw and raw.strip():
        problem(item.file, item.offset, "bad_date", f"WARC-Date {raw.strip()!r} is not a date; fetch_time left empty")


def _note_payload_problems(item: WarcRecord, problem: Callable[[str, int, str, str], None],
                           max_bytes: int) -> None:
    if item.cut_short and not item.length_problem:  # a wrong length is reported once, as wrong_length
        problem(item.file, item.offset, "cut_short", "the file ends inside this record; parsed what was there")
    if item.capped:
        problem(item.file, item.offset, "truncated",
                f"body longer than parse.max_bytes={max_bytes}; parsed the first {max_bytes} bytes")
    if not item.payload:
        problem(item.file, item.offset, "empty",
                f"{media_type(item.http_header('Content-Type'))} response with an empty body")
