"""Job (c): for each patch gram, the (page, gram, other page) triples; grouped by patchy
page, the greedy set cover of Section 2, keeping pages with at least c sources.

Inputs: shingle lines, the outputs of jobs (a) and (b).  ``--foreign domain|ip`` keeps only
triples whose other page is on another server (Section 3).  Output:
``doc<TAB>{"n_patch_grams", "n_grams", "sources": [[doc, newly covered grams], ...]}``.
"""

import json

from mrjob.job import MRJob
from mrjob.protocol import JSONProtocol
from mrjob.step import MRStep

from spamflow_quilt.cover import greedy_cover, keep_sources
from spamflow_quilt.postings import PATCH_MARK, patch_postings


class MRQuiltCover(MRJob):
    INTERNAL_PROTOCOL = JSONProtocol
    OUTPUT_PROTOCOL = JSONProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--m", type=int, required=True)
        self.add_passthru_arg("--c", type=int, required=True)
        self.add_passthru_arg("--foreign", choices=["none", "domain", "ip"], default="none")
        self.add_passthru_arg("--phi", type=float, default=None)

    def steps(self):
        return [MRStep(mapper=self.tag_inputs, reducer=self.triples),
                MRStep(reducer=self.cover)]

    def tag_inputs(self, _, line):
        if line.startswith("{"):  # a page
            page = json.loads(line)
            server = {"none": None, "domain": page["dom"], "ip": page["ip"]}[self.options.foreign]
            for gram in page["g"]:
                yield gram, [page["d"], server]
            return
        key, value = line.split("\t", 1)
        value = json.loads(value)
        if isinstance(value, list):  # a patchy page from job (b): [n_patch_grams, n_grams]
            yield ["q", json.loads(key)], value
        else:  # a patch gram from job (a)
            yield json.loads(key), PATCH_MARK

    def triples(self, key, values):
        if isinstance(key, list):  # ["q", doc]: the patchy-page mark passes through
            for value in values:
                yield key[1], ["q"] + value
            return
        docs = patch_postings(values, self.options.m)
        if docs is None:
            return
        foreign = self.options.foreign != "none"
        for doc, server in docs:
            for other, other_server in docs:
                if other == doc:
                    continue
                if foreign and (server is None or other_server is None or server == other_server):
                    continue
                yield doc, ["t", key, other]

    def cover(self, doc, values):
        mark, pairs = None, []
        for value in values:
            if value[0] == "q":
                mark = value
            else:
                pairs.append((value[2], value[1]))
        if mark is None:  # not a patchy page
            return
        n_patch, n_grams = mark[1], mark[2]
        sources = keep_sources(greedy_cover(pairs), n_patch, self.options.phi)
        if len(sources) >= self.options.c:
            yield doc, {"n_patch_grams": n_patch, "n_grams": n_grams, "sources": sources}


if __name__ == "__main__":
    MRQuiltCover.run()
