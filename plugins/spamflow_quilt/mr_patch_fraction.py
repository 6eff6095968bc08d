"""Job (b): the patch fraction of every page, keeping the patchy pages (patchfrac ≥ θ).

Input: the output of job (a), whose page-bucket records hold each line's patch grams
(``H``) and its pages' size, servers and gram set (``S``; a line of copies has several),
keyed already, so the job has no mapper (Hadoop's identity mapper; the local runner just
links the input).  A page bucket's reducer counts each line's patch grams and divides by its
number of grams (the same for every page of the line).  Output: the patchy pages,
``Q <packed doc, n_patch_grams, n_grams, gram set, domain id, ip id>``, and, once per line
rather than per page, the lines' patch grams with the pages of those lines, in one record:
``L <packed gram, ordinal> <packed ordinal, doc, domain id, ip id, patchy, gram set>``, which
job (c) turns into units of copies and then into triples.
"""

import numpy as np
from mrjob.step import MRStep

from spamflow_quilt.buckets import distinct
from spamflow_quilt.mr_base import QuiltJob, joined, rows_of, tagged
from spamflow_quilt.packed import pack


def patchy_mask(n_patch: np.ndarray, n_grams: np.ndarray, theta: float) -> np.ndarray:
    """Which pages are patchy: patchfrac = |pgrams| / |grams| >= theta (never a page without grams)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (n_grams > 0) & (n_patch / n_grams >= theta)


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
        ordinals, docs, n_grams, domains, ips, sets = joined(rows.get(b"S"), 6)  # a row per page
        hit_ordinals, hit_grams = joined(rows.get(b"H"), 2)  # a row per (line, patch gram)
        lines = distinct(ordinals)
        n_patch = np.bincount(np.searchsorted(lines, hit_ordinals), minlength=len(lines)).astype(np.uint64)
        line_of = np.searchsorted(lines, ordinals)  # every page's line; every hit's line has pages
        n_patch = n_patch[line_of]
        patchy = patchy_mask(n_patch, n_grams, self.options.theta)
        if patchy.any():
            yield key, tagged(b"Q", docs[patchy], n_patch[patchy], n_grams[patchy], sets[patchy], domains[patchy],
                              ips[patchy])
        if len(hit_ordinals):
            pages = n_patch > 0  # the pages of lines with patch grams
            yield key, (b"L " + pack(hit_grams, hit_ordinals) + b" " +
                        pack(ordinals[pages].astype(np.uint32), docs[pages], domains[pages], ips[pages],
                             patchy[pages].astype(np.uint8), sets[pages]))


if __name__ == "__main__":
    MRPatchFraction.run()
