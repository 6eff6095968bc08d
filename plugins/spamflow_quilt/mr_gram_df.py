"""Job (a): document frequency of every k-gram, keeping the patch grams (1 < df ≤ m) with
the pages that contain them.

Input: shingle lines ``ordinal<TAB>doc<TAB>domain<TAB>ip<TAB>packed grams`` (grams distinct
per page: set semantics).  Mappers emit a (gram, page ordinal) row per gram of a page, keyed
by gram bucket, and each page's doc_id, size, servers and gram set's name (``S``, :mod:`spamflow_quilt.copies`),
keyed by page bucket.  A
gram's reducer sees all its pages, so it knows df(g) *and* the postings of the patch grams:
the join of Figure 5 (``docToGrams ⋈ patchGrams``) happens here, and job (b) never reads
the corpus again.

Combining: a gram seen in more than m pages within one task can never be a patch gram, so
mappers and combiners replace its rows by one row for a page that cannot exist
(:data:`POPULAR`): boilerplate, the bulk of a web corpus's grams, costs one row per task.
A mapper does so on each flush of ``--flush-rows`` rows; the combiner merges a map task's
flushes, so it only has work when a task flushes more than once.  ``--no-combiner`` leaves
it out of the step (the driver does when every map task fits one flush: on mrjob's local
runner the combiner then re-reads and re-writes every byte for nothing).

Output: ``d<bucket><TAB>H <packed ordinal, gram>`` (a page contains a patch gram), the pages
``d<bucket><TAB>S <packed ordinal, doc, n_grams, domain id, ip id, gram set>``, and
``g<bucket><TAB>P <packed gram, df>`` (the patch grams, read by the benchmark and reports).
"""

import numpy as np
from mrjob.step import MRStep

from spamflow_quilt.buckets import RowBuffer, run_starts
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


def popular_grams(grams: np.ndarray, pages: np.ndarray, m: int) -> np.ndarray:
    """The grams of these rows known to be in more than m pages, sorted."""
    distinct, rows = gram_counts(grams)
    return unique(np.concatenate([distinct[rows > m], grams[pages == POPULAR]]))


def collapse_popular(grams: np.ndarray, pages: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(gram, page) rows with each gram of more than m rows (or of a POPULAR row) reduced to
    one POPULAR row: the df decision 1 < df ≤ m is the same before and after.  Row order is
    not kept.

    >>> g, d = collapse_popular(np.array([5, 3, 5, 5], np.uint64), np.array([1, 2, 3, 4], np.uint32), 2)
    >>> g.tolist(), d.tolist() == [2, POPULAR]
    ([3, 5], True)
    """
    popular = popular_grams(grams, pages, m)
    if len(popular) == 0:
        return grams, pages
    rest = ~member(grams, popular)
    return (np.concatenate([grams[rest], popular]),
            np.concatenate([pages[rest], np.full(len(popular), POPULAR)]))


class MRGramDocumentFrequency(QuiltJob):
    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--no-combiner", dest="combiner", action="store_false",
                              help="leave the combiner out (when no map task flushes more than once)")

    def steps(self):
        return [MRStep(mapper_init=self.mapper_init, mapper=self.mapper, mapper_final=self.mapper_final,
                       combiner=self.combiner if self.options.combiner else None, reducer=self.reducer)]

    def mapper_init(self):
        self.pending = RowBuffer(2)  # gram, ordinal
        self.pages: list[tuple[int, ...]] = []  # ordinal, doc, n_grams, domain id, ip id, gram set

    def mapper(self, _, line):
        fields = page_fields(line)
        if fields is None:
            raise ValueError(f"job (a) reads shingle lines only, got {line[:80]!r}")
        ordinal = int(fields[0])
        if not 0 <= ordinal < POPULAR:
            raise ValueError(f"page ordinal out of range in shingle line {line[:80]!r}")
        (grams,) = unpack(fields[4])
        self.pending.add(grams, np.full(len(grams), ordinal, np.uint32))
        self.pages.append((ordinal, int(fields[1]), len(grams), server_id(fields[2].decode()),
                           server_id(fields[3].decode()), gram_set_id(fields[4].rstrip())))
        if self.pending.rows >= self.options.flush_rows:
            yield from self.flush()

    def mapper_final(self):
        yield from self.flush()

    def flush(self):
        grams, pages = self.pending.take()
        yield from self.by_grams(b"G", *collapse_popular(grams, pages, self.options.m))
        pages = np.array(self.pages, np.uint64).reshape(-1, 6).T
        self.pages = []
        yield from self.by_docs(b"S", *pages)

    def combiner(self, key, values):
        values = list(values)
        if len(values) == 1 or key.startswith(b"d"):  # one flush's rows are combined already
            for value in values:
                yield key, value
            return
        grams, pages = joined(rows_of(values).get(b"G"), 2)
        yield key, tagged(b"G", *collapse_popular(grams, pages, self.options.m))

    def reducer(self, key, values):
        rows = rows_of(values)
        if key.startswith(b"d"):
            yield from self.passed_on(key, rows, b"S")
            return
        grams, pages = joined(rows.get(b"G"), 2)
        distinct, df = gram_counts(grams)
        patch = (df > 1) & (df <= self.options.m) & ~member(distinct, unique(grams[pages == POPULAR]))
        if not patch.any():
            return
        yield key, tagged(b"P", distinct[patch], df[patch].astype(np.uint32))
        hit = member(grams, distinct[patch])
        yield from self.by_docs(b"H", pages[hit], grams[hit])


if __name__ == "__main__":
    MRGramDocumentFrequency.run()
