"""Job (a): document frequency of every k-gram, keeping the patch grams (1 < df ≤ m).

Input: shingle lines ``doc<TAB>domain<TAB>ip<TAB>gram gram ...``.  Output: ``gram<TAB>df``.
Records between tasks are plain text (``RawProtocol``), not JSON.
"""

from spamflow_quilt.mr_base import QuiltJob


class MRGramDocumentFrequency(QuiltJob):
    def mapper(self, _, line):
        for gram in line.split("\t", 3)[3].split():  # distinct per page: set semantics
            yield gram, "1"

    def combiner(self, gram, counts):
        yield gram, str(sum(map(int, counts)))

    def reducer(self, gram, counts):
        df = sum(map(int, counts))
        if 1 < df <= self.options.m:
            yield gram, str(df)


if __name__ == "__main__":
    MRGramDocumentFrequency.run()
