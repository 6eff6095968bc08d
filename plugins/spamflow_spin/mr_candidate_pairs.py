"""Candidate pairs of pages for an immutable-Jaccard threshold t (one mrjob job, four steps).

Input: one page per line, ``doc<TAB>immutable immutable ...`` (a set: repeats already
suffixed).  Comparing all pairs is quadratic; this job uses the inverted index of
immutables with *prefix filtering* (Chaudhuri et al. 2006; Xiao et al., PPJoin, 2008):
order all immutables by document frequency (rarest first, ties by the string), and index
each page only by its ``n - ceil(t*n) + 1`` rarest immutables (n = its number of
immutables).  Two pages with Jaccard >= t always share one of those, so no pair above the
threshold is lost, while common words ("the", boilerplate) are almost never indexed.

1. postings: per immutable, its document frequency df; immutables on more than
   ``--max-pages`` pages are marked dropped (a safety valve: they are never indexed);
2. per page: sort its immutables by (df, immutable), emit the prefix;
3. per prefix immutable: every pair of its pages whose sizes allow Jaccard >= t
   (min(n_a, n_b) >= t * max(n_a, n_b));
4. per pair: one line.

Output: ``doc_a doc_b<TAB>shared prefix immutables`` with doc_a < doc_b, and the counter
lines ``#dropped<TAB>n`` (immutables over --max-pages) and ``#prefix_dropped<TAB>n`` (pages
whose prefix held a dropped immutable: for them the guarantee above does not hold).

Imports nothing from spamflow: a Spark or Hadoop worker gets only this package.
"""

import math
from itertools import combinations

from mrjob.job import MRJob
from mrjob.protocol import RawProtocol, RawValueProtocol
from mrjob.step import MRStep

DROPPED = "#dropped"
PREFIX_DROPPED = "#prefix_dropped"
EPS = 1e-9


def prefix_length(n, t):
    """How many of a page's n immutables (rarest first) are indexed for threshold t.

    >>> prefix_length(10, 0.5), prefix_length(10, 1.0), prefix_length(3, 0.34)
    (6, 1, 2)
    """
    return n - math.ceil(t * n - EPS) + 1


def sizes_compatible(n_a, n_b, t):
    """Jaccard(A, B) <= min/max of the sizes, so it can reach t only if this holds."""
    return min(n_a, n_b) >= t * max(n_a, n_b) - EPS


class MRCandidatePairs(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    INTERNAL_PROTOCOL = RawProtocol
    OUTPUT_PROTOCOL = RawProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--threshold", type=float, required=True, help="immutable Jaccard threshold t")
        self.add_passthru_arg("--max-pages", type=int, required=True,
                              help="immutables on more pages than this are never indexed")

    def steps(self):
        return [MRStep(mapper=self.postings, reducer=self.document_frequency),
                MRStep(reducer=self.prefix),
                MRStep(reducer=self.pairs_of_posting),
                MRStep(combiner=self.add_counts, reducer=self.add_counts)]

    def postings(self, _, line):
        doc, _tab, immutables = line.partition("\t")
        items = immutables.split()
        n = str(len(items))
        for immutable in items:
            yield immutable, f"{doc} {n}"

    def document_frequency(self, immutable, values):
        values = list(values)
        df = len(values)
        dropped = df > self.options.max_pages
        if dropped:
            yield DROPPED, "1"
        for value in values:
            doc, n = value.split()
            yield doc, f"{df} {int(dropped)} {n} {immutable}"

    def prefix(self, doc, values):
        if doc.startswith("#"):
            yield doc, str(sum(map(int, values)))
            return
        items = []
        n = 0
        for value in values:
            df, dropped, n_text, immutable = value.split(" ", 3)
            n = int(n_text)
            items.append((int(dropped), int(df), immutable))
        items.sort()
        hit_dropped = False
        for dropped, _df, immutable in items[:prefix_length(n, self.options.threshold)]:
            if dropped:
                hit_dropped = True
            else:
                yield immutable, f"{doc} {n}"
        if hit_dropped:
            yield PREFIX_DROPPED, "1"

    def pairs_of_posting(self, key, values):
        if key.startswith("#"):
            yield key, str(sum(map(int, values)))
            return
        t = self.options.threshold
        pages = sorted((int(doc), int(n)) for doc, n in (v.split() for v in values))
        for (a, n_a), (b, n_b) in combinations(pages, 2):
            if sizes_compatible(n_a, n_b, t):
                yield f"{a} {b}", "1"

    def add_counts(self, key, counts):
        yield key, str(sum(map(int, counts)))


if __name__ == "__main__":
    MRCandidatePairs.run()
