"""Job 1 of the content stage on MapReduce: the corpus statistics, word-count style.

Input lines: paths of the page table's Parquet parts, one per line.  ``--sample`` is a
Parquet file with the ``doc_id`` of the sampled pages (the stage writes it).  The mapper
reads each part's sampled pages and emits, per batch, the occurrences of each non-stop word
(for the corpus precision/recall list) and of each stemmed term per virtual document
(snapshot and host, for BM25), both through the functions the in-process stage uses; the
combiner and the first reducer sum them; the second step groups a term's documents.

Output lines (JSON key, JSON value); keys are strings, as Spark's combiners need hashable keys
(words, terms and hosts hold no tab):

* ``"w\\tWORD"`` → its occurrences in the sampled pages;
* ``"t\\tTERM"`` → its postings ``[["SNAPSHOT\\tHOST", occurrences], ...]`` sorted by
  document: the term's document frequency is their number, its collection frequency their sum.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from mrjob.job import MRJob
from mrjob.protocol import RawValueProtocol, StandardJSONProtocol
from mrjob.step import MRStep

from spamflow_content.batch_words import BatchWords
from spamflow_content.key_index import KeyIndex
from spamflow_content.page_batch import named_term_counts, part_batches, sampled

CORPUS_COLUMNS = ["doc_id", "snapshot", "host", "words"]


class MRContentCorpus(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    INTERNAL_PROTOCOL = StandardJSONProtocol  # Python's json: floats and strings round-trip exactly
    OUTPUT_PROTOCOL = StandardJSONProtocol

    def configure_args(self) -> None:
        super().configure_args()
        self.add_file_arg("--sample", help="Parquet file whose doc_id column lists the sampled pages")

    def steps(self) -> list[MRStep]:
        return [MRStep(mapper_init=self.load_sample, mapper=self.count_part, combiner=self.add_up,
                       reducer=self.by_term),
                MRStep(reducer=self.postings)]

    def load_sample(self) -> None:
        self.sampled_ids = KeyIndex(pq.read_table(self.options.sample, columns=["doc_id"])["doc_id"])

    def count_part(self, _: None, path: str) -> Iterator[tuple[str, int]]:
        if not path.strip():
            return
        for table in part_batches(path.strip(), CORPUS_COLUMNS):
            table = sampled(table, self.sampled_ids)
            if table.num_rows == 0:
                continue
            words = BatchWords(table["words"])  # encoded once for the word counts and the terms
            content = ~words.stop  # stop words are never in the ranked list: spare the shuffle
            for word, n in zip(words.distinct.filter(pa.array(content)).to_pylist(), words.counts()[content].tolist()):
                yield f"w\t{word}", n
            for doc, term, n in named_term_counts(table, words):
                yield f"t\t{term}\t{doc}", n

    def add_up(self, key: str, counts: Iterable[int]) -> Iterator[tuple[str, int]]:
        yield key, sum(counts)

    def by_term(self, key: str, counts: Iterable[int]) -> Iterator[tuple[str, Any]]:
        total = sum(counts)
        if key.startswith("w\t"):
            yield key, total
        else:
            _, term, doc = key.split("\t", 2)
            yield f"t\t{term}", [doc, total]

    def postings(self, key: str, values: Iterable[Any]) -> Iterator[tuple[str, Any]]:
        if key.startswith("w\t"):
            yield key, sum(values)  # one value: step 1 summed it
        else:
            yield key, sorted(values)


if __name__ == "__main__":
    MRContentCorpus.run()
