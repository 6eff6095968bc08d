"""Job (c): for each patch gram, the (page, gram, other page) triples; grouped by patchy
page, the greedy set cover of Section 2, keeping pages with at least c sources.

Input: the output of job (b), the patchy pages and the rows of patch grams (gram, page,
domain id, ip id, patchy).  ``--foreign domain|ip`` keeps only triples whose two pages are on
different servers (Section 3; a page whose server is unknown is foreign to none).  Step 1
makes each gram bucket's triples (d, g, d') with d patchy (only a patchy page can be a
quilt); step 2 groups each page bucket's triples by page, looks up its sizes in the patchy
pages' rows, and covers.  The
output, one line per quilted page, is JSON:
``doc<TAB>{"n_patch_grams", "n_grams", "sources": [[doc, newly covered grams], ...]}``.
"""

import numpy as np
from mrjob.protocol import JSONProtocol
from mrjob.step import MRStep

from spamflow_quilt.buckets import run_starts
from spamflow_quilt.cover import greedy_cover_arrays, keep_sources
from spamflow_quilt.mr_base import QuiltJob, joined, rows_of, untagged
from spamflow_quilt.triples import iter_pair_triples


class MRQuiltCover(QuiltJob):
    OUTPUT_PROTOCOL = JSONProtocol  # one line per quilted page, read back by the detector

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--c", type=int, required=True)
        self.add_passthru_arg("--foreign", choices=["none", "domain", "ip"], default="none")
        self.add_passthru_arg("--phi", type=float, default=None)

    def steps(self):
        return [MRStep(mapper=self.tag_inputs, reducer=self.triples),
                MRStep(reducer=self.cover)]

    def tag_inputs(self, _, line):
        key, value = line.split(b"\t", 1)
        kind, columns = untagged(value)
        if kind == b"R":  # rows of patch grams
            yield from self.by_grams(b"R", *columns)
        elif kind == b"Q":  # patchy pages
            yield from self.by_docs(b"Q", *columns)
        else:
            raise ValueError(f"job (c) reads job (b)'s output, got a {kind!r} record under {key!r}")

    def triples(self, key, values):
        rows = rows_of(values)
        if key.startswith(b"d"):  # patchy pages pass through to step 2
            yield from self.passed_on(key, rows, b"Q")
            return
        grams, docs, domains, ips, patchy = joined(rows.get(b"R"), 5)
        foreign = self.options.foreign
        servers = {"none": domains, "domain": domains, "ip": ips}[foreign]
        for doc, gram, other in iter_pair_triples(grams, docs, servers, foreign=foreign != "none",
                                                  left=patchy.astype(bool)):
            yield from self.by_docs(b"T", doc, gram, other)

    def cover(self, key, values):
        rows = rows_of(values)
        patchy_docs, n_patch, n_grams = joined(rows.get(b"Q"), 3)
        docs, grams, others = joined(rows.get(b"T"), 3)  # step 1 made triples for patchy pages only
        order = np.argsort(docs, kind="stable")
        docs, grams, others = docs[order], grams[order], others[order]
        starts = run_starts(docs)
        ends = np.r_[starts[1:], len(docs)]
        size = dict(zip(patchy_docs.tolist(), zip(n_patch.tolist(), n_grams.tolist())))
        for start, end in zip(starts.tolist(), ends.tolist()):
            doc = int(docs[start])
            n_patch_doc, n_grams_doc = size[doc]
            sources = keep_sources(greedy_cover_arrays(others[start:end], grams[start:end]), n_patch_doc,
                                   self.options.phi)
            if len(sources) >= self.options.c:
                yield doc, {"n_patch_grams": n_patch_doc, "n_grams": n_grams_doc, "sources": sources}


if __name__ == "__main__":
    MRQuiltCover.run()
