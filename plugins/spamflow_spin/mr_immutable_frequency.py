"""Document frequency of every immutable (one mrjob job, one step): the global token order of
the candidate-pair job's prefix filter.

Input: one page per line, ``doc<TAB>immutable immutable ...`` (a set: repeats already
suffixed), so an immutable's count is its document frequency.  The mapper counts in memory
("in-mapper combining") and flushes every ``--flush-at`` distinct immutables, so a page's
~300 immutables cost a dictionary update rather than ~300 shuffled records; the reducer adds
the counts.  No combiner: after in-mapper combining it would meet each immutable once per
task and only re-sort and re-write the map output (40 % of the job's CPU on 5,000 pages).
Output: ``immutable<TAB>df`` for the immutables on two pages or more (one on a single page
can never be shared; the pair job takes a missing one as df 1).
This is the token-ordering stage of Vernica, Carey and Li (SIGMOD 2010), broadcast to the
pair job as a side file instead of being joined back to the pages through a shuffle.

Imports nothing from spamflow: a Spark or Hadoop worker gets only this package.
"""

from collections import Counter

from mrjob.job import MRJob
from mrjob.protocol import RawProtocol, RawValueProtocol
from mrjob.step import MRStep

from spamflow_spin.buckets import bucket_of


class MRImmutableFrequency(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    INTERNAL_PROTOCOL = RawProtocol
    OUTPUT_PROTOCOL = RawProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--flush-at", type=int, default=500_000,
                              help="the mapper emits its counts when it holds this many distinct immutables")
        self.add_passthru_arg("--buckets", type=int, default=4096,
                              help="shuffle keys: a map task sends one record per bucket of immutables")

    def steps(self):
        return [MRStep(mapper_init=self.start_counts, mapper=self.count, mapper_final=self.flush,
                       reducer=self.keep_shared)]

    def start_counts(self):
        self.counts: Counter[str] = Counter()

    def count(self, _, line):
        doc, tab, immutables = line.partition("\t")
        if not tab or not doc.lstrip("-").isdigit():
            raise ValueError(f"not a page line 'doc<TAB>immutables': {line[:80]!r}")
        self.counts.update(immutables.split())
        if len(self.counts) >= self.options.flush_at:
            yield from self.flush()

    def flush(self):
        """One record per bucket, ``bucket -> immutable n immutable n ...``: the shuffle carries
        a few thousand long lines per task instead of one line per distinct immutable."""
        buckets = self.options.buckets
        entries: dict[int, list[str]] = {}
        for immutable, n in self.counts.items():
            entries.setdefault(bucket_of(immutable, buckets), []).append(f"{immutable} {n}")
        for bucket, held in entries.items():
            yield str(bucket), " ".join(held)
        self.counts.clear()

    def keep_shared(self, _, values):
        counts: Counter[str] = Counter()
        for value in values:
            fields = value.split(" ")
            for immutable, n in zip(fields[0::2], fields[1::2]):
                counts[immutable] += int(n)
        for immutable, df in counts.items():
            if df >= 2:
                yield immutable, str(df)


if __name__ == "__main__":
    MRImmutableFrequency.run()
