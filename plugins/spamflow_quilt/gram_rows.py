"""A snapshot's (gram, line) rows in fine gram-bucket files and its pages in arrays: what the
memory engine reads, made straight from the page table or from a shingle file.

The MapReduce jobs need the shingle file (a text line per gram set, its grams packed); the
memory engine only needs each line's grams and each page's few numbers.  Writing the file
(packing, zstd, base64) and parsing it back cost more than the engine's arithmetic, so
:func:`shingle_to_rows` hashes the pages (:func:`~spamflow_quilt.shingle.batch_gram_hashes`,
the same grams) and appends the rows to files by the top :data:`FINE_BITS` bits of the gram,
in ``workers`` processes as :func:`~spamflow_quilt.shingle.write_shingles` does, with copies
collapsed the same way (a line per gram set within each process's windows of
``window_pages`` pages, so the same ``copies`` count).  A gram set is named by a hash of its
grams' bytes, not of their packed text: names are only compared, so the result is the same.
The engine's gram bucket b of B (a power of two up to 256) is then the fine buckets
``b * 256 / B`` .. ``(b + 1) * 256 / B - 1`` (:func:`~spamflow_quilt.buckets.gram_bucket`
takes a gram's top bits).
"""

from __future__ import annotations

import multiprocessing
from array import array
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xxhash import xxh3_64_intdigest

from spamflow.bucket_files import BucketFiles
from spamflow_quilt.copies import MAX_ORDINAL, WINDOW_PAGES
from spamflow_quilt.mr_gram_df import shingle_pages
from spamflow_quilt.servers import NO_SERVER, server_id
from spamflow_quilt.shingle import gram_batches, row_groups

FINE_BITS = 8
FINE_BUCKETS = 1 << FINE_BITS
"""Gram-bucket files each part writes; the engine uses up to this many buckets."""

FLUSH_ROWS = 1 << 22
"""Rows buffered before they are appended to their bucket files."""

LINE_GRAM_ROW = np.dtype([("gram", "<u8"), ("line", "<u4")])


@dataclass
class GramRows:
    """A snapshot for the memory engine: its pages (columns line ordinal, doc, number of grams,
    domain id, IP id, gram set: job (a)'s ``S`` rows) and its lines' grams in fine bucket files
    (one set of files per part)."""

    pages: list[np.ndarray]
    parts: list[BucketFiles]
    counts: dict[str, int]

    def rows(self) -> int:
        """(gram, line) rows in the files."""
        return sum(part.size(b) for part in self.parts for b in range(FINE_BUCKETS)) // LINE_GRAM_ROW.itemsize

    def take(self, bucket: int, buckets: int) -> np.ndarray:
        """The rows of gram bucket ``bucket`` of ``buckets`` (a power of two, at most
        :data:`FINE_BUCKETS`); their files removed."""
        if FINE_BUCKETS % buckets:
            raise ValueError(f"gram buckets must divide {FINE_BUCKETS}, got {buckets}")
        width = FINE_BUCKETS // buckets
        chunks = [rows for part in self.parts for fine in range(bucket * width, (bucket + 1) * width)
                  for rows in part.take(fine)]
        return np.concatenate(chunks) if chunks else np.empty(0, LINE_GRAM_ROW)


def fine_bucket(grams: np.ndarray) -> np.ndarray:
    return grams >> np.uint64(64 - FINE_BITS)


class _RowWriter:
    """Rows to one part's fine bucket files, and its pages' columns."""

    def __init__(self, folder: Path, name: str) -> None:
        self.files = BucketFiles(folder, name, LINE_GRAM_ROW, FINE_BUCKETS)
        self.grams: list[np.ndarray] = []
        self.lines: list[np.ndarray] = []
        self.rows = 0
        self.pages = [array("Q") for _ in range(6)]

    def add_lines(self, grams: np.ndarray, lines: np.ndarray) -> None:
        """Rows (gram, line ordinal)."""
        self.grams.append(grams)
        self.lines.append(lines)
        self.rows += len(grams)
        if self.rows >= FLUSH_ROWS:
            self.flush()

    def add_page(self, *columns: int) -> None:
        for column, value in zip(self.pages, columns):
            column.append(value)

    def flush(self) -> None:
        if not self.rows:
            return
        grams = np.concatenate(self.grams).astype(np.uint64, copy=False)
        lines = np.concatenate(self.lines).astype(np.uint32, copy=False)
        self.grams, self.lines, self.rows = [], [], 0
        fine = fine_bucket(grams).astype(np.uint8)
        order = np.argsort(fine, kind="stable")  # a radix sort on 8 bits
        grams, lines = grams[order], lines[order]
        bounds = np.searchsorted(fine[order], np.arange(FINE_BUCKETS + 1)).tolist()
        for bucket, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
            if hi > lo:
                self.files.write(bucket, gram=grams[lo:hi], line=lines[lo:hi])

    def close(self) -> list[np.ndarray]:
        self.flush()
        self.files.close()
        return [np.frombuffer(column, np.uint64) if len(column) else np.empty(0, np.uint64) for column in self.pages]


def shingle_to_rows(pages: Path, folder: Path, k: int, snapshot: str | None = None, *, workers: int = 1,
                    window_pages: int = WINDOW_PAGES) -> GramRows:
    """:func:`~spamflow_quilt.shingle.write_shingles` for the memory engine: the same pages,
    grams, copies and counts, as :class:`GramRows` under ``folder``."""
    units = row_groups(pages)
    shares = [units[i::workers] for i in range(workers)] if workers > 1 else [units]
    shares = [share for share in shares if share] or [[]]
    jobs = [(share, folder, k, snapshot, w, len(shares), window_pages) for w, share in enumerate(shares)]
    if len(jobs) == 1:
        results = [_rows_of_share(jobs[0])]
    else:
        with ProcessPoolExecutor(len(jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(_rows_of_share, jobs))
    counts = {"pages": 0, "pages_without_grams": 0, "grams": 0, "copies": 0}
    for _, part_counts in results:
        for name, n in part_counts.items():
            counts[name] += n
    columns = [np.concatenate([page_columns[i] for page_columns, _ in results]) for i in range(6)]
    parts = [BucketFiles(folder, f"grams{w}", LINE_GRAM_ROW, FINE_BUCKETS) for w in range(len(jobs))]
    return GramRows(columns, parts, counts)


def _rows_of_share(job: tuple) -> tuple[list[np.ndarray], dict[str, int]]:
    """Shingle some row groups into one part's files, copies collapsed within windows (runs in a
    worker process); lines numbered ``first``, ``first + step``, ..."""
    units, folder, k, snapshot, first, step, window_pages = job
    out = _RowWriter(folder, f"grams{first}")
    counts = {"pages": 0, "pages_without_grams": 0, "grams": 0, "copies": 0}
    line_of: dict[int, int] = {}  # gram set name -> its line, this window
    ordinal, in_window = first, 0
    for grams, bounds, docs, domains, ips in gram_batches(units, k, snapshot, counts):
        new_lines = np.full(len(docs), MAX_ORDINAL, np.int64)  # the line each page starts, if any
        for i, (doc, domain, ip) in enumerate(zip(docs, domains, ips)):
            page_grams = grams[bounds[i]:bounds[i + 1]]
            name = xxh3_64_intdigest(page_grams.tobytes()) if len(page_grams) else None
            line = None if name is None else line_of.get(name)
            if line is None:
                if ordinal >= MAX_ORDINAL:
                    raise ValueError(f"page ordinal {ordinal} is out of range: a snapshot holds at most "
                                     f"{MAX_ORDINAL} lines; split it")
                line, ordinal = ordinal, ordinal + step
                if name is not None:
                    line_of[name] = line
                new_lines[i] = line
            else:
                counts["copies"] += 1
            out.add_page(line, doc, len(page_grams), server_id(domain or NO_SERVER), server_id(ip or NO_SERVER),
                         name or 0)
            in_window += 1
            if in_window >= window_pages:
                line_of, in_window = {}, 0
        line_of_gram = np.repeat(new_lines, np.diff(bounds))  # a copy's grams are its line's: left out
        starts = line_of_gram != MAX_ORDINAL
        out.add_lines(grams[starts], line_of_gram[starts])
    return out.close(), counts


def read_shingle_rows(shingles: Path, folder: Path) -> GramRows:
    """A shingle file as :class:`GramRows` (job (a)'s mapper over the whole file)."""
    out = _RowWriter(folder, "grams0")
    with open(shingles, "rb") as fh:
        for line in fh:
            try:
                ordinal, grams, page_rows = shingle_pages(line)
            except ValueError as exc:
                raise ValueError(f"{shingles}: {exc}") from None
            out.add_lines(grams, np.full(len(grams), ordinal, np.uint32))
            for row in page_rows:
                out.add_page(*row)
    return GramRows(out.close(), [out.files], {})
