"""The content stage's MapReduce engine, driver side: write the jobs' inputs under ``work/``,
run job 1 (corpus statistics) and job 2 (page measures and host features) through
``spamflow.mr.run_job``, and read their outputs back into the tables and matrix the
in-process engine builds, so everything after them is the same code."""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import scipy.sparse as sp

from spamflow import storage
from spamflow.mr import run_job
from spamflow.mr.driver import package_zip
from spamflow_content.corpus import heaviest
from spamflow_content.host_features import host_schema
from spamflow_content.measures import PopularTerms
from spamflow_content.mr_content_corpus import MRContentCorpus
from spamflow_content.mr_content_pages import MRContentPages
from spamflow_content.page_batch import PAGE_SCHEMA
from spamflow_content.term_counts import KeptTerms, TermCounts

READ_ROWS = 8192
"""Output rows turned into Arrow at a time: the driver never holds a job's output as Python lists."""


@dataclass(frozen=True)
class JobInputs:
    """The files both jobs read: the part list (one Parquet path per line) and the sample."""

    parts: Path
    sample: Path
    runner: str
    runner_args: tuple[str, ...]

    def run(self, job: type, output: Path, args: list[str]) -> Iterator[tuple[Any, Any]]:
        """Run ``job`` over the parts (now), then read its output lines as (key, value)."""
        extra = self.runner_args
        if self.runner != "inline":  # the word rule, spamflow.words, is the one module of spamflow the jobs use
            extra = (*extra, "--py-files", str(package_zip("spamflow")))
        run_job(job, [self.parts], output, runner=self.runner, args=["--sample", str(self.sample), *args],
                runner_args=extra)
        return _output_lines(output)


def job_inputs(pages: ds.Dataset, index: pa.Table, work: Path, runner: str,
               runner_args: tuple[str, ...]) -> JobInputs:
    """Write ``work/parts.txt`` (the page table's parts: their URLs under a remote workdir,
    where the parse stage was published before this stage started, so workers on any machine
    read them; else local paths) and ``work/sample.parquet`` (the sampled pages and their
    flags, from the in-process sampling index)."""
    work.mkdir(parents=True, exist_ok=True)
    parts = work / "parts.txt"
    located = [storage.task_location(f) for f in pages.files]
    parts.write_text("".join(f + "\n" for f in sorted(located)), encoding="utf-8")
    sample = work / "sample.parquet"
    pq.write_table(index.filter(index["sampled"]).select(["doc_id", "is_home", "is_max_linked"]), sample)
    return JobInputs(parts, sample, runner, runner_args)


def corpus_statistics(inputs: JobInputs, doc_keys: list[str], work: Path,
                      kept: KeptTerms, top: int | None = None) -> tuple[pa.Table, TermCounts]:
    """Job 1: the corpus word counts (``word``, ``n``) and the virtual documents × terms counts
    of the ``kept`` terms, rows in ``doc_keys`` order, columns in the job's output order (the
    order is free: the vocabulary is chosen by frequency, ties by term).  ``top`` given: only
    the words that can be among the ``top`` most frequent are kept as they are read
    (``corpus.heaviest``), not the whole vocabulary.

    The output is read twice, so that no term below ``min_df`` is ever held: the first pass
    takes each document's length and each term's document frequency (one int64 a term), which
    decide the kept terms; the second takes the kept terms' postings."""
    output = work / "corpus.jsonl"
    row_of = {key: i for i, key in enumerate(doc_keys)}
    lengths = np.zeros(len(doc_keys), dtype=np.float64)
    df = array("q")
    word_parts: list[pa.Table] = []
    words: list[str] = []
    word_n: list[int] = []
    for key, value in inputs.run(MRContentCorpus, output, []):
        kind, name = key.split("\t", 1)
        if kind == "w":
            words.append(name)
            word_n.append(value)
            if len(words) >= READ_ROWS:
                word_parts.append(_word_table(words, word_n))
                words, word_n = [], []
                if top is not None:
                    word_parts = [heaviest(pa.concat_tables(word_parts), top)]
            continue
        df.append(len(value))
        for doc, n in value:
            lengths[row_of[doc]] += n
    word_parts.append(_word_table(words, word_n))
    mask = kept.by_df(np.frombuffer(df, dtype=np.int64), int((lengths > 0).sum()))
    del df
    terms: list[str] = []
    rows, cols, data = array("q"), array("q"), array("q")  # 8 bytes per (document, kept term) pair
    term = -1
    for key, value in _output_lines(output):
        kind, name = key.split("\t", 1)
        if kind == "w":
            continue
        term += 1
        if not mask[term] or not kept.by_name(name):
            continue
        for doc, n in value:
            rows.append(row_of[doc])
            cols.append(len(terms))
            data.append(n)
        terms.append(name)
    matrix = sp.coo_matrix((np.frombuffer(data, dtype=np.int64).astype(np.float64),
                            (np.frombuffer(rows, dtype=np.int64), np.frombuffer(cols, dtype=np.int64))),
                           shape=(len(doc_keys), len(terms))).tocsr()
    matrix.sum_duplicates()
    return pa.concat_tables(word_parts), TermCounts(tf=matrix, terms=terms, lengths=lengths)


def _word_table(words: list[str], counts: list[int]) -> pa.Table:
    return pa.table({"word": pa.array(words, pa.string()), "n": pa.array(counts, pa.int64())})


def page_and_host_tables(inputs: JobInputs, popular: PopularTerms, work: Path) -> tuple[pa.Table, pa.Table]:
    """Job 2: ``pages.parquet`` and ``hosts.parquet`` as the in-process engine sorts them."""
    lists = work / "popular.json"
    lists.write_text(json.dumps({"corpus": popular.corpus, "query": popular.query}, ensure_ascii=False),
                     encoding="utf-8")
    schemas = {"page": PAGE_SCHEMA, "host": host_schema()}
    rows: dict[str, list[list[Any]]] = {"page": [], "host": []}
    tables: dict[str, list[pa.Table]] = {"page": [], "host": []}
    for key, value in inputs.run(MRContentPages, work / "pages.jsonl", ["--popular", str(lists)]):
        rows[key].append(value)
        if len(rows[key]) >= READ_ROWS:
            tables[key].append(_table(rows[key], schemas[key]))
            rows[key] = []
    for key, rest in rows.items():
        tables[key].append(_table(rest, schemas[key]))
    pages = pa.concat_tables(tables["page"]).sort_by([("snapshot", "ascending"), ("host", "ascending"),
                                                      ("doc_id", "ascending")])
    hosts = pa.concat_tables(tables["host"]).sort_by([("snapshot", "ascending"), ("host", "ascending")])
    return pages, hosts


def _output_lines(path: Path) -> Iterator[tuple[Any, Any]]:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                key, value = line.rstrip("\n").split("\t", 1)
                yield json.loads(key), json.loads(value)


def _table(rows: list[list[Any]], schema: pa.Schema) -> pa.Table:
    """Rows of values in schema order as a table of ``schema`` (empty when there are none)."""
    columns: list[list[Any]] = [[row[i] for row in rows] for i in range(len(schema))]
    return pa.table([pa.array(c, f.type) for c, f in zip(columns, schema)], schema=schema)
