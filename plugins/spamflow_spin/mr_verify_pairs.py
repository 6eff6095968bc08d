"""Exact immutable Jaccard and the mutable verifier for candidate page pairs, as a join on doc
id (one mrjob job, two steps), so no process holds the corpus's partitions.

Input, two kinds of line (any mix of files):

* ``P<TAB>doc_a doc_b``: a page pair to score (doc_a < doc_b);
* ``A<TAB>doc<TAB>immutable immutable ...<TAB>mutable|mutable|...``: a page's partition
  (immutables a set, repeats suffixed ``#k``; mutables in text order, repeats kept; words
  never hold a tab or ``|``).

And, as a side file (``--synonyms``), the synonym graph (``synonyms.write_synonyms``).

A page's partition travels once per pair, one way: the first version attached it to every
pair on both sides (2 x pairs x ~3.6 KB shuffled, then sorted: 35.7x the WARC bytes of
temporary data at 10^5 pages).  For a pair (a, b) in the order of its line, a is the *first*
page, b the *second*:

1. mapper: a pair goes to both its pages (``a -> P b``, ``b -> p a``), a partition to its
   page (``doc -> A ...``).  Reducer, per page: per pair in which it is first, its partition to
   the second page, ``b -> Q a immutables<TAB>mutables``; if it is second in a pair, its
   partition once to itself, ``doc -> A immutables<TAB>mutables``.
2. reducer, per page b: the Jaccard of each Q's immutables with b's own (``similarity.jaccard``);
   at or above ``--threshold`` the verifier's overlap (``verifier.mutable_overlap``, the
   function the in-process path calls, a's mutables first as there).  A page's Q records are
   held until its own record has been seen (the order of a key's values is the runner's):
   memory per page is its pairs' partitions, not the corpus.

(A third step that shipped mutables only for the pairs at or above t was measured: with the
candidate job's positional bound 40 % of the candidates are at or above t, so it saved less
than its dozen task processes cost.)

Output: ``doc_a doc_b<TAB>jaccard overlap`` (floats as ``repr``, exact) for the pairs at or
above the threshold, and ``#below_threshold<TAB>n`` per reducer task.  A pair whose page has
no partition line is an error naming the page.

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
        return [MRStep(mapper=self.route, reducer=self.send_partition),
                MRStep(reducer_init=self.start, reducer=self.score, reducer_final=self.finish)]

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

    def send_partition(self, doc, values):
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
        if first_of is not None:
            yield doc, f"A {partition}"
        for second in seconds:
            yield second, f"Q {doc} {partition}"

    def start(self):
        self.graph = read_synonyms(self.options.synonyms)
        self.below = 0

    def score(self, doc, values):
        own, queries = None, []
        for value in values:
            if value[0] == "A":
                own = value[2:]
            else:
                queries.append(value[2:])
        if own is None:  # step 1 sends a page its own partition whenever it is second in a pair
            raise ValueError(f"page {doc} has pairs to score but no partition")
        immutables, _, own_mutables = own.partition("\t")
        mine, threshold, mutables = set(immutables.split()), self.options.threshold, None
        for query in queries:
            first, _, partition = query.partition(" ")
            their_immutables, _, their_mutables = partition.partition("\t")
            similarity = jaccard(set(their_immutables.split()), mine)
            if similarity < threshold:
                self.below += 1
                continue
            if mutables is None:  # split_partition's lists, made only for pairs at or above t
                mutables = own_mutables.split("|") if own_mutables else []
            theirs = their_mutables.split("|") if their_mutables else []
            yield f"{first} {doc}", f"{similarity!r} {mutable_overlap(theirs, mutables, self.graph)!r}"

    def finish(self):
        yield BELOW, str(self.below)


if __name__ == "__main__":
    MRVerifyPairs.run()
