"""Job (c): for each patch gram, the (page, gram, other page) triples; grouped by patchy
page, the greedy set cover of Section 2, keeping pages with at least c sources.

Inputs: shingle lines, the outputs of jobs (a) and (b).  ``--foreign domain|ip`` keeps only
triples whose other page is on another server (Section 3).  Records between tasks are plain
text; the output, one line per quilted page, is JSON:
``doc<TAB>{"n_patch_grams", "n_grams", "sources": [[doc, newly covered grams], ...]}``.
"""

from mrjob.protocol import JSONProtocol
from mrjob.step import MRStep

from spamflow_quilt.cover import greedy_cover, keep_sources
from spamflow_quilt.mr_base import QuiltJob
from spamflow_quilt.postings import PATCH_MARK, patch_postings

NO_SERVER = "-"  # as in shingle.py (not imported: it imports pyarrow, which workers need not have)


class MRQuiltCover(QuiltJob):
    OUTPUT_PROTOCOL = JSONProtocol  # few lines, read back by the detector

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--c", type=int, required=True)
        self.add_passthru_arg("--foreign", choices=["none", "domain", "ip"], default="none")
        self.add_passthru_arg("--phi", type=float, default=None)

    def steps(self):
        return [MRStep(mapper=self.tag_inputs, reducer=self.triples),
                MRStep(reducer=self.cover)]

    def tag_inputs(self, _, line):
        fields = line.split("\t")
        if len(fields) == 4:  # a page: doc, domain, ip, grams
            server = {"none": NO_SERVER, "domain": fields[1], "ip": fields[2]}[self.options.foreign]
            value = f"{fields[0]} {server}"
            for gram in fields[3].split():
                yield gram, value
        elif " " in fields[1]:  # a patchy page from job (b): "n_patch_grams n_grams"
            yield "#" + fields[0], "q " + fields[1]
        else:  # a patch gram from job (a)
            yield fields[0], PATCH_MARK

    def triples(self, key, values):
        if key.startswith("#"):  # the patchy-page mark passes through
            for value in values:
                yield key[1:], value
            return
        postings = patch_postings(values, self.options.m)
        if postings is None:
            return
        pages = [value.split(" ") for value in postings]
        foreign = self.options.foreign != "none"
        for doc, server in pages:
            for other, other_server in pages:
                if other == doc:
                    continue
                if foreign and (NO_SERVER in (server, other_server) or server == other_server):
                    continue
                yield doc, f"t {key} {other}"

    def cover(self, doc, values):
        mark, pairs = None, []
        for value in values:
            kind, first, second = value.split(" ")
            if kind == "q":
                mark = (int(first), int(second))
            else:
                pairs.append((int(second), first))
        if mark is None:  # not a patchy page
            return
        n_patch, n_grams = mark
        sources = keep_sources(greedy_cover(pairs), n_patch, self.options.phi)
        if len(sources) >= self.options.c:
            yield int(doc), {"n_patch_grams": n_patch, "n_grams": n_grams, "sources": sources}


if __name__ == "__main__":
    MRQuiltCover.run()
