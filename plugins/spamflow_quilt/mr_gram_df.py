"""Job (a): document frequency of every k-gram, keeping the patch grams (1 < df ≤ m) with
the pages that contain them.

Input: shingle lines ``ordinal<TAB>doc<TAB>domain<TAB>ip<TAB>packed grams[<TAB>packed copies]``
(grams distinct per page: set semantics; a line stands for its page and the copies it lists,
:mod:`spamflow_quilt.copies`).  Mappers emit a (gram, line ordinal) row per gram of a line,
keyed by gram bucket (``G``; ``W`` with the line's number of pages when it has copies), and
each page's doc_id, size, servers and gram set's name with its line's ordinal (``S``), keyed
by page bucket.  A gram's reducer sees all its lines and their weights, so it knows df(g),
which counts every page, *and* the postings of the patch grams:
the join of Figure 5 (``docToGrams ⋈ patchGrams``) happens here, and job (b) never reads
the corpus again.

Combining: a gram seen in more than m pages within one task can never be a patch gram, so
mappers and combiners replace its rows by one row for a page that cannot exist
(:data:`POPULAR`): boilerplate, the bulk of a web corpus's grams, costs one row per task.
A mapper does so on each flush of ``--flush-rows`` rows; the combiner merges a map task's
flushes, so it only has work when a task flushes more than once.  ``--no-combiner`` leaves
it out of the step (the driver does when every map task fits one flush: on mrjob's local
runner the combiner then re-reads and re-writes every byte for nothing).

Output: ``d<bucket><TAB>H <packed ordinal, gram>`` (a line contains a patch gram; a reduce
task buffers these over its gram buckets and emits them per page bucket when ``--flush-rows``
are buffered and at its end, so that records stay large at any corpus size), the pages
``d<bucket><TAB>S <packed ordinal, doc, n_grams, domain id, ip id, gram set>``, and
``g<bucket><TAB>P <packed gram, df>`` (the patch grams, read by the benchmark and reports).
"""

import numpy as np
from mrjob.step import MRStep

from spamflow_quilt.buckets import RowBuffer, run_starts, sum_by_key
from spamflow_quilt.buckets import distinct as unique
from spamflow_quilt.copies import gram_set_id
from spamflow_quilt.mr_base import QuiltJob, joined, page_fields, rows_of, tagged
from spamflow_quilt.packed import unpack
from spamflow_quilt.servers import server_id

POPULAR = np.uint32(2**32 - 1)
"""The page of a gram's "more than m pages" row: no page has this ordinal."""


def gram_counts(grams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct grams, sorted, and how many rows each has (sorting the 64-bit values
    alone is ~8x faster than sorting the rows by them)."""
    ordered = np.sort(grams)
    starts = run_starts(ordered)
    return ordered[starts], np.diff(np.r_[starts, len(ordered)])


def member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """For each value, whether it is in ``sorted_set`` (sorted, distinct)."""
    if len(sorted_set) == 0:
        return np.zeros(len(values), bool)
    at = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return sorted_set[at] == values


def gram_df(grams: np.ndarray, w_grams: np.ndarray | None = None,
            weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The distinct grams, sorted, and their page counts: a ``G`` row counts one page, a
    ``W`` row (a line of copies) its ``weights``, so df counts every page as Section 2 does."""
    distinct, df = gram_counts(grams)
    if w_grams is not None and weights is not None and len(w_grams):
        distinct, df = sum_by_key(np.concatenate([distinct, w_grams]),
                                  np.concatenate([df, weights.astype(df.dtype)]))
    return distinct, df


def popular_grams(grams: np.ndarray, pages: np.ndarray, m: int, w_grams: np.ndarray | None = None,
                  weights: np.ndarray | None = None) -> np.ndarray:
    """The grams of these rows known to be in more than m pages, sorted."""
    distinct, df = gram_df(grams, w_grams, weights)
    return unique(np.concatenate([distinct[df > m], grams[pages == POPULAR]]))


def collapse_popular(grams: np.ndarray, pages: np.ndarray, m: int,
                     *weighted: np.ndarray) -> tuple[np.ndarray, ...]:
    """(gram, page) rows with each gram of more than m pages (or of a POPULAR row) reduced to
    one POPULAR row: the df decision 1 < df ≤ m is the same before and after.  Row order is
    not kept.  ``weighted``, if given, is the ``W`` rows (gram, line, pages), returned after
    the others without the popular grams' rows.

    >>> g, d = collapse_popular(np.array([5, 3, 5, 5], np.uint64), np.array([1, 2, 3, 4], np.uint32), 2)
    >>> g.tolist(), d.tolist() == [2, POPULAR]
    ([3, 5], True)
    >>> out = collapse_popular(np.array([5], np.uint64), np.array([1], np.uint32), 2,
    ...                        np.array([5, 3], np.uint64), np.array([2, 3], np.uint32), np.array([2, 2], np.uint32))
    >>> [column.tolist() for column in out] == [[5], [POPULAR], [3], [3], [2]]
    True
    """
    w_grams, _, weights = weighted or (None, None, None)
    popular = popular_grams(grams, pages, m, w_grams, weights)
    if len(popular) == 0:
        return (grams, pages, *weighted)
    rest = ~member(grams, popular)
    out = (np.concatenate([grams[rest], popular]), np.concatenate([pages[rest], np.full(len(popular), POPULAR)]))
    if not weighted:
        return out
    keep = ~member(weighted[0], popular)
    return (*out, *(column[keep] for column in weighted))


def patch_hits(grams: np.ndarray, pages: np.ndarray, w_grams: np.ndarray, w_pages: np.ndarray,
               weights: np.ndarray, m: int) -> tuple[np.ndarray, ...]:
    """All the rows of some grams (``G``: gram, line; ``W``: gram, line, pages): the patch
    grams among them (1 < df <= m, no POPULAR row) with their df, and the hits, a (line,
    patch gram) row for each row of a patch gram.  One sort of the rows gives both (looking
    each row's gram up in the patch grams instead cost ~2x the sort: random reads).

    >>> [c.tolist() for c in patch_hits(np.array([7, 5, 7], np.uint64), np.array([0, 1, 2], np.uint32),
    ...     np.array([5], np.uint64), np.array([3], np.uint32), np.array([2], np.uint32), 2)]
    [[7], [2], [0, 2], [7, 7]]
    """
    all_grams = np.concatenate([grams, w_grams]).astype(np.uint64, copy=False)
    all_pages = np.concatenate([pages, w_pages]).astype(np.uint32, copy=False)
    # a row counts one page, a W row its pages, a POPULAR row more than m: never a patch gram
    counts = np.concatenate([np.where(pages == POPULAR, m + 1, 1), weights]).astype(np.int64)
    order = np.argsort(all_grams)
    all_grams = all_grams[order]
    starts = run_starts(all_grams)
    df = np.add.reduceat(counts[order], starts) if len(starts) else np.empty(0, np.int64)
    patch = (df > 1) & (df <= m)
    hit = np.repeat(patch, np.diff(np.r_[starts, len(all_grams)]))
    return all_grams[starts[patch]], df[patch].astype(np.uint32), all_pages[order[hit]], all_grams[hit]


def shingle_pages(line: bytes) -> tuple[int, np.ndarray, list[tuple[int, ...]]]:
    """A shingle line's ordinal, grams and pages (job (a)'s ``S`` rows: ordinal, doc, number of
    grams, domain id, IP id, gram set; the line's own page, then its copies'), for both engines;
    a ValueError quoting the line if it is not one."""
    fields = page_fields(line)
    if fields is None:
        raise ValueError(f"job (a) reads shingle lines only, got {line[:80]!r}")
    ordinal = int(fields[0])
    if not 0 <= ordinal < POPULAR:
        raise ValueError(f"page ordinal out of range in shingle line {line[:80]!r}")
    (grams,) = unpack(fields[4])
    gram_set = gram_set_id(fields[4])
    pages: list[tuple[int, ...]] = [(ordinal, int(fields[1]), len(grams), server_id(fields[2].decode()),
                                     server_id(fields[3].decode()), gram_set)]
    copies = copies_of(fields, line)
    if copies is not None:
        docs, domains, ips = copies
        pages += [(ordinal, doc, len(grams), domain, ip, gram_set)
                  for doc, domain, ip in zip(docs.tolist(), domains.tolist(), ips.tolist())]
    return ordinal, grams, pages


class MRGramDocumentFrequency(QuiltJob):
    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--no-combiner", dest="combiner", action="store_false",
                              help="leave the combiner out (when no map task flushes more than once)")

    def steps(self):
        return [MRStep(mapper_init=self.mapper_init, mapper=self.mapper, mapper_final=self.mapper_final,
                       combiner=self.combiner if self.options.combiner else None,
                       reducer_init=self.reducer_init, reducer=self.reducer, reducer_final=self.reducer_final)]

    def mapper_init(self):
        self.pending = RowBuffer(2)  # gram, ordinal: lines of one page
        self.weighted = RowBuffer(3)  # gram, ordinal, pages: lines of copies
        self.pages: list[tuple[int, ...]] = []  # ordinal, doc, n_grams, domain id, ip id, gram set

    def mapper(self, _, line):
        ordinal, grams, pages = shingle_pages(line)
        self.pages.extend(pages)
        if len(pages) == 1:
            self.pending.add(grams, np.full(len(grams), ordinal, np.uint32))
        else:
            self.weighted.add(grams, np.full(len(grams), ordinal, np.uint32),
                              np.full(len(grams), len(pages), np.uint32))
        if self.pending.rows + self.weighted.rows + len(self.pages) >= self.options.flush_rows:  # pages: copies
            yield from self.flush()

    def mapper_final(self):
        yield from self.flush()

    def flush(self):
        grams, pages = self.pending.take()
        grams, pages, *weighted = collapse_popular(grams, pages, self.options.m, *self.weighted.take())
        yield from self.by_grams(b"G", grams, pages)
        yield from self.by_grams(b"W", *weighted)
        pages = np.array(self.pages, np.uint64).reshape(-1, 6).T
        self.pages = []
        yield from self.by_docs(b"S", *pages)

    def combiner(self, key, values):
        values = list(values)
        if len(values) == 1 or key.startswith(b"d"):  # one flush's rows are combined already
            for value in values:
                yield key, value
            return
        rows = rows_of(values)
        grams, pages = joined(rows.get(b"G"), 2)
        grams, pages, *weighted = collapse_popular(grams, pages, self.options.m, *joined(rows.get(b"W"), 3))
        if len(grams):
            yield key, tagged(b"G", grams, pages)
        if len(weighted[0]):
            yield key, tagged(b"W", *weighted)

    def reducer(self, key, values):
        rows = rows_of(values)
        if key.startswith(b"d"):
            yield from self.passed_on(key, rows, b"S")
            return
        grams, pages = joined(rows.get(b"G"), 2)
        w_grams, w_pages, weights = joined(rows.get(b"W"), 3)
        patch_grams, df, hit_pages, hit_grams = patch_hits(grams, pages, w_grams, w_pages, weights, self.options.m)
        if not len(patch_grams):
            return
        yield key, tagged(b"P", patch_grams, df)
        self.hits.add(hit_pages, hit_grams)
        if self.hits.rows >= self.options.flush_rows:
            yield from self.flush_hits()

    def reducer_init(self):
        self.hits = RowBuffer(2)  # line ordinal, patch gram: this task's hits so far, by page bucket at a flush

    def reducer_final(self):
        yield from self.flush_hits()

    def flush_hits(self):
        """The hits buffered over this task's gram buckets, one record per page bucket: emitted
        per gram bucket instead, job (a)'s output would hold gram buckets × page buckets
        records, a number that grows with the square of the corpus (1.06M records of ~1 KB for
        a 5 x 10^5-page snapshot, 4,320 for 5 x 10^4)."""
        ordinals, grams = self.hits.take()
        yield from self.by_docs(b"H", ordinals.astype(np.uint32), grams.astype(np.uint64))


def copies_of(fields: list[bytes], line: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The copies a shingle line lists (doc ids, domain ids, IP ids), None if it has none."""
    if len(fields) < 6:
        return None
    try:
        docs, domains, ips = unpack(fields[5])
    except ValueError as error:
        raise ValueError(f"bad copies field (doc, domain id, ip id) in shingle line {line[:80]!r}: {error}") from None
    return docs, domains, ips


if __name__ == "__main__":
    MRGramDocumentFrequency.run()
