"""Exact immutable Jaccard and the mutable verifier for candidate page pairs, as a join on doc
id (one mrjob job, two steps), so no process holds the corpus's partitions.

Input, two kinds of line (any mix of files):

* ``P<TAB>doc_a doc_b``: a page pair to score (doc_a < doc_b);
* ``A<TAB>doc<TAB>immutable immutable ...<TAB>mutable|mutable|...``: a page's partition
  (immutables a set, repeats suffixed ``#k``; mutables in text order, repeats kept; words
  never hold a tab or ``|``).

And, as a side file (``--synonyms``), the synonym graph (``synonyms.write_synonyms``).

1. mapper: a pair goes to both its pages, ``doc -> P a b``; a partition to its page,
   ``doc -> A ...``.  Reducer, per page: its partition is attached to each of its pairs,
   ``a b -> side<TAB>partition`` (the page's pairs are held, not its neighbours' text).
2. reducer, per pair: the two partitions meet; Jaccard of the immutable sets
   (``similarity.jaccard``); at or above ``--threshold`` the verifier's overlap
   (``verifier.mutable_overlap``, the function the in-process path calls) is computed.

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
        return [MRStep(mapper=self.route, reducer=self.attach_partition),
                MRStep(reducer_init=self.start, reducer=self.score, reducer_final=self.finish)]

    def route(self, _, line):
        kind, tab, rest = line.partition("\t")
        if kind == "P" and tab:
            a, _, b = rest.partition(" ")
            if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
                yield a, f"P {rest}"
                yield b, f"P {rest}"
                return
        elif kind == "A" and tab:
            doc, tab, partition = rest.partition("\t")
            if tab and doc.lstrip("-").isdigit():
                yield doc, f"A {partition}"
                return
        raise ValueError(f"not 'P<TAB>doc_a doc_b' or 'A<TAB>doc<TAB>immutables<TAB>mutables': {line[:80]!r}")

    def attach_partition(self, doc, values):
        partition, pairs = None, []
        for value in values:
            if value.startswith("A "):
                partition = value[2:]
            else:
                pairs.append(value[2:])
        if pairs and partition is None:
            raise ValueError(f"page {doc} is in the pair {pairs[0]!r} but has no partition line")
        for pair in pairs:
            yield pair, f"{'a' if pair.partition(' ')[0] == doc else 'b'}\t{partition}"

    def start(self):
        self.graph = read_synonyms(self.options.synonyms)
        self.below = 0

    def score(self, pair, values):
        sides = dict(value.split("\t", 1) for value in values)
        imm_a, mut_a = split_partition(sides["a"])
        imm_b, mut_b = split_partition(sides["b"])
        similarity = jaccard(set(imm_a), set(imm_b))
        if similarity < self.options.threshold:
            self.below += 1
            return
        yield pair, f"{similarity!r} {mutable_overlap(mut_a, mut_b, self.graph)!r}"

    def finish(self):
        yield BELOW, str(self.below)


if __name__ == "__main__":
    MRVerifyPairs.run()
