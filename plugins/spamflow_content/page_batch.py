"""One batch of sampled pages to what the stage needs from it: the per-page measures (a row
per page), the words it adds to the corpus counts and its stemmed terms per virtual document.

The in-process stage and the MapReduce mappers (``mr_content_corpus.py``,
``mr_content_pages.py``) both go through these functions, so the two engines cannot drift.
Imports nothing of spamflow but the word rule (``spamflow.words``, standard library and
NumPy), and for a part under a remote workdir its reader (``spamflow.storage``, fsspec),
which the MapReduce path ships to the workers.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from spamflow_content import bm25
from spamflow_content.batch_words import BatchWords
from spamflow_content.key_index import KeyIndex
from spamflow_content.measures import (
    CORPUS_MEASURES,
    MEASURES,
    PAGE_COLUMNS,
    PopularTerms,
    page_measures,
    ranked_measures,
    text_measures,
)

BATCH_ROWS = 2048
"""Pages per batch, on both engines."""

MEASURED_COLUMNS = ("doc_id", "snapshot", "host", "url", *PAGE_COLUMNS)
"""Page-table columns the measures read, with the page's keys."""

MEASURED_SCHEMA = pa.schema([("snapshot", pa.string()), ("host", pa.string()), ("doc_id", pa.int64()),
                             ("url", pa.string()), *((m, pa.float64()) for m in MEASURES)])
"""A row per page: its keys and the 24 measures."""

TEXT_MEASURED_SCHEMA = pa.schema([f for f in MEASURED_SCHEMA if f.name not in CORPUS_MEASURES])
"""``MEASURED_SCHEMA`` without the measures that need the corpus's popular words."""

PAGE_SCHEMA = MEASURED_SCHEMA.append(pa.field("is_home", pa.bool_())).append(pa.field("is_max_linked", pa.bool_()))
"""The stage's ``pages.parquet``: the measured rows with the page's sampling flags."""


def doc_keys(table: pa.Table) -> pa.Array:
    """``snapshot \\t host`` of each page: the name of its host's virtual document."""
    return pc.binary_join_element_wise(table["snapshot"], table["host"], "\t").combine_chunks()


def measured_pages(table: pa.Table, popular: PopularTerms, words: BatchWords | None = None) -> pa.Table:
    """The keys and the 24 measures of every page of ``table`` (``MEASURED_SCHEMA``); ``words``:
    its ``words`` column already encoded."""
    values = page_measures(table, popular, words)
    return pa.table({"snapshot": table["snapshot"], "host": table["host"], "doc_id": table["doc_id"],
                     "url": table["url"], **{m: values[m] for m in MEASURES}}, schema=MEASURED_SCHEMA)


def text_measured_pages(table: pa.Table, words: BatchWords, query: list[str]) -> pa.Table:
    """``measured_pages`` without the ``CORPUS_MEASURES`` (``TEXT_MEASURED_SCHEMA``): what the
    in-process stage's first pass can measure before the corpus's popular words are known."""
    values = text_measures(table, words, query)
    return pa.table({"snapshot": table["snapshot"], "host": table["host"], "doc_id": table["doc_id"],
                     "url": table["url"], **{m: values[m] for m in TEXT_MEASURED_SCHEMA.names[4:]}},
                    schema=TEXT_MEASURED_SCHEMA)


def with_corpus_measures(measured: pa.Table | pa.RecordBatch, words: BatchWords, corpus: list[str]) -> pa.Table:
    """A ``text_measured_pages`` table with the ``CORPUS_MEASURES`` added (``MEASURED_SCHEMA``):
    ``words`` the same pages' words (their non-stop occurrences suffice)."""
    values = ranked_measures("corpus", words, corpus)
    return pa.table({name: values[name] if name in values else measured.column(name)
                     for name in MEASURED_SCHEMA.names}, schema=MEASURED_SCHEMA)


def named_term_counts(table: pa.Table, words: BatchWords | None = None) -> Iterator[tuple[str, str, int]]:
    """(virtual document, stemmed term, occurrences) of one batch, one per distinct pair:
    ``bm25.count_terms`` with the documents and terms named rather than numbered; ``words``:
    the batch's ``words`` column already encoded."""
    encoded = pc.dictionary_encode(doc_keys(table))
    docs, terms, counts, term_names = bm25.count_terms(table["words"] if words is None else words,
                                                      np.asarray(encoded.indices, dtype=np.int64))
    names, stems = encoded.dictionary.to_pylist(), term_names.to_pylist()
    for doc, term, n in zip(docs.tolist(), terms.tolist(), counts.tolist()):
        yield names[doc], stems[term], n


def part_batches(path: str, columns: list[str]) -> Iterator[pa.Table]:
    """The batches of one Parquet part of the page table, ``BATCH_ROWS`` rows at most; a URL
    (``s3://``, ``hdfs://``: a part under a remote workdir) is read with the client that wrote
    the workdir, a path as a plain file: ``spamflow.storage.open_input`` decides which."""
    from spamflow.storage import open_input  # standard library (fsspec only for a URL)

    with open_input(path) as source, pq.ParquetFile(source) as part:
        for batch in part.iter_batches(batch_size=BATCH_ROWS, columns=columns):
            yield pa.Table.from_batches([batch])


def sampled(table: pa.Table, sampled_ids: KeyIndex) -> pa.Table:
    """The rows of ``table`` whose ``doc_id`` is in the sample."""
    return table.filter(pa.array(sampled_ids.contains(table["doc_id"])))
