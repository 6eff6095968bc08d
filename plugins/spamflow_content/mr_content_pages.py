"""Job 2 of the content stage on MapReduce: per-page measures in the mapper, the host's 96
features in the reducer.

Input lines: paths of the page table's Parquet parts, one per line.  ``--sample`` is a
Parquet file of the sampled pages (``doc_id``, ``is_home``, ``is_max_linked``), ``--popular``
a JSON file ``{"corpus": [...], "query": [...]}`` with the ranked lists of job 1 (or of the
saved corpus statistics).  The mapper counts each host's pages and measures its sampled
pages with ``page_batch.measured_pages``; the reducer, keyed by (snapshot, host), aggregates
them with ``host_features.host_features``: the in-process stage's functions both.

Output lines (JSON key, JSON value): ``"page"`` → a row of ``page_batch.PAGE_SCHEMA``,
``"host"`` → a row of ``host_features.host_schema()``, values in schema order.  Keys are
strings (``SNAPSHOT\\tHOST`` between the steps), as Spark's combiners need hashable keys.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from mrjob.job import MRJob
from mrjob.protocol import RawValueProtocol, StandardJSONProtocol
from mrjob.step import MRStep

from spamflow_content.host_features import host_features
from spamflow_content.key_index import KeyIndex
from spamflow_content.measures import PopularTerms
from spamflow_content.page_batch import MEASURED_COLUMNS, PAGE_SCHEMA, doc_keys, measured_pages, part_batches, sampled


class MRContentPages(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    INTERNAL_PROTOCOL = StandardJSONProtocol  # Python's json: floats and strings round-trip exactly
    OUTPUT_PROTOCOL = StandardJSONProtocol

    def configure_args(self) -> None:
        super().configure_args()
        self.add_file_arg("--sample", help="Parquet file of the sampled pages: doc_id, is_home, is_max_linked")
        self.add_file_arg("--popular", help='JSON file {"corpus": [...], "query": [...]}, most popular first')

    def steps(self) -> list[MRStep]:
        return [MRStep(mapper_init=self.load_inputs, mapper=self.measure_part, combiner=self.add_counts,
                       reducer=self.host_rows)]

    def load_inputs(self) -> None:
        self.sample = pq.read_table(self.options.sample, columns=["doc_id", "is_home", "is_max_linked"])
        self.sampled_ids = KeyIndex(self.sample["doc_id"])  # indexed once, not per batch
        with open(self.options.popular, encoding="utf-8") as fh:
            lists = json.load(fh)
        self.popular = PopularTerms(corpus=lists["corpus"], query=lists["query"])

    def measure_part(self, _: None, path: str) -> Iterator[tuple[str, list[Any]]]:
        if not path.strip():
            return
        for table in part_batches(path.strip(), list(MEASURED_COLUMNS)):
            table = table.filter(pc.not_equal(table["host"], ""))  # pages without a host are not featurised
            counts = pc.value_counts(doc_keys(table))
            for key, n in zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist()):
                yield key, ["n", n]
            table = sampled(table, self.sampled_ids)
            if table.num_rows == 0:
                continue
            pages = measured_pages(table, self.popular)
            flags = self.sample.take(pa.array(self.sampled_ids.positions(pages["doc_id"])))
            pages = pages.append_column("is_home", flags["is_home"]).append_column(
                "is_max_linked", flags["is_max_linked"])
            for row in zip(*(pages[name].to_pylist() for name in pages.column_names)):
                yield f"{row[0]}\t{row[1]}", ["p", list(row)]

    def add_counts(self, key: str, values: Iterable[list[Any]]) -> Iterator[tuple[str, list[Any]]]:
        total = 0
        for value in values:
            if value[0] == "n":
                total += value[1]
            else:
                yield key, value
        if total:
            yield key, ["n", total]

    def host_rows(self, key: str, values: Iterable[list[Any]]) -> Iterator[tuple[str, list[Any]]]:
        snapshot, host = key.split("\t")
        total, rows = 0, []
        for value in values:
            if value[0] == "n":
                total += value[1]
            else:
                rows.append(value[1])
        pages = pa.Table.from_pylist([dict(zip(PAGE_SCHEMA.names, row)) for row in rows], schema=PAGE_SCHEMA)
        pages = pages.sort_by([("doc_id", "ascending")])  # the in-process page order
        counts = pa.table({"snapshot": [snapshot], "host": [host], "pages": pa.array([total], pa.int64())})
        for row in pages.to_pylist():
            yield "page", list(row.values())
        for row in host_features(pages, counts).to_pylist():
            yield "host", list(row.values())


if __name__ == "__main__":
    MRContentPages.run()
