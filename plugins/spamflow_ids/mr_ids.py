"""The ids detector's MapReduce job: two steps over the page table's parts and the WARC files.

Input lines are JSON: ``{"part": PATH}`` (a page-table part) or ``{"warc": LOCATION}`` (a WARC
file whose HTML bodies are scanned for script identifiers). Step 1 joins by doc_id: the
mapper emits each page's row (snapshot, host, domain, url, link identifiers) and each
scanned body's identifiers under the page's doc_id; the reducer of a doc_id keeps a page
that is in the page table, adds its HTML identifiers, and emits one occurrence per
identifier keyed by (snapshot, identifier), and a page count keyed by (snapshot, host).
Step 2 reduces each identifier to :func:`spamflow_ids.networks.id_record` and sums the page
counts. Output lines: ``["id", record]`` and ``["pages", snapshot, host, domain, n]``; the
driver (``spamflow_ids.mapreduce``) hands them to the same ``assemble`` as the memory
engine. The module imports only this package's pure functions (and spamflow's WARC reader
inside ``sources.warc_html_ids``, shipped as a zip to cluster workers).
"""

import json
import tempfile
from pathlib import Path

from mrjob.job import MRJob
from mrjob.protocol import JSONProtocol, JSONValueProtocol, RawValueProtocol
from mrjob.step import MRStep

from spamflow_ids.extract import IdRules
from spamflow_ids.networks import id_record, page_occurrences
from spamflow_ids.sources import part_page_ids, warc_html_ids


class MRIds(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    INTERNAL_PROTOCOL = JSONProtocol
    OUTPUT_PROTOCOL = JSONValueProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--rules", default="{}", help="the IdRules as JSON")
        self.add_passthru_arg("--max-domains", type=int, default=20)
        self.add_passthru_arg("--max-examples", type=int, default=5)
        self.add_passthru_arg("--max-bytes", type=int, default=5_000_000)

    def steps(self):
        return [MRStep(mapper=self.map_sources, reducer=self.join_pages),
                MRStep(reducer=self.reduce_ids)]

    def _rules(self):
        return IdRules.from_dict(json.loads(self.options.rules))

    def map_sources(self, _, line):
        source = json.loads(line)
        if "part" in source:
            rules = self._rules()
            for doc_id, snapshot, host, domain, url, ids in part_page_ids(source["part"], rules):
                yield doc_id, ["P", snapshot, host, domain, url, ids]
        else:
            with tempfile.TemporaryDirectory(prefix="spamflow-ids-spool-") as spool:
                for doc_id, ids in warc_html_ids(source["warc"], list(self._rules().html_kinds),
                                                 self.options.max_bytes, Path(spool)):
                    yield doc_id, ["H", ids]

    def join_pages(self, doc_id, values):
        row, html = None, set()
        for value in values:
            if value[0] == "P":
                row = value if row is None or value[1:] < row[1:] else row  # a doc_id twice: the same row as memory's
            else:
                html.update(value[1])
        if row is None:  # a body no page of the table has (a record parse did not keep)
            return
        _, snapshot, host, domain, url, ids = row
        yield ["n", snapshot, host], [domain, 1]
        for (snap, ident), occ in page_occurrences(snapshot, host, domain, doc_id, url, sorted(set(ids) | html)):
            yield ["i", snap, ident], list(occ)

    def reduce_ids(self, key, values):
        if key[0] == "n":
            domain, n = "", 0
            for d, c in values:
                domain, n = d, n + c
            yield None, ["pages", key[1], key[2], domain, n]
            return
        occurrences = [tuple(v) for v in values]
        yield None, ["id", id_record(key[1], key[2], occurrences, max_domains=self.options.max_domains,
                                     max_examples=self.options.max_examples)]


if __name__ == "__main__":
    MRIds.run()
