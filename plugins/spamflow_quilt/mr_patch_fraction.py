"""Job (b): the patch fraction of every page, keeping the patchy pages (patchfrac ≥ θ).

Inputs: shingle lines (four tab-separated fields) and the output of job (a) (two).
Output: ``doc<TAB>n_patch_grams n_grams``.  Step 1 joins grams with the patch-gram list;
step 2 counts per page.  Keys starting with ``#`` carry a page, the others a gram.
"""

from mrjob.step import MRStep

from spamflow_quilt.mr_base import QuiltJob
from spamflow_quilt.postings import PATCH_MARK, patch_postings


class MRPatchFraction(QuiltJob):
    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--theta", type=float, required=True, help="smallest patch fraction kept")

    def steps(self):
        return [MRStep(mapper=self.tag_inputs, reducer=self.join_patch_grams),
                MRStep(reducer=self.patch_fraction)]

    def tag_inputs(self, _, line):
        fields = line.split("\t")
        if len(fields) == 4:  # a page
            doc, grams = fields[0], fields[3].split()
            yield "#" + doc, f"n {len(grams)}"
            for gram in grams:
                yield gram, doc
        else:  # a patch gram from job (a)
            yield fields[0], PATCH_MARK

    def join_patch_grams(self, key, values):
        if key.startswith("#"):  # the page's gram count passes through
            for value in values:
                yield key[1:], value
            return
        for doc in patch_postings(values, self.options.m) or ():
            yield doc, "p"

    def patch_fraction(self, doc, values):
        n_grams = n_patch = 0
        for value in values:
            if value == "p":
                n_patch += 1
            else:
                n_grams = int(value[2:])
        if n_grams and n_patch / n_grams >= self.options.theta:
            yield doc, f"{n_patch} {n_grams}"


if __name__ == "__main__":
    MRPatchFraction.run()
