"""The ``content`` stage: sample pages per host, compute the 24 per-page measures, aggregate
them to the 96 host features, build BM25 host vectors per snapshot and their temporal
features, and save the corpus statistics for incremental scoring."""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import scipy.sparse as sp

from spamflow.detector import Detector, RunSettings, StageContext, StageResult
from spamflow.mr import use_mapreduce
from spamflow.per_host import PerHostTable
from spamflow.progress import progress_bar
from spamflow_content import bm25, temporal
from spamflow_content import mapreduce as mapreduce_jobs
from spamflow_content.batch_words import WORDS_AS_READ, BatchWords, filled_lists
from spamflow_content.corpus import CorpusStats, WordCounter, top_words
from spamflow_content.host_features import host_features
from spamflow_content.key_index import KeyIndex
from spamflow_content.measures import TOP_K, PopularTerms
from spamflow_content.page_batch import (
    BATCH_ROWS,
    MEASURED_COLUMNS,
    MEASURED_SCHEMA,
    measured_pages,
    text_measured_pages,
    with_corpus_measures,
)
from spamflow_content.page_batch import doc_keys as page_doc_keys
from spamflow_content.params import ContentParams
from spamflow_content.sampling import choose_sample, home_rank, in_degrees, normal_url
from spamflow_content.spill import Spill
from spamflow_content.term_counts import Candidates, KeptTerms, PairCounter, TermCounts, TermPairs
from spamflow_content.text import load_query_terms


class ContentDetector(Detector):
    name = "content"
    version = "1"
    description = ("Content features per host (Web Spam Challenge 96-feature layout), BM25 host vectors and "
                   "their temporal change (Erdélyi et al.).")
    Params = ContentParams
    host_tables = (PerHostTable("hosts"),)  # the WSC content features; see docs/content.md
    requires = ("parse",)
    uses_mapreduce = True  # engine: mapreduce, or auto on a cluster runner or over mapreduce_above pages
    frozen_statistics = {"corpus_stats": "corpus_stats"}  # a model scores new hosts against these (section 6.2)

    def run(self, ctx: StageContext) -> StageResult:
        params = ctx.params
        assert isinstance(params, ContentParams)
        pages = ds.dataset(ctx.inputs["parse"]["pages"], format="parquet")
        stats = CorpusStats.load(params.corpus_stats) if params.corpus_stats else None
        counts: Counter[str] = Counter()
        on_mapreduce = use_mapreduce(params.engine, ctx.settings, size=pages.count_rows(), above=params.mapreduce_above)
        return featurise(pages, ctx.outdir, params, stats, counts, progress=ctx.settings.progress,
                         mapreduce=ctx.settings if on_mapreduce else None)


def featurise(pages: ds.Dataset, outdir: Path, params: ContentParams, stats: CorpusStats | None,
              counts: Counter[str], progress: bool | None = False, mapreduce: RunSettings | None = None) -> StageResult:
    """Everything the stage writes, from a page dataset; ``stats`` given means incremental;
    ``mapreduce`` given means the corpus statistics, page measures and host features come from
    the two MapReduce jobs on its runner (``docs/content.md``), with the same results."""
    index = _page_index(pages, params.max_pages, counts, progress)
    hosts = sorted(set(index["host"].to_pylist()))
    snapshots = sorted(set(index["snapshot"].to_pylist()))
    doc_keys = [f"{s}\t{h}" for s in snapshots for h in hosts]
    n_sampled = int(pc.sum(index["sampled"]).as_py() or 0)
    query = load_query_terms(params.query_terms) if stats is None else stats.query_terms

    kept = KeptTerms(params.min_df, params.max_df, None if stats is None else frozenset(stats.vocabulary))
    if mapreduce is None:
        popular, term_counts, page_table, host_table = _in_memory(pages, index, doc_keys, stats, query, kept, outdir,
                                                                  progress)
    else:
        work = outdir / "work"
        inputs = mapreduce_jobs.job_inputs(pages, index, work, mapreduce.runner, mapreduce.runner_args)
        word_counts, term_counts = mapreduce_jobs.corpus_statistics(inputs, doc_keys, work, kept,
                                                                    top=None if stats else max(TOP_K))
        popular = PopularTerms(corpus=top_words(word_counts, max(TOP_K)), query=query) if stats is None else \
            PopularTerms(corpus=stats.corpus_words, query=query)
        page_table, host_table = mapreduce_jobs.page_and_host_tables(inputs, popular, work)
    pq.write_table(page_table, outdir / "pages.parquet")
    pq.write_table(host_table, outdir / "hosts.parquet")

    outputs = {"hosts": "hosts.parquet", "pages": "pages.parquet"}
    new_stats = _write_bm25(term_counts, hosts, snapshots, params, stats, popular, outdir, outputs, counts)
    new_stats.save(outdir / "corpus_stats.json")
    outputs["corpus_stats"] = "corpus_stats.json"
    counts.update(hosts=len(hosts), snapshots=len(snapshots), sampled_pages=n_sampled,
                  host_rows=host_table.num_rows, vocabulary=len(new_stats.vocabulary))
    return StageResult(outputs=outputs, counts=dict(counts))


def _in_memory(pages: ds.Dataset, index: pa.Table, doc_keys: list[str], stats: CorpusStats | None,
               query: list[str], kept: KeptTerms, outdir: Path, progress: bool | None) -> tuple[
                   PopularTerms, TermCounts, pa.Table, pa.Table]:
    """The in-process engine: popular words, the documents × terms counts of the ``kept``
    terms and the page and host tables, streaming the sampled pages in batches.  Without
    saved statistics, two passes: the first reads the pages for the popular words, the
    candidate terms and the measures that need no corpus list, and spills each batch's
    results to disk (``spill.py``, under ``outdir``, removed at the end); the second reads the
    spill back for the corpus measures and the candidates' counts.  With them, one pass."""
    sampled_ids = pa.array(index["doc_id"].filter(index["sampled"]), pa.int64())
    sample_filter = pc.field("doc_id").isin(sampled_ids)
    n_sampled = len(sampled_ids)
    key_index = KeyIndex(pa.array(doc_keys, pa.string()))
    measured: list[pa.Table] = []
    read = _words_as_read(pages)  # for the passes that encode the words
    if stats is None:
        with tempfile.TemporaryDirectory(prefix=".spill-", dir=outdir) as folder:
            spill = Spill(Path(folder))
            popular, candidates = _first_pass(read, pages, sample_filter, n_sampled, key_index, query, kept, spill,
                                              progress)
            pairs = PairCounter(candidates, len(doc_keys))
            del candidates
            for part in spill.read():
                words = BatchWords.from_ids(part["words"].column("ids"), part["distinct"].column("word"))
                measured.append(with_corpus_measures(part["pages"], words, popular.corpus))
                docs, terms, n = (np.asarray(part["pairs"].column(c), dtype=np.int64) for c in ("doc", "term", "n"))
                pairs.add_pairs(TermPairs(docs, terms, n, part["terms"].column("term")))
    else:
        popular = PopularTerms(corpus=stats.corpus_words, query=query)
        pairs = PairCounter(sorted(kept.vocabulary or ()), len(doc_keys))
        for table in _batches(read, list(MEASURED_COLUMNS), sample_filter, n_sampled, "content: measures",
                              progress):
            encoded = BatchWords(table["words"])  # for the measures and the terms
            measured.append(measured_pages(table, popular, encoded))
            doc = key_index.positions(page_doc_keys(table))
            pairs.add(*bm25.term_occurrences(encoded, doc))
    term_counts = pairs.term_counts(kept)  # before the page table: their peaks need not add up
    del pairs
    flags = pa.table({"doc_id": index["doc_id"], "is_home": index["is_home"], "is_max_linked": index["is_max_linked"]})
    page_table = _concat(measured, MEASURED_SCHEMA).join(flags, "doc_id", join_type="left outer")
    page_table = page_table.sort_by([("snapshot", "ascending"), ("host", "ascending"), ("doc_id", "ascending")])
    page_counts = index.group_by(["snapshot", "host"]).aggregate([("doc_id", "count")]).rename_columns(
        ["snapshot", "host", "pages"])
    host_table = host_features(page_table, page_counts)
    return popular, term_counts, page_table, host_table


def _first_pass(read: ds.Dataset, pages: ds.Dataset, sample_filter: pc.Expression, n_sampled: int,
                key_index: KeyIndex, query: list[str], kept: KeptTerms, spill: Spill, progress: bool | None) -> tuple[
                    PopularTerms, list[str]]:
    """The popular words and the candidate terms (``term_counts.Candidates``), each batch of
    ``read`` (the pages, words as read: ``_words_as_read``) encoded and stemmed once: its
    measures but the corpus ones, its non-stop word ids and its (document, term) pairs go to
    ``spill`` for the second pass.  A recount, if the word counter needs one, reads ``pages``."""
    words = WordCounter()
    candidates = Candidates(kept.min_df, len(key_index), n_sampled)
    for table in _batches(read, list(MEASURED_COLUMNS), sample_filter, n_sampled, "content: words and measures",
                          progress):
        encoded = BatchWords(table["words"])  # one lookup per distinct word for the counts, measures and terms
        words.add(encoded)
        pairs = TermPairs.of(*bm25.term_occurrences(encoded, key_index.positions(page_doc_keys(table))))
        candidates.add_pairs(table.num_rows, pairs)
        measured = text_measured_pages(table, encoded, query)
        # each kind its own stream: an array read back keeps its whole record batch alive, and the
        # page rows are kept to the end, the word ids (~2 KB a page) only for their batch
        spill.write(pages=measured, words=pa.table({"ids": encoded.content_ids()}),
                    distinct=pa.table({"word": encoded.distinct}),
                    pairs=pa.table({"doc": pairs.docs.astype(np.int32), "term": pairs.terms.astype(np.int32),
                                    "n": pairs.counts.astype(np.int32)}),
                    terms=pa.table({"term": pairs.names}))

    def words_again():  # only when the corpus outgrew the counter (corpus.WORD_CAPACITY words)
        for batch in _batches(pages, ["words"], sample_filter, n_sampled, "content: corpus words, recount", progress):
            yield pc.list_flatten(filled_lists(batch.column("words")))

    return PopularTerms(corpus=words.top(max(TOP_K), again=words_again), query=query), candidates.names()


def _write_bm25(term_counts: TermCounts, hosts: list[str], snapshots: list[str],
                params: ContentParams, stats: CorpusStats | None, popular: PopularTerms, outdir: Path,
                outputs: dict[str, str], counts: Counter[str]) -> CorpusStats:
    """BM25 matrices per snapshot and the temporal features; returns the corpus statistics."""
    n_hosts = len(hosts)
    tf, dl, present = term_counts.tf, term_counts.lengths, term_counts.present
    if stats is None:
        vocabulary = bm25.choose_vocabulary(tf[present], term_counts.terms, params.vocabulary_size, params.min_df,
                                            params.max_df)
    else:
        vocabulary = stats.vocabulary
    known = [term_counts.id_of(t) for t in vocabulary]
    columns = np.array([-1 if i is None else i for i in known], dtype=np.int64)
    select = sp.csr_matrix((np.ones(int((columns >= 0).sum())),
                            (columns[columns >= 0], np.flatnonzero(columns >= 0))),
                           shape=(tf.shape[1], len(vocabulary)))
    tf_vocab = sp.csr_matrix(tf @ select)
    folder = outdir / "bm25"
    folder.mkdir(exist_ok=True)
    (folder / "hosts.txt").write_text("".join(h + "\n" for h in hosts), encoding="utf-8")
    (folder / "vocabulary.txt").write_text("".join(t + "\n" for t in vocabulary), encoding="utf-8")
    outputs.update(bm25_hosts="bm25/hosts.txt", bm25_vocabulary="bm25/vocabulary.txt")
    idf_of: dict[str, list[float]] = {}
    avdl_of: dict[str, float] = {}
    vectors = []
    for t, snapshot in enumerate(snapshots):
        rows = slice(t * n_hosts, (t + 1) * n_hosts)
        block, lengths, here = tf_vocab[rows], dl[rows], present[rows]
        if stats is None:
            df = np.diff(sp.csc_matrix(block).indptr)
            idf = bm25.rsj_idf(df, n_hosts)
            avdl = float(lengths[here].mean()) if here.any() else 0.0
        else:
            idf, avdl = np.array(stats.idf[stats.latest()]), stats.avdl[stats.latest()]
        idf_of[snapshot], avdl_of[snapshot] = [float(x) for x in idf], avdl
        weights = bm25.bm25_matrix(block, lengths, idf, avdl, params.k1, params.b)
        # uncompressed: DEFLATE of the float weights took ~8 % of the stage's CPU to save a third of the bytes
        sp.save_npz(folder / f"{snapshot}.npz", weights, compressed=False)
        outputs[f"bm25_{snapshot}"] = f"bm25/{snapshot}.npz"
        counts[f"bm25_nonzeros_{snapshot}"] = int(weights.nnz)
        vectors.append(weights)
    features = {"ave": lambda v: temporal.ave(v), "ave_diff": temporal.ave_diff, "dev": temporal.dev,
                "dev_diff": temporal.dev_diff,
                "decay": lambda v: temporal.decay(v, params.decay_lambda, params.decay_weight)}
    (outdir / "temporal").mkdir(exist_ok=True)
    for name in temporal.available(len(vectors)):
        sp.save_npz(outdir / "temporal" / f"{name}.npz", features[name](vectors), compressed=False)
        outputs[f"temporal_{name}"] = f"temporal/{name}.npz"
    counts["temporal_features"] = len(temporal.available(len(vectors)))
    return CorpusStats(corpus_words=popular.corpus, query_terms=popular.query, vocabulary=vocabulary, idf=idf_of,
                       avdl=avdl_of, n_hosts=n_hosts, k1=params.k1, b=params.b)


def _page_index(pages: ds.Dataset, max_pages: int, counts: Counter[str], progress: bool | None) -> pa.Table:
    """One row per page with a host: doc_id, snapshot, host, url and the sampling flags."""
    table = pages.to_table(columns=["doc_id", "snapshot", "host", "url"])
    counts["pages"] = table.num_rows
    no_host = pc.equal(table["host"], "")
    counts["skipped_no_host"] = int(pc.sum(no_host).as_py() or 0)
    table = table.filter(pc.invert(no_host))
    urls = table["url"].to_pylist()
    snapshots = table["snapshot"].to_pylist()
    keys = pa.array([f"{s}\t{normal_url(u)}" for s, u in zip(snapshots, urls)], pa.string())
    doc_ids = np.asarray(table["doc_id"], dtype=np.int64)
    position = KeyIndex(pa.array(doc_ids, pa.int64()))
    page_index = KeyIndex(keys)
    degree = np.zeros(len(keys), dtype=np.int64)
    total = 0
    pending: list[tuple[pa.Array, np.ndarray]] = []  # links gathered until as many as the pages: then
    held = 0  # KeyIndex looks them up in Arrow, not one by one in Python (~1 s at 10^5 pages)
    for batch in _batches(pages, ["doc_id", "snapshot", "links"], None, counts["pages"], "content: links", progress):
        links = filled_lists(batch.column("links"))
        parent = np.asarray(pc.list_parent_indices(links), dtype=np.int64)
        source = position.positions(batch.column("doc_id"))
        targets = pc.struct_field(pc.list_flatten(links), "url").fill_null("")
        link_keys = pc.binary_join_element_wise(batch.column("snapshot").take(pa.array(parent)), targets, "\t")
        pending.append((link_keys.combine_chunks() if isinstance(link_keys, pa.ChunkedArray) else link_keys,
                        source[parent]))
        held += len(link_keys)
        total += len(link_keys)
        if held >= len(page_index):
            degree += in_degrees(page_index, [_joined(pending)])
            pending, held = [], 0
    if pending:
        degree += in_degrees(page_index, [_joined(pending)])
    group_keys = pc.binary_join_element_wise(table["snapshot"], table["host"], "\t").combine_chunks()
    groups = np.asarray(pc.dictionary_encode(group_keys).indices, dtype=np.int64)
    home = np.array([home_rank(u) for u in urls], dtype=np.int64) * 100_000 + np.minimum(
        np.asarray(pc.utf8_length(table["url"]), dtype=np.int64), 99_999)
    sampled, is_home, is_max = choose_sample(groups, home, degree, doc_ids, max_pages)
    counts["links"] = total
    return table.append_column("sampled", pa.array(sampled)).append_column(
        "is_home", pa.array(is_home)).append_column("is_max_linked", pa.array(is_max))


def _joined(links: list[tuple[pa.Array, np.ndarray]]) -> tuple[pa.Array, np.ndarray]:
    """Batches of (link keys, linking page) as one."""
    return pa.concat_arrays([k for k, _ in links]), np.concatenate([s for _, s in links])


def _words_as_read(pages: ds.Dataset) -> ds.Dataset:
    """``pages`` with their words read dictionary-encoded (``batch_words.WORDS_AS_READ``: the
    encoding each batch needs, mostly from the files' own dictionaries), when they are Parquet
    files with a ``words`` list of strings; else ``pages`` as they are."""
    if not isinstance(pages, ds.FileSystemDataset) or not isinstance(pages.format, ds.ParquetFileFormat):
        return pages
    at = pages.schema.get_field_index("words")
    field = pages.schema.field(at) if at >= 0 else None
    if field is None or not pa.types.is_list(field.type) or not pa.types.is_string(field.type.value_type):
        return pages
    words = field.with_type(pa.list_(field.type.value_field.with_type(pa.dictionary(pa.int32(), pa.string()))))
    options = ds.ParquetReadOptions(dictionary_columns={WORDS_AS_READ})
    return ds.dataset(pages.files, schema=pages.schema.set(at, words), filesystem=pages.filesystem,
                      format=ds.ParquetFileFormat(read_options=options))


def _batches(pages: ds.Dataset, columns: list[str], filter_: pc.Expression | None, total: int, desc: str,
             progress: bool | None) -> Iterator[pa.Table]:
    """The pages as tables of at least ``BATCH_ROWS`` rows (the last may have fewer).  A
    dataset's batches end at its Parquet row groups (512 rows in the parse stage's parts):
    the work per batch that does not grow with its rows (stemming and counting a batch's
    distinct words, most of which recur on the next pages) was paid four times as often."""
    bar = progress_bar(total=total, unit="page", desc=desc, setting=progress, leave=False)
    pending: list[pa.RecordBatch] = []
    rows = 0
    try:
        for batch in pages.to_batches(columns=columns, filter=filter_, batch_size=BATCH_ROWS, batch_readahead=2,
                                      fragment_readahead=1):
            if batch.num_rows:
                pending.append(batch)
                rows += batch.num_rows
            if rows >= BATCH_ROWS:
                yield pa.Table.from_batches(pending)
                bar.update(rows)
                pending, rows = [], 0
        if rows:
            yield pa.Table.from_batches(pending)
            bar.update(rows)
    finally:
        bar.close()


def _concat(tables: list[pa.Table], schema: pa.Schema) -> pa.Table:
    """The tables as one; an empty table of ``schema`` when there are none (no pages)."""
    return pa.concat_tables(tables) if tables else schema.empty_table()
