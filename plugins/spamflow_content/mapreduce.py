"""The content stage's MapReduce engine, driver side: write the jobs' inputs under ``work/``,
run job 1 (corpus statistics) and job 2 (page measures and host features) through
``spamflow.mr.run_job``, and read their outputs back into the tables and matrix the
in-process engine builds, so everything after them is the same code."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import scipy.sparse as sp

from spamflow.mr import run_job
from spamflow.mr.driver import package_zip
from spamflow_content import bm25
from spamflow_content.host_features import host_schema
from spamflow_content.measures import PopularTerms
from spamflow_content.mr_content_corpus import MRContentCorpus
from spamflow_content.mr_content_pages import MRContentPages
from spamflow_content.page_batch import PAGE_SCHEMA


@dataclass(frozen=True)
class JobInputs:
    """The files both jobs read: the part list (one Parquet path per line) and the sample."""

    parts: Path
    sample: Path
    runner: str
    runner_args: tuple[str, ...]

    def run(self, job: type, output: Path, args: list[str]) -> list[tuple[Any, Any]]:
        """Run ``job`` over the parts and return its output lines as (key, value)."""
        extra = self.runner_args
        if self.runner != "inline":  # the word rule, spamflow.words, is the one module of spamflow the jobs use
            extra = (*extra, "--py-files", str(package_zip("spamflow")))
        run_job(job, [self.parts], output, runner=self.runner, args=["--sample", str(self.sample), *args],
                runner_args=extra)
        with open(output, encoding="utf-8") as fh:
            return [tuple(json.loads(field) for field in line.rstrip("\n").split("\t", 1))
                    for line in fh if line.strip()]


def job_inputs(pages: ds.Dataset, index: pa.Table, work: Path, runner: str,
               runner_args: tuple[str, ...]) -> JobInputs:
    """Write ``work/parts.txt`` (the page table's parts) and ``work/sample.parquet`` (the
    sampled pages and their flags, from the in-process sampling index)."""
    work.mkdir(parents=True, exist_ok=True)
    parts = work / "parts.txt"
    local = [str(Path(f).resolve()) if "://" not in f else f for f in pages.files]
    parts.write_text("".join(f + "\n" for f in sorted(local)), encoding="utf-8")
    sample = work / "sample.parquet"
    pq.write_table(index.filter(index["sampled"]).select(["doc_id", "is_home", "is_max_linked"]), sample)
    return JobInputs(parts, sample, runner, runner_args)


def corpus_statistics(inputs: JobInputs, doc_keys: list[str], work: Path) -> tuple[pa.Table, sp.csr_matrix,
                                                                                     bm25.TermIndex]:
    """Job 1: the corpus word counts (``word``, ``n``) and the virtual documents × terms count
    matrix, rows in ``doc_keys`` order, terms sorted."""
    words: dict[str, int] = {}
    postings: dict[str, list[list[Any]]] = {}
    for key, value in inputs.run(MRContentCorpus, work / "corpus.jsonl", []):
        kind, name = key.split("\t", 1)
        if kind == "w":
            words[name] = value
        else:
            postings[name] = value
    counts = pa.table({"word": pa.array(list(words), pa.string()), "n": pa.array(list(words.values()), pa.int64())})
    terms = sorted(postings)
    row_of = {key: i for i, key in enumerate(doc_keys)}
    rows, cols, data = [], [], []
    for col, term in enumerate(terms):
        for doc, n in postings[term]:
            rows.append(row_of[doc])
            cols.append(col)
            data.append(n)
    matrix = sp.coo_matrix((np.array(data, dtype=np.float64), (np.array(rows, dtype=np.int64),
                                                                np.array(cols, dtype=np.int64))),
                           shape=(len(doc_keys), len(terms))).tocsr()
    matrix.sum_duplicates()
    return counts, matrix, bm25.TermIndex.of_terms(terms)


def page_and_host_tables(inputs: JobInputs, popular: PopularTerms, work: Path) -> tuple[pa.Table, pa.Table]:
    """Job 2: ``pages.parquet`` and ``hosts.parquet`` as the in-process engine sorts them."""
    lists = work / "popular.json"
    lists.write_text(json.dumps({"corpus": popular.corpus, "query": popular.query}, ensure_ascii=False),
                     encoding="utf-8")
    rows: dict[str, list[list[Any]]] = {"page": [], "host": []}
    for key, value in inputs.run(MRContentPages, work / "pages.jsonl", ["--popular", str(lists)]):
        rows[key].append(value)
    pages = _table(rows["page"], PAGE_SCHEMA).sort_by([("snapshot", "ascending"), ("host", "ascending"),
                                                       ("doc_id", "ascending")])
    hosts = _table(rows["host"], host_schema()).sort_by([("snapshot", "ascending"), ("host", "ascending")])
    return pages, hosts


def _table(rows: list[list[Any]], schema: pa.Schema) -> pa.Table:
    """Rows of values in schema order as a table of ``schema`` (empty when there are none)."""
    columns: list[list[Any]] = [[row[i] for row in rows] for i in range(len(schema))]
    return pa.table([pa.array(c, f.type) for c, f in zip(columns, schema)], schema=schema)

