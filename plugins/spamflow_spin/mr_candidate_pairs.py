"""Candidate pairs of pages for an immutable-Jaccard threshold t (one mrjob job, four steps).

Input: one page per line, ``doc<TAB>immutable immutable ...`` (a set: repeats already
suffixed).  Comparing all pairs is quadratic; this job uses the inverted index of
immutables with *prefix filtering* (Chaudhuri et al. 2006; Xiao et al., PPJoin, 2008):
order all immutables by document frequency (rarest first, ties by the string), and index
each page only by its ``n - ceil(t*n) + k`` rarest immutables (n = its number of
immutables, k = ``--min-shared``).  Two pages with Jaccard >= t share at least
``min(k, ceil(t*n_a), ceil(t*n_b))`` of those, so keeping only the pairs that do loses no
pair above the threshold, while common words ("the", boilerplate) are almost never indexed.
(If J >= t the pages share o >= ceil(t*n) immutables; the k rarest shared ones lie within
the first n - o + k of each page's sorted list.)

1. postings: per immutable, its document frequency df; immutables on more than
   ``--max-pages`` pages are marked dropped (a safety valve: they are never indexed);
2. per page: sort its immutables by (df, immutable), emit the prefix;
3. per prefix immutable: every pair of its pages whose sizes allow Jaccard >= t
   (min(n_a, n_b) >= t * max(n_a, n_b));
4. per pair: the number of prefix immutables it shares; kept if enough (above).

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


def overlap_needed(n, t):
    """Jaccard >= t needs at least this many shared immutables, for a page of n."""
    return math.ceil(t * n - EPS)


def prefix_length(n, t, k=1):
    """How many of a page's n immutables (rarest first) are indexed for threshold t and
    ``k`` required shared prefix immutables.

    >>> prefix_length(10, 0.5), prefix_length(10, 1.0), prefix_length(3, 0.34), prefix_length(10, 0.5, 3)
    (6, 1, 2, 8)
    """
    return min(n, n - overlap_needed(n, t) + k)


def shared_needed(n_a, n_b, t, k):
    """How many shared prefix immutables a candidate pair must have."""
    return min(k, overlap_needed(n_a, t), overlap_needed(n_b, t))


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
        self.add_passthru_arg("--min-shared", type=int, default=1,
                              help="k: candidate pairs share this many prefix immutables")

    def steps(self):
        return [MRStep(mapper=self.postings, reducer=self.document_frequency),
                MRStep(reducer=self.prefix),
                MRStep(reducer=self.pairs_of_posting),
                MRStep(combiner=self.add_counts, reducer=self.keep_pairs)]

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
        for dropped, _df, immutable in items[:prefix_length(n, self.options.threshold, self.options.min_shared)]:
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
                yield f"{a} {b}", f"1 {shared_needed(n_a, n_b, t, self.options.min_shared)}"

    def add_counts(self, key, values):
        if key.startswith("#"):
            yield key, str(sum(map(int, values)))
            return
        total = need = 0
        for value in values:
            count, need_text = value.split()
            total += int(count)
            need = int(need_text)
        yield key, f"{total} {need}"

    def keep_pairs(self, key, values):
        for out_key, value in self.add_counts(key, values):
            if key.startswith("#"):
                yield out_key, value
                continue
            total, need = map(int, value.split())
            if total >= need:
                yield out_key, str(total)


if __name__ == "__main__":
    MRCandidatePairs.run()
