"""The host graphs of every snapshot from the page table, as one mrjob job.

Input lines: the page table's Parquet parts, local paths or, under a remote workdir, URLs
(``s3://...``), each opened with ``spamflow.storage.open_input``: the job's one import of
spamflow, whose zip the driver ships. The mapper reads a part's
snapshot, host, words and links columns and emits, keyed by host name, that the host
exists, its words per snapshot and the page links to it by (snapshot, source host)
(:func:`spamflow_links.hostgraph.page_records`); the reducer of a host name knows whether
it is a node, so it keeps or drops (and counts) the links to it. Output lines are
JSON lists: ``["node", name]``, ``["page", snapshot, name, words]``, ``["edge", snapshot,
source, target, links]`` and ``["count", snapshot, key, n]``
(:func:`spamflow_links.hostgraph.node_output`); ``graphs_from_records`` turns them into the
same ``HostGraph`` s as ``build_host_graph``.
"""

import json

import pyarrow as pa
import pyarrow.parquet as pq
from mrjob.job import MRJob
from mrjob.protocol import JSONValueProtocol, RawValueProtocol

from spamflow_links.hostgraph import merge_node_values, node_output, page_records

PART_COLUMNS = ["snapshot", "host", "words", "links"]


def part_batches(path: str):
    """The part's page batches; a file that is not a page table part fails naming itself."""
    try:
        with _open(path) as source, pq.ParquetFile(source) as part:
            missing = [c for c in PART_COLUMNS if c not in part.schema_arrow.names]
            if missing:
                raise ValueError(f"no column {', '.join(missing)}")
            yield from part.iter_batches(batch_size=4096, columns=PART_COLUMNS)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise ValueError(f"{path}: not a part of the page table: {exc}") from exc


def _open(path: str):
    """A part open for reading, a local file or a URL: the reader of remote workdirs decides."""
    from spamflow.storage import open_input  # standard library (fsspec only for a URL)

    return open_input(path)


class MRHostEdges(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    OUTPUT_PROTOCOL = JSONValueProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--nofollow", choices=["yes", "no"], default="yes",
                              help="count rel=nofollow links as edges")

    def mapper(self, _, path):
        yield from page_records(part_batches(path.strip()), nofollow=self.options.nofollow == "yes")

    def combiner(self, key, values):
        if key.startswith("c "):
            yield key, sum(values)
            return
        exists, words, links = merge_node_values(values)
        if exists:
            yield key, ["N"]
        for s, w in words.items():
            yield key, ["W", s, w]
        for (s, source), c in links.items():
            yield key, ["L", s, source, c]

    def reducer(self, key, values):
        if key.startswith("c "):
            snapshot, what = json.loads(key[2:])
            yield None, ["count", snapshot, what, sum(values)]
            return
        for record in node_output(key[2:], values):
            yield None, record


if __name__ == "__main__":
    MRHostEdges.run()
