"""Jobs (a), (b) and (c) of a snapshot as ONE mrjob job of four steps, so that a cluster charges
an application's start-up (10-60 s on Spark) once per snapshot, not three times.

Each job already reads only the one before it (job (b) the page buckets of (a)'s output, job (c)
(b)'s output), so the steps are the three jobs' steps one after the other, their code unchanged:

1. job (a)'s step (:mod:`~spamflow_quilt.mr_gram_df`: the grams' df, the patch grams' hits and
   the pages, by page bucket; its ``P`` records, the patch grams themselves, are left to job
   (b)'s reducer, which drops them, since no later step needs them);
2. job (b)'s reducer (:mod:`~spamflow_quilt.mr_patch_fraction`) on those page buckets;
3. job (c)'s first step (:mod:`~spamflow_quilt.mr_quilt_cover`), its mapper handed step 2's
   records instead of their lines;
4. job (c)'s cover.

Steps 1-2 batch records in ``--buckets`` buckets, steps 3-4 in ``--cover-buckets`` (job (c) has
its own, smaller count: it shuffles buckets x buckets records).  Neither changes the result.
Output: job (c)'s, one JSON line per quilted page.  What is lost against three jobs is their
intermediate files (``patch_grams.tsv``, ``patchy_pages.tsv``), which a parameter sweep reuses:
the sweep runs the three jobs.
"""

from mrjob.step import MRStep

from spamflow_quilt.mr_gram_df import MRGramDocumentFrequency
from spamflow_quilt.mr_patch_fraction import MRPatchFraction
from spamflow_quilt.mr_quilt_cover import MRQuiltCover


class MRQuiltSnapshot(MRQuiltCover):
    # job (a)'s and (b)'s methods, run with this job's options (theirs plus job (c)'s)
    gram_mapper_init = MRGramDocumentFrequency.mapper_init
    gram_mapper = MRGramDocumentFrequency.mapper
    gram_mapper_final = MRGramDocumentFrequency.mapper_final
    flush = MRGramDocumentFrequency.flush
    gram_combiner = MRGramDocumentFrequency.combiner
    gram_reducer_init = MRGramDocumentFrequency.reducer_init
    gram_reducer = MRGramDocumentFrequency.reducer
    gram_reducer_final = MRGramDocumentFrequency.reducer_final
    flush_hits = MRGramDocumentFrequency.flush_hits
    patch_reducer = MRPatchFraction.reducer

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--no-combiner", dest="combiner", action="store_false",
                              help="leave job (a)'s combiner out (when no map task flushes more than once)")
        self.add_passthru_arg("--theta", type=float, required=True, help="smallest patch fraction kept")
        self.add_passthru_arg("--cover-buckets", type=int, default=None,
                              help="buckets of steps 3-4 (job (c)'s); default --buckets")

    @property
    def cover_buckets(self) -> int:
        return self.options.cover_buckets or self.options.buckets

    def steps(self):
        return [MRStep(mapper_init=self.gram_mapper_init, mapper=self.gram_mapper, mapper_final=self.gram_mapper_final,
                       combiner=self.gram_combiner if self.options.combiner else None,
                       reducer_init=self.gram_reducer_init, reducer=self.gram_reducer,
                       reducer_final=self.gram_reducer_final),
                MRStep(reducer=self.patch_reducer),
                MRStep(mapper=self.cover_mapper, reducer=self.triples),
                MRStep(reducer=self.cover)]

    def cover_mapper(self, key, value):
        """Job (c)'s mapper on a record of step 2 (job (b)'s output line, split)."""
        yield from self.tag_inputs(None, key + b"\t" + value)


if __name__ == "__main__":
    MRQuiltSnapshot.run()
