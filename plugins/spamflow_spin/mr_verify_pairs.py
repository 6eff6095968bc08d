"""Exact immutable Jaccard and the mutable verifier for candidate page pairs, as a join on doc
id (one mrjob job, two steps), so no process holds the corpus's partitions.

Input, two kinds of line (any mix of files):

* ``P<TAB>doc_a doc_b``: a page pair to score (doc_a < doc_b);
* ``A<TAB>doc<TAB>immutable immutable ...<TAB>mutable|mutable|...``: a page's partition
  (immutables a set, repeats suffixed ``#k``; mutables in text order, repeats kept; words
  never hold a tab or ``|``).

And, as a side file (``--synonyms``), the synonym graph (``synonyms.write_synonyms``).

Each page's immutables travel once per pair, one way, and its mutables only for the pairs at or
above the threshold (13 % of the candidates on the scale benchmark's corpus); the first version
attached a page's whole partition to every pair it was in, on both sides (2 x pairs x ~3.6 KB
shuffled twice: 35.7x the WARC bytes of temporary data at 10^5 pages).  For a pair (a, b) in
the order of its line, a is the *first* page, b the *second*:

1. mapper: a pair goes to both its pages (``a -> P b``, ``b -> p a``), a partition to its
   page (``doc -> A ...``).  Reducer, per page: if it is in a pair, one record for itself,
   ``doc -> A first?<TAB>immutables if it is a second page<TAB>mutables``, and per pair in
   which it is first, its immutables to the second page, ``b -> Q a immutables``.
2. reducer, per page b: the Jaccard of each Q with b's own immutables (``similarity.jaccard``);
   below ``--threshold`` counted, at or above it b's mutables go to the first page,
   ``a -> M b jaccard<TAB>mutables``; b's own mutables are passed on (``b -> A mutables``) if
   b is a first page.  A page's Q records are held until its own record is seen (the order of
   a key's values is the runner's): memory per page is its pairs' immutables, not the corpus.
3. reducer, per page a: the verifier's overlap (``verifier.mutable_overlap``, the function the
   in-process path calls; a's mutables first, as there) of a's mutables with each M.

Output: ``doc_a doc_b<TAB>jaccard overlap`` (floats as ``repr``, exact) for the pairs at or
above the threshold, and ``#below_threshold<TAB>n``.  A pair whose page has no partition line
is an error naming the page.

Imports nothing from spamflow: a Spark or Hadoop worker gets only this package.
"""

from mrjob.job import MRJob
from mrjob.protocol import RawProtocol, RawValueProtocol
from mrjob.step import MRStep

from spamflow_spin.similarity import jaccard
from spamflow_spin.synonyms import read_synonyms
from spamflow_spin.verifier import mutable_overlap

BELOW = "#below_threshold"


def pair_line(a, b):
    return f"P\t{a} {b}\n"


def partition_line(doc, immutables, mutables):
    return f"A\t{doc}\t{' '.join(immutables)}\t{'|'.join(mutables)}\n"


def split_partition(text):
    """``immutables<TAB>mutables`` -> (immutables, mutables) as lists."""
    immutables, _, mutables = text.partition("\t")
    return immutables.split(), mutables.split("|") if mutables else []


class MRVerifyPairs(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    INTERNAL_PROTOCOL = RawProtocol
    OUTPUT_PROTOCOL = RawProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--threshold", type=float, required=True, help="immutable Jaccard threshold t")
        self.add_file_arg("--synonyms", required=True, help="entry<TAB>synonym|... lines (the synonym graph)")

    def steps(self):
        return [MRStep(mapper=self.route, reducer=self.send_immutables),
                MRStep(reducer_init=self.start_below, reducer=self.score_immutables, reducer_final=self.finish_below),
                MRStep(reducer_init=self.load_synonyms, reducer=self.score_mutables)]

    def route(self, _, line):
        kind, tab, rest = line.partition("\t")
        if kind == "P" and tab:
            a, _, b = rest.partition(" ")
            if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
                yield a, f"P {b}"
                yield b, f"p {a}"
                return
        elif kind == "A" and tab:
            doc, tab, partition = rest.partition("\t")
            if tab and doc.lstrip("-").isdigit():
                yield doc, f"A {partition}"
                return
        raise ValueError(f"not 'P<TAB>doc_a doc_b' or 'A<TAB>doc<TAB>immutables<TAB>mutables': {line[:80]!r}")

    def send_immutables(self, doc, values):
        partition, seconds, first_of = None, [], None
        for value in values:
            if value[0] == "A":
                partition = value[2:]
            elif value[0] == "P":
                seconds.append(value[2:])
            else:
                first_of = value[2:]
        if not seconds and first_of is None:
            return  # in no pair
        if partition is None:
            pair = f"{doc} {seconds[0]}" if seconds else f"{first_of} {doc}"
            raise ValueError(f"page {doc} is in the pair {pair!r} but has no partition line")
        immutables, _, mutables = partition.partition("\t")
        yield doc, f"A {1 if seconds else 0}\t{immutables if first_of is not None else ''}\t{mutables}"
        for second in seconds:
            yield second, f"Q {doc} {immutables}"

    def start_below(self):
        self.below = 0

    def score_immutables(self, doc, values):
        own, queries = None, []
        for value in values:
            if value[0] == "A":
                own = value[2:]
            else:
                queries.append(value[2:])
        if own is None:  # only after a bad input: step 1 writes a page's own record before its Qs
            raise ValueError(f"page {doc}: pairs but no partition")
        is_first, immutables, mutables = own.split("\t")
        if queries:
            mine, threshold = set(immutables.split()), self.options.threshold
            for query in queries:
                first, _, theirs = query.partition(" ")
                similarity = jaccard(set(theirs.split()), mine)
                if similarity < threshold:
                    self.below += 1
                else:
                    yield first, f"M {doc} {similarity!r}\t{mutables}"
        if is_first == "1":
            yield doc, f"A {mutables}"

    def finish_below(self):
        yield BELOW, str(self.below)

    def load_synonyms(self):
        self.graph = read_synonyms(self.options.synonyms)

    def score_mutables(self, doc, values):
        if doc == BELOW:
            yield BELOW, str(sum(map(int, values)))
            return
        own, matches = None, []
        for value in values:
            if value[0] == "A":
                own = value[2:]
            else:
                matches.append(value[2:])
        if not matches:
            return
        mine = own.split("|") if own else []
        for match in matches:
            second, _, rest = match.partition(" ")
            similarity, _, theirs = rest.partition("\t")
            overlap = mutable_overlap(mine, theirs.split("|") if theirs else [], self.graph)
            yield f"{doc} {second}", f"{similarity} {overlap!r}"


if __name__ == "__main__":
    MRVerifyPairs.run()
