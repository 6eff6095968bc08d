"""Job (b): the patch fraction of every page, keeping the patchy pages (patchfrac ≥ θ).

Input: the output of job (a), whose page-bucket records hold each page's patch grams
(``H``) and its size and servers (``S``), keyed already, so the job has no mapper (Hadoop's
identity mapper; the local runner just links the input).  A page bucket's reducer counts
each page's patch grams and divides by its number of grams.  Output: the patchy pages,
``Q <packed doc, n_patch_grams, n_grams, gram set, domain id, ip id>``, and the rows of every
page's patch grams with its servers, whether it is patchy and its gram set,
``R <packed gram, doc, domain id, ip id, patchy, gram set>``, which job (c) turns into triples.
"""

import numpy as np
from mrjob.step import MRStep

from spamflow_quilt.mr_base import QuiltJob, joined, rows_of, tagged


class MRPatchFraction(QuiltJob):
    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--theta", type=float, required=True, help="smallest patch fraction kept")

    def steps(self):
        return [MRStep(reducer=self.reducer)]  # job (a)'s output is keyed already: no mapper

    def reducer(self, key, values):
        if not key.startswith(b"d"):  # the patch grams themselves (P) are not needed here
            if not key.startswith(b"g"):
                raise ValueError(f"job (b) reads job (a)'s output, got a record keyed {key[:40]!r}")
            return
        rows = rows_of(values)
        if any(len(columns) != 6 for columns in rows.get(b"S", ())):
            raise ValueError(f"job (b) reads job (a)'s output with gram sets (S rows of 6 columns, stage "
                             f"version 2), got S rows of another width under {key[:40]!r}: rerun job (a)")
        ordinals, docs, n_grams, domains, ips, sets = joined(rows.get(b"S"), 6)
        hit_ordinals, hit_grams = joined(rows.get(b"H"), 2)
        order = np.argsort(ordinals)
        page = order[np.searchsorted(ordinals[order], hit_ordinals)]  # every hit has its page
        n_patch = np.bincount(page, minlength=len(docs)).astype(np.uint64)
        with np.errstate(divide="ignore", invalid="ignore"):
            patchy = (n_grams > 0) & (n_patch / n_grams >= self.options.theta)
        if patchy.any():
            yield key, tagged(b"Q", docs[patchy], n_patch[patchy], n_grams[patchy], sets[patchy], domains[patchy],
                              ips[patchy])
        if len(hit_ordinals):
            yield key, tagged(b"R", hit_grams, docs[page], domains[page], ips[page], patchy[page].astype(np.uint8),
                              sets[page])


if __name__ == "__main__":
    MRPatchFraction.run()
