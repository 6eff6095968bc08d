"""Job (b): the patch fraction of every page, keeping the patchy pages (patchfrac ≥ θ).

Inputs: shingle lines and the output of job (a).  Step 1 joins each gram bucket's
(gram, page) rows with its patch grams; step 2 counts each page's hits and divides by its
number of grams.  Output: the patchy pages, ``Q <packed doc, n_patch_grams, n_grams>``, and
the join itself with each page's servers, ``R <packed gram, doc, domain id, ip id>``, which
job (c) reads instead of joining the whole corpus with the patch grams a second time
(Figure 5 computes the same join, ``docToGrams ⋈ patchGrams``, in both of its queries).
"""

import numpy as np
from mrjob.step import MRStep

from spamflow_quilt.buckets import RowBuffer
from spamflow_quilt.mr_base import QuiltJob, joined, page_fields, rows_of, tagged, untagged
from spamflow_quilt.packed import unpack
from spamflow_quilt.servers import server_id


class MRPatchFraction(QuiltJob):
    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--theta", type=float, required=True, help="smallest patch fraction kept")

    def steps(self):
        return [MRStep(mapper_init=self.start, mapper=self.tag_inputs, mapper_final=self.flush,
                       reducer=self.join_patch_grams),
                MRStep(reducer=self.patch_fraction)]

    def start(self):
        self.pending = RowBuffer(2)  # gram, doc
        self.pages: list[tuple[int, int, int, int]] = []  # doc, n_grams, domain id, ip id

    def tag_inputs(self, _, line):
        fields = page_fields(line)
        if fields is None:  # a bucket of patch grams from job (a)
            _kind, (grams, _df) = untagged(line.split(b"\t", 1)[1])
            yield from self.by_grams(b"P", grams)
            return
        doc = int(fields[0])
        (grams,) = unpack(fields[3])
        self.pending.add(grams, np.full(len(grams), doc, np.uint64))
        self.pages.append((doc, len(grams), server_id(fields[1].decode()), server_id(fields[2].decode())))
        if self.pending.rows >= self.options.flush_rows:
            yield from self.flush()

    def flush(self):
        yield from self.by_grams(b"G", *self.pending.take())
        pages = np.array(self.pages, np.uint64).reshape(-1, 4).T
        self.pages = []
        yield from self.by_docs(b"S", *pages)

    def join_patch_grams(self, key, values):
        rows = rows_of(values)
        if key.startswith(b"d"):  # pages pass through to step 2
            yield from self.passed_on(key, rows, b"S")
            return
        grams, docs = joined(rows.get(b"G"), 2)
        (patch,) = joined(rows.get(b"P"), 1)
        keep = np.isin(grams, patch)
        yield from self.by_docs(b"H", docs[keep], grams[keep])

    def patch_fraction(self, key, values):
        rows = rows_of(values)
        docs, n_grams, domains, ips = joined(rows.get(b"S"), 4)
        hit_docs, hit_grams = joined(rows.get(b"H"), 2)
        order = np.argsort(docs)
        page = order[np.searchsorted(docs[order], hit_docs)]  # every hit has its page
        n_patch = np.bincount(page, minlength=len(docs)).astype(np.uint64)
        with np.errstate(divide="ignore", invalid="ignore"):
            patchy = (n_grams > 0) & (n_patch / n_grams >= self.options.theta)
        if patchy.any():
            yield key, tagged(b"Q", docs[patchy], n_patch[patchy], n_grams[patchy])
        if len(hit_docs):
            yield key, tagged(b"R", hit_grams, hit_docs, domains[page], ips[page])


if __name__ == "__main__":
    MRPatchFraction.run()
