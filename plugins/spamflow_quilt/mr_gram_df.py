"""Job (a): document frequency of every k-gram, keeping the patch grams (1 < df ≤ m).

Input: shingle lines ``{"d": doc, "g": [grams], ...}``.  Output: ``gram<TAB>df``.
"""

from mrjob.job import MRJob
from mrjob.protocol import JSONProtocol, JSONValueProtocol


class MRGramDocumentFrequency(MRJob):
    INPUT_PROTOCOL = JSONValueProtocol
    INTERNAL_PROTOCOL = JSONProtocol
    OUTPUT_PROTOCOL = JSONProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--m", type=int, required=True, help="largest df of a patch gram")

    def mapper(self, _, page):
        for gram in page["g"]:  # distinct per page: set semantics
            yield gram, 1

    def combiner(self, gram, ones):
        yield gram, sum(ones)

    def reducer(self, gram, counts):
        df = sum(counts)
        if 1 < df <= self.options.m:
            yield gram, df


if __name__ == "__main__":
    MRGramDocumentFrequency.run()
