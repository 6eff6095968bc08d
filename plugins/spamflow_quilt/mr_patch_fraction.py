"""Job (b): the patch fraction of every page, keeping the patchy pages (patchfrac ≥ θ).

Inputs: shingle lines and the output of job (a).  Output: ``doc<TAB>[n_patch_grams, n_grams]``.
Step 1 joins grams with the patch-gram list; step 2 counts per page.
"""

import json

from mrjob.job import MRJob
from mrjob.protocol import JSONProtocol
from mrjob.step import MRStep

from spamflow_quilt.postings import PATCH_MARK, patch_postings


class MRPatchFraction(MRJob):
    INTERNAL_PROTOCOL = JSONProtocol
    OUTPUT_PROTOCOL = JSONProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--m", type=int, required=True, help="largest df of a patch gram")
        self.add_passthru_arg("--theta", type=float, required=True, help="smallest patch fraction kept")

    def steps(self):
        return [MRStep(mapper=self.tag_inputs, reducer=self.join_patch_grams),
                MRStep(reducer=self.patch_fraction)]

    def tag_inputs(self, _, line):
        if line.startswith("{"):  # a page
            page = json.loads(line)
            yield ["n", page["d"]], len(page["g"])
            for gram in page["g"]:
                yield gram, page["d"]
        else:  # a patch gram from job (a)
            gram, _df = line.split("\t", 1)
            yield json.loads(gram), PATCH_MARK

    def join_patch_grams(self, key, values):
        if isinstance(key, list):  # ["n", doc]: the page's gram count passes through
            for n in values:
                yield key[1], ["n", n]
            return
        for doc in patch_postings(values, self.options.m) or ():
            yield doc, ["p", 1]

    def patch_fraction(self, doc, values):
        n_grams = n_patch = 0
        for kind, n in values:
            if kind == "n":
                n_grams = n
            else:
                n_patch += n
        if n_grams and n_patch / n_grams >= self.options.theta:
            yield doc, [n_patch, n_grams]


if __name__ == "__main__":
    MRPatchFraction.run()
