"""Job (a): document frequency of every k-gram, keeping the patch grams (1 < df ≤ m).

Input: shingle lines ``doc<TAB>domain<TAB>ip<TAB>packed grams`` (grams distinct per page:
set semantics).  Output: ``g<bucket><TAB>P <packed gram, df>``.  Mappers count the grams
they read (in-mapper combining), combiners and reducers add counts per bucket.
"""

import numpy as np

from spamflow_quilt.buckets import RowBuffer, sum_by_key
from spamflow_quilt.mr_base import QuiltJob, joined, page_fields, rows_of, tagged
from spamflow_quilt.packed import unpack


class MRGramDocumentFrequency(QuiltJob):
    def mapper_init(self):
        self.pending = RowBuffer(1)

    def mapper(self, _, line):
        fields = page_fields(line)
        if fields is None:
            raise ValueError(f"job (a) reads shingle lines only, got {line[:80]!r}")
        self.pending.add(unpack(fields[3])[0])
        if self.pending.rows >= self.options.flush_rows:
            yield from self.flush()

    def mapper_final(self):
        yield from self.flush()

    def flush(self):
        (grams,) = self.pending.take()
        grams, df = np.unique(grams, return_counts=True)
        yield from self.by_grams(b"D", grams.astype(np.uint64), df.astype(np.uint32))

    def combiner(self, key, values):
        grams, df = sum_by_key(*joined(rows_of(values).get(b"D"), 2))
        yield key, tagged(b"D", grams, df)

    def reducer(self, key, values):
        grams, df = sum_by_key(*joined(rows_of(values).get(b"D"), 2))
        keep = (df > 1) & (df <= self.options.m)
        if keep.any():
            yield key, tagged(b"P", grams[keep], df[keep])


if __name__ == "__main__":
    MRGramDocumentFrequency.run()
