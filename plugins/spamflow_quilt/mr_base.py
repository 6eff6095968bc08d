"""What the three quilt jobs share: line formats, bucketed records, and ``--m``.

Every record between tasks carries a bucket of rows (:mod:`spamflow_quilt.packed`), keyed
``g<bucket>`` when its rows are grouped by gram and ``d<bucket>`` when grouped by page, and
its value starts with one letter saying what the rows are:

====  =====================================  ============================================
kind  columns                                meaning
====  =====================================  ============================================
G     gram, ordinal                          a line's page contains the gram (POPULAR: > m pages)
W     gram, ordinal, pages                   the same for a line of several pages (copies)
P     gram, df                               a patch gram (job (a)'s output)
S     ordinal, doc, n_grams, domain, ip,     a page of a line: its number of distinct grams, its
      gram set                               servers, the name of its gram set (copies.py)
H     ordinal, gram                          a line's pages contain a patch gram (job (a)'s output)
Q     doc, n_patch_grams, n_grams, gram set, a patchy page (job (b)'s output)
      domain id, ip id
L     gram, ordinal | ordinal, doc, domain   two fields: the lines' patch grams, and the pages of
      id, ip id, patchy, gram set            those lines (job (b)'s output)
U     gram, rep, server, patchy, gram set    a unit of copies contains a patch gram (job (c))
T     rep, gram, source                      a triple of Section 2 for a unit of copies (job (c)),
                                             keyed by its gram set's bucket (the set is not sent)
====  =====================================  ============================================

A page is its doc_id, except in jobs (a) and (b), where a *line* of the shingle file (a
gram set and the pages that have it, :mod:`spamflow_quilt.copies`) is its ordinal in the
file (32 bits: job (a) shuffles a row per gram of every line); ``S`` rows map a line to its
pages.  Buckets only batch records: the result does not depend on ``--buckets`` or
``--flush-rows`` (the exactness tests vary both).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
from mrjob.job import MRJob
from mrjob.protocol import BytesProtocol, BytesValueProtocol

from spamflow_quilt.buckets import by_bucket, doc_bucket, gram_bucket
from spamflow_quilt.packed import pack, unpack

FLUSH_ROWS = 1 << 24
"""Rows a mapper buffers by default before it emits them."""


def gram_key(bucket: int) -> bytes:
    return b"g%06d" % bucket


def doc_key(bucket: int) -> bytes:
    return b"d%06d" % bucket


def tagged(kind: bytes, *columns: np.ndarray) -> bytes:
    return kind + b" " + pack(*columns)


def untagged(value: bytes) -> tuple[bytes, list[np.ndarray]]:
    """A record's kind and its columns (of every packed field, in order: ``L`` has two)."""
    if value.find(b" ", 2) < 0:
        return value[:1], unpack(value[2:])
    return value[:1], [column for field in value[2:].split(b" ") for column in unpack(field)]


def rows_of(values: Iterable[bytes]) -> dict[bytes, list[list[np.ndarray]]]:
    """A reducer's values, unpacked and sorted by kind: {kind: [columns, columns, ...]}."""
    out: dict[bytes, list[list[np.ndarray]]] = {}
    for value in values:
        kind, columns = untagged(value)
        out.setdefault(kind, []).append(columns)
    return out


def joined(parts: list[list[np.ndarray]] | None, columns: int) -> list[np.ndarray]:
    """The chunks of one kind concatenated column by column (empty columns if none)."""
    if not parts:
        return [np.empty(0, np.uint64) for _ in range(columns)]
    return [np.concatenate([part[i] for part in parts]) for i in range(columns)]


def page_fields(line: bytes) -> list[bytes] | None:
    """A shingle line's fields (ordinal, doc, domain, ip, packed grams and, if the line
    stands for several pages, packed copies), or None for a job's output line."""
    fields = line.rstrip(b"\r\n").split(b"\t", 5)
    return fields if len(fields) in (5, 6) else None


class QuiltJob(MRJob):
    """Lines of bytes in and between tasks (keys ASCII, values packed rows)."""

    INPUT_PROTOCOL = BytesValueProtocol
    INTERNAL_PROTOCOL = BytesProtocol
    OUTPUT_PROTOCOL = BytesProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--m", type=int, required=True, help="largest df of a patch gram")
        self.add_passthru_arg("--buckets", type=int, default=64,
                              help="hash partitions of grams and of pages (rows per record ~ rows / buckets)")
        self.add_passthru_arg("--flush-rows", type=int, default=FLUSH_ROWS,
                              help="rows a mapper buffers before it emits them (~16-40 bytes each)")

    def by_grams(self, kind: bytes, grams: np.ndarray, *columns: np.ndarray,
                 buckets: int | None = None) -> Iterator[tuple[bytes, bytes]]:
        """Records of ``kind`` keyed by gram bucket (of ``buckets``, default ``--buckets``)."""
        for bucket, cols in by_bucket(gram_bucket(grams, buckets or self.options.buckets), grams, *columns):
            yield gram_key(bucket), tagged(kind, *cols)

    def by_sets(self, kind: bytes, sets: np.ndarray, *columns: np.ndarray,
                buckets: int | None = None) -> Iterator[tuple[bytes, bytes]]:
        """Records of ``kind`` (columns as given) keyed by the page bucket of a gram set's name."""
        for bucket, cols in by_bucket(doc_bucket(sets, buckets or self.options.buckets), *columns):
            yield doc_key(bucket), tagged(kind, *cols)

    def by_docs(self, kind: bytes, docs: np.ndarray, *columns: np.ndarray) -> Iterator[tuple[bytes, bytes]]:
        """Records of ``kind`` keyed by page bucket."""
        for bucket, cols in by_bucket(doc_bucket(docs, self.options.buckets), docs, *columns):
            yield doc_key(bucket), tagged(kind, *cols)

    def passed_on(self, key: bytes, rows: dict[bytes, list[list[np.ndarray]]], kind: bytes):
        """Records of ``kind`` handed unchanged to the next step."""
        for columns in rows.get(kind, ()):
            yield key, tagged(kind, *columns)
