"""Jobs (a), (b), (c) in this process (``engine: memory``): the jobs' own array functions, with
the rows between them kept as raw arrays in bucket files instead of packed text records that
mrjob splits, sorts and hands to task processes.

On one machine the MapReduce plumbing cost more than the arithmetic: every row was packed
(zstd, base64) into a line, written, sorted, split and unpacked again at each step, and each
of a job's tasks started a Python process with its imports.  Here the shingle file is read
once; the (gram, line) rows go to gram-bucket files; each gram bucket gives its patch grams'
hits (:func:`~spamflow_quilt.mr_gram_df.patch_hits`, job (a)'s reducer), and the hits count
each line's patch grams (job (b)).  Job (c)'s units and candidates are found once for the
snapshot, by gram set (:class:`~spamflow_quilt.set_units.SetUnits`: the lines of a set share
every gram), so each gram bucket's hits become triples of indexes, one 64-bit number each
(left unit, gram, source), in bucket files by left unit; each such bucket is sorted and all its
units covered together (:func:`~spamflow_quilt.lockstep.lockstep_covers`).  The result is the
jobs' own, quilt for quilt (tests/test_quilt_direct.py); memory is one bucket's rows plus the
page table.  When the indexes do not fit 64 bits, :func:`row_covers` runs job (c)'s own
functions on rows of doc ids instead.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from spamflow.bucket_files import BucketFiles
from spamflow_quilt.buckets import distinct, doc_bucket, run_starts
from spamflow_quilt.copies import WINDOW_PAGES
from spamflow_quilt.cover import greedy_cover_arrays, keep_sources
from spamflow_quilt.gram_rows import FINE_BUCKETS, GramRows, read_shingle_rows, shingle_to_rows
from spamflow_quilt.lockstep import lockstep_covers
from spamflow_quilt.mr_gram_df import patch_hits
from spamflow_quilt.mr_patch_fraction import patchy_mask
from spamflow_quilt.mr_quilt_cover import SPILL_BYTES, foreign_servers
from spamflow_quilt.params import QuiltParams
from spamflow_quilt.reused_memory import reused_memory
from spamflow_quilt.set_units import SetUnits
from spamflow_quilt.spill import GroupSpill
from spamflow_quilt.triples import hits_of_units, iter_unit_triples

BUCKET_ROWS = 1 << 23
"""(gram, line) rows per gram bucket (12 bytes each on disk, ~4 copies of them in memory while
a bucket is reduced: ~0.5 GB)."""

FLUSH_ROWS = 1 << 22
"""Triples read at once when a bucket of them is split."""

SET_BUCKETS_PER_GRAM_BUCKET = 16
"""Gram-set buckets of triples per gram bucket: triples are ~5x the hits and ~1.5x the gram rows
(a 5 x 10^4-page snapshot: 22M gram rows, 7.3M hits, 34M triples), so that a set bucket's
triples stay well below ``spill_bytes`` and are covered without a spill to disk."""

HIT_ROW = np.dtype([("line", "<u4"), ("gram", "<u8")])
TRIPLE_ROW = np.dtype([("rep", "<u8"), ("gram", "<u8"), ("source", "<u8")])
KEY_ROW = np.dtype([("key", "<u8")])

KEY_BITS = 64
"""Bits of a packed triple (left unit, gram, source): above them, :func:`row_covers` (at 10^6
pages a snapshot needs ~17 + 25 + 19)."""


def direct_quilts(shingles: Path, params: QuiltParams, *, buckets: int | None = None,
                  spill_bytes: int = SPILL_BYTES) -> list[tuple[int, dict]]:
    """:func:`~spamflow_quilt.detector.find_quilts`'s result, [(doc_id, cover record)] by
    doc_id, computed in this process from a shingle file.  ``buckets`` (a power of two up to
    256; default: from the number of grams) and ``spill_bytes`` bound memory and do not change
    the result."""
    with tempfile.TemporaryDirectory(prefix="direct-", dir=shingles.parent) as scratch:
        rows = read_shingle_rows(shingles, Path(scratch))
        with reused_memory():
            return row_quilts(rows, params, Path(scratch), buckets=buckets, spill_bytes=spill_bytes)


def page_quilts(pages: Path, snapshot: str, params: QuiltParams, scratch: Path, *, workers: int = 1,
                window_pages: int = WINDOW_PAGES) -> tuple[list[tuple[int, dict]], dict[str, int]]:
    """:func:`direct_quilts` of the snapshot's pages without a shingle file
    (:func:`~spamflow_quilt.gram_rows.shingle_to_rows`), and the shingling counts
    :func:`~spamflow_quilt.shingle.write_shingles` would give; temporary files under ``scratch``."""
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="direct-", dir=scratch) as folder:
        rows = shingle_to_rows(pages, Path(folder), params.k, snapshot, workers=workers, window_pages=window_pages)
        with reused_memory():
            return row_quilts(rows, params, Path(folder)), rows.counts


def row_quilts(rows: GramRows, params: QuiltParams, folder: Path, *, buckets: int | None = None,
               spill_bytes: int = SPILL_BYTES) -> list[tuple[int, dict]]:
    """The quilts of a snapshot's :class:`~spamflow_quilt.gram_rows.GramRows` (temporary
    files under ``folder``)."""
    if buckets is None:
        wanted = max(rows.rows() // BUCKET_ROWS, 1)
        buckets = min(1 << (int(wanted) - 1).bit_length(), FINE_BUCKETS)
    ordinals, docs, n_grams, domains, ips, sets = rows.pages
    n_lines = int(ordinals.max()) + 1 if len(ordinals) else 0
    line_pages = np.bincount(ordinals.astype(np.intp), minlength=n_lines).astype(np.uint32)

    # job (a) and job (b): each gram bucket's hits, and every line's number of patch grams
    hits = BucketFiles(folder, "hits", HIT_ROW, buckets)
    n_patch_of_line = np.zeros(n_lines, np.uint64)
    n_patch_grams = 0  # the hits name their gram by its index among the snapshot's patch grams
    for fine in range(FINE_BUCKETS):  # a fine bucket at a time: its sort stays in the CPU's caches (~6x faster)
        fine_rows = rows.take(fine, FINE_BUCKETS)
        grams, lines = np.ascontiguousarray(fine_rows["gram"]), np.ascontiguousarray(fine_rows["line"])
        del fine_rows
        weights = line_pages[lines]
        one = weights == 1  # job (a)'s G rows (a line of one page); the others its W rows
        patch_grams, _, hit_lines, hit_grams = patch_hits(grams[one], lines[one], grams[~one], lines[~one],
                                                          weights[~one], params.m)
        del grams, lines, weights, one
        lines, n_hits = np.unique(hit_lines, return_counts=True)  # not a bincount over every line:
        n_patch_of_line[lines] += n_hits.astype(np.uint64)  # that would grow with buckets x lines
        new_gram = np.r_[True, hit_grams[1:] != hit_grams[:-1]] if len(hit_grams) else np.empty(0, bool)
        hits.write(fine * buckets // FINE_BUCKETS, line=hit_lines,
                   gram=n_patch_grams + np.cumsum(new_gram) - 1)  # hits come by gram
        n_patch_grams += len(patch_grams)
    hits.close()
    n_patch = n_patch_of_line[ordinals]
    patchy = patchy_mask(n_patch, n_grams, params.theta)

    # job (c): units of the lines with patch grams, their triples, their covers
    servers, known = foreign_servers(params.foreign, docs, domains, ips)
    on_lines = known & (n_patch > 0)
    units = SetUnits(ordinals[on_lines], docs[on_lines], servers=servers[on_lines],
                     patchy=patchy[on_lines].astype(np.uint8), sets=sets[on_lines], skip_copied=params.c >= 2,
                     n_lines=n_lines)
    set_buckets = min(SET_BUCKETS_PER_GRAM_BUCKET * buckets, 256)
    if sum(units.key_bits(n_patch_grams)) <= KEY_BITS:
        covers = packed_covers(units, hits, buckets, set_buckets, n_patch_grams, folder, spill_bytes)
    else:
        covers = row_covers(units, hits, buckets, set_buckets, folder, spill_bytes, skip_copied=params.c >= 2)
    quilted = known & patchy
    members = unit_members(docs[quilted], n_patch[quilted], n_grams[quilted], sets[quilted], servers[quilted])
    found: list[tuple[int, dict]] = []
    for unit, cover in covers:
        pages = members[(int(units.set_name[unit]), int(units.server[unit]))]
        n_patch_doc, n_grams_doc = pages[0][1], pages[0][2]  # copies: the same gram set
        cover = keep_sources(cover, n_patch_doc, params.phi)
        if len(cover) >= params.c:
            sources = [[doc, n] for doc, n in cover]  # as JSON
            found += [(doc, {"n_patch_grams": n_patch_doc, "n_grams": n_grams_doc, "sources": sources})
                      for doc, _, _ in pages]
    return sorted(found)


def unit_members(docs: np.ndarray, n_patch: np.ndarray, n_grams: np.ndarray, sets: np.ndarray,
                 servers: np.ndarray) -> dict[tuple[int, int], list[tuple[int, int, int]]]:
    """The patchy pages (doc, n_patch_grams, n_grams) of each unit, (gram set, server): the
    pages a unit's cover is reported for, as job (c)'s ``Q`` rows are."""
    members: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for row in zip(sets.tolist(), servers.tolist(), docs.tolist(), n_patch.tolist(), n_grams.tolist()):
        members.setdefault(row[:2], []).append(row[2:])
    return members


def packed_covers(units: SetUnits, hits: BucketFiles, buckets: int, set_buckets: int, n_patch_grams: int,
                  folder: Path, spill_bytes: int) -> Iterator[tuple[int, list[tuple[int, int]]]]:
    """(unit, greedy cover [(source doc, newly covered grams)]) of every left unit with triples:
    each triple one 64-bit number (left unit, gram, source) in the bucket of its left unit,
    a bucket's numbers sorted and covered together (:func:`~spamflow_quilt.lockstep.lockstep_covers`)."""
    _, gram_bits, source_bits = units.key_bits(n_patch_grams)
    n_left = len(units.left_unit)
    triples = BucketFiles(folder, "triples", KEY_ROW, set_buckets)
    for bucket in range(buckets):
        for rows in hits.take(bucket):
            for keys in units.triple_keys(rows["line"].astype(np.intp), rows["gram"], n_patch_grams):
                left = keys >> np.uint64(gram_bits + source_bits)
                triples.append(left * np.uint64(set_buckets) // np.uint64(n_left), key=keys)
    triples.close()
    for bucket in range(set_buckets):
        for keys in split_by_unit(triples, bucket, spill_bytes, folder, gram_bits + source_bits):
            keys = distinct(keys)
            left = (keys >> np.uint64(gram_bits + source_bits)).astype(np.int64)
            gram = ((keys >> np.uint64(source_bits)) & np.uint64((1 << gram_bits) - 1)).astype(np.int64)
            source = (keys & np.uint64((1 << source_bits) - 1)).astype(np.int64)
            del keys
            c_left, c_source, c_newly = lockstep_covers(left, gram, source)
            c_doc = units.rep[c_source]
            starts = run_starts(c_left).tolist()
            for start, end in zip(starts, starts[1:] + [len(c_left)]):
                yield (int(units.left_unit[c_left[start]]),
                       list(zip(c_doc[start:end].tolist(), c_newly[start:end].tolist())))


def split_by_unit(triples: BucketFiles, bucket: int, limit_bytes: int, folder: Path,
                  unit_shift: int) -> Iterator[np.ndarray]:
    """A triple bucket's keys, at once when they fit in ``limit_bytes``, else in parts of
    whole units (a unit's triples are never split: its cover needs them all)."""
    size = triples.size(bucket)
    if size <= limit_bytes:
        yield from (rows["key"] for rows in triples.take(bucket))
        return
    parts = min(-(-size // limit_bytes), 256)  # files open at once
    split = BucketFiles(folder, f"split-{bucket}", KEY_ROW, parts)
    for rows in triples.take(bucket, chunk_rows=FLUSH_ROWS):
        split.append((rows["key"] >> np.uint64(unit_shift)) % np.uint64(parts), key=rows["key"])
    split.close()
    for part in range(parts):
        yield from (rows["key"] for rows in split.take(part))


def row_covers(units: SetUnits, hits: BucketFiles, buckets: int, set_buckets: int, folder: Path, spill_bytes: int,
               *, skip_copied: bool) -> Iterator[tuple[int, list[tuple[int, int]]]]:
    """:func:`packed_covers` when a triple's indexes do not fit 64 bits: job (c)'s own
    functions on rows of doc ids (:func:`~spamflow_quilt.triples.iter_unit_triples`,
    :func:`~spamflow_quilt.cover.greedy_cover_arrays`), the triples in gram-set buckets."""
    table = units.table
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
    unit_of_rep = dict(zip(units.rep.tolist(), range(len(units.rep))))
    for bucket in range(set_buckets):
        for reps, grams, sources in by_rep(triples, bucket, spill_bytes):
            starts = run_starts(reps).tolist()
            for start, end in zip(starts, starts[1:] + [len(reps)]):
                yield unit_of_rep[int(reps[start])], greedy_cover_arrays(sources[start:end], grams[start:end])


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
