"""Jobs (a), (b), (c) in this process (``engine: memory``): the jobs' own array functions, with
the rows between them kept as raw arrays in bucket files instead of packed text records that
mrjob splits, sorts and hands to task processes.

On one machine the MapReduce plumbing cost more than the arithmetic: every row was packed
(zstd, base64) into a line, written, sorted, split and unpacked again at each step, and each
of a job's tasks started a Python process with its imports.  Here the shingle file is read
once; the (gram, line) rows go to gram-bucket files; each gram bucket gives its patch grams'
hits (:func:`~spamflow_quilt.mr_gram_df.patch_hits`, job (a)'s reducer), and the hits count
each line's patch grams (job (b)); the pages of every line (a few numbers a page) stay in
memory, so the hits of a gram bucket become its units and triples at once
(:func:`~spamflow_quilt.triples.hits_of_units`, job (c)'s mapper, and
:func:`~spamflow_quilt.triples.iter_unit_triples`, its first reducer), which go to gram-set
bucket files, each covered as job (c)'s second reducer does
(:func:`~spamflow_quilt.mr_quilt_cover.unit_covers`).  The result is the jobs' own, quilt
for quilt (tests/test_quilt_direct.py); memory is one bucket's rows plus the page table.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from spamflow.bucket_files import BucketFiles
from spamflow_quilt.buckets import RowBuffer, doc_bucket, gram_bucket
from spamflow_quilt.mr_gram_df import patch_hits, shingle_pages
from spamflow_quilt.mr_patch_fraction import patchy_mask
from spamflow_quilt.mr_quilt_cover import SPILL_BYTES, foreign_servers, unit_covers
from spamflow_quilt.params import QuiltParams
from spamflow_quilt.spill import GroupSpill
from spamflow_quilt.triples import hits_of_units, iter_unit_triples, line_unit_table

BUCKET_ROWS = 1 << 23
"""(gram, line) rows per gram bucket (16 bytes each on disk, ~4 copies of them in memory while
a bucket is reduced: ~0.5 GB)."""

FLUSH_ROWS = 1 << 22
"""Rows buffered before they are appended to their bucket files."""

SHINGLE_BYTES_PER_GRAM = 10
"""About this many bytes of shingle file per gram (a base64 64-bit hash and its share of the
line): how the bucket count is chosen before the rows are counted."""

SET_BUCKETS_PER_GRAM_BUCKET = 16
"""Gram-set buckets of triples per gram bucket: triples are ~5x the hits and ~1.5x the gram rows
(a 5 x 10^4-page snapshot: 22M gram rows, 7.3M hits, 34M triples), so that a set bucket's
triples stay well below ``spill_bytes`` and are covered without a spill to disk."""

GRAM_ROW = np.dtype([("gram", "<u8"), ("line", "<u4"), ("pages", "<u4")])
HIT_ROW = np.dtype([("line", "<u4"), ("gram", "<u8")])
TRIPLE_ROW = np.dtype([("rep", "<u8"), ("gram", "<u8"), ("source", "<u8")])


class PageTable:
    """Every page of the shingle file (a line and its copies): line ordinal, doc, number of
    grams, domain id, IP id, gram set: job (a)'s ``S`` rows, for the whole snapshot."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, ...]] = []

    def columns(self) -> list[np.ndarray]:
        table = np.array(self.rows, np.uint64).reshape(-1, 6).T
        return [np.ascontiguousarray(column) for column in table]


def read_shingles(shingles: Path, grams_out: BucketFiles, buckets: int) -> PageTable:
    """Job (a)'s mapper over the whole file: pages to a :class:`PageTable`, each line's grams to
    gram-bucket files with the line's ordinal and its number of pages."""
    pages = PageTable()
    rows = RowBuffer(3)

    def flush() -> None:
        grams, lines, weights = rows.take()
        grams_out.append(gram_bucket(grams.astype(np.uint64), buckets), gram=grams, line=lines, pages=weights)

    with open(shingles, "rb") as fh:
        for line in fh:
            try:
                ordinal, grams, page_rows = shingle_pages(line)
            except ValueError as exc:
                raise ValueError(f"{shingles}: {exc}") from None
            pages.rows.extend(page_rows)
            rows.add(grams, np.full(len(grams), ordinal, np.uint32), np.full(len(grams), len(page_rows), np.uint32))
            if rows.rows >= FLUSH_ROWS:
                flush()
    flush()
    grams_out.close()
    return pages


def direct_quilts(shingles: Path, params: QuiltParams, *, buckets: int | None = None,
                  spill_bytes: int = SPILL_BYTES) -> list[tuple[int, dict]]:
    """:func:`~spamflow_quilt.detector.find_quilts`'s result, [(doc_id, cover record)] by
    doc_id, computed in this process.  ``buckets`` (default: from the file's size) and
    ``spill_bytes`` bound memory and do not change the result."""
    if buckets is None:
        wanted = max(shingles.stat().st_size // SHINGLE_BYTES_PER_GRAM // BUCKET_ROWS, 1)
        buckets = 1 << (int(wanted) - 1).bit_length()
    with tempfile.TemporaryDirectory(prefix="direct-", dir=shingles.parent) as scratch:
        folder = Path(scratch)
        gram_rows = BucketFiles(folder, "grams", GRAM_ROW, buckets)
        pages = read_shingles(shingles, gram_rows, buckets)
        ordinals, docs, n_grams, domains, ips, sets = pages.columns()
        del pages

        # job (a) and job (b): each gram bucket's hits, and every line's number of patch grams
        hits = BucketFiles(folder, "hits", HIT_ROW, buckets)
        n_patch_of_line = np.zeros(int(ordinals.max()) + 1 if len(ordinals) else 0, np.uint64)
        for bucket in range(buckets):
            for rows in gram_rows.take(bucket):
                one = rows["pages"] == 1  # job (a)'s G rows (a line of one page); the others its W rows
                _, _, hit_lines, hit_grams = patch_hits(rows["gram"][one], rows["line"][one], rows["gram"][~one],
                                                        rows["line"][~one], rows["pages"][~one], params.m)
                del rows, one
                lines, n_hits = np.unique(hit_lines, return_counts=True)  # not a bincount over every line:
                n_patch_of_line[lines] += n_hits.astype(np.uint64)  # that would grow with buckets x lines
                hits.write(bucket, line=hit_lines, gram=hit_grams)
        hits.close()
        n_patch = n_patch_of_line[ordinals]
        patchy = patchy_mask(n_patch, n_grams, params.theta)

        # job (c): units of the lines with patch grams, each gram bucket's triples by gram-set bucket
        skip_copied = params.c >= 2
        servers, known = foreign_servers(params.foreign, docs, domains, ips)
        on_lines = known & (n_patch > 0)
        table = line_unit_table(ordinals[on_lines], docs[on_lines], servers=servers[on_lines],
                                patchy=patchy[on_lines].astype(np.uint8), sets=sets[on_lines],
                                skip_copied=skip_copied)
        set_buckets = min(SET_BUCKETS_PER_GRAM_BUCKET * buckets, 256)
        triples = BucketFiles(folder, "triples", TRIPLE_ROW, set_buckets)
        for bucket in range(buckets):
            for rows in hits.take(bucket):
                u_grams, reps, u_servers, u_patchy, u_sets = hits_of_units(
                    np.ascontiguousarray(rows["gram"]), np.ascontiguousarray(rows["line"]), table)
                del rows
                for set_ids, t_reps, t_grams, sources in iter_unit_triples(
                        u_grams, reps, servers=u_servers, sets=u_sets, patchy=u_patchy.astype(bool),
                        skip_copied=skip_copied):
                    triples.append(doc_bucket(set_ids, set_buckets), rep=t_reps, gram=t_grams, source=sources)
        triples.close()

        # job (c)'s cover: each gram-set bucket's patchy pages and triples
        q_bucket = doc_bucket(sets[patchy], set_buckets)
        order = np.argsort(q_bucket, kind="stable")
        q_columns = [column[patchy][order] for column in (docs, n_patch, n_grams, sets, domains, ips)]
        q_bounds = np.searchsorted(q_bucket[order], np.arange(set_buckets + 1)).tolist()
        found: list[tuple[int, dict]] = []
        for bucket in range(set_buckets):
            lo, hi = q_bounds[bucket], q_bounds[bucket + 1]
            for doc, cover in unit_covers([column[lo:hi] for column in q_columns],
                                          by_rep(triples, bucket, spill_bytes), c=params.c,
                                          foreign=params.foreign, phi=params.phi):
                found.append((doc, {**cover, "sources": [list(source) for source in cover["sources"]]}))  # as JSON
    return sorted(found)


def by_rep(triples: BucketFiles, bucket: int, spill_bytes: int) -> Iterator[tuple[np.ndarray, ...]]:
    """A gram-set bucket's triples (rep, gram, source) sorted by rep, in batches that hold
    every triple of a unit: at once when they fit in ``spill_bytes`` (any order within a unit:
    the greedy cover reads them as a set), else through a :class:`GroupSpill`."""
    if triples.size(bucket) <= spill_bytes:
        for rows in triples.take(bucket):
            order = np.argsort(rows["rep"])
            yield tuple(rows[name][order] for name in ("rep", "gram", "source"))
        return
    spill = GroupSpill(3, spill_bytes)
    for rows in triples.take(bucket, chunk_rows=FLUSH_ROWS):
        spill.add(rows["rep"], rows["gram"], rows["source"])
    yield from spill.groups()
