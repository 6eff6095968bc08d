"""BM25 term vectors of hosts (Erdélyi et al., section 3.2).

A host's sampled pages at one snapshot form one virtual document: the bag of their words,
stop words removed, Porter-stemmed.  The vocabulary is the ``size`` terms of highest
collection frequency among those in at least ``min_df`` and at most ``max_df`` of the
virtual documents.  The weight of term i in document d at snapshot T is

    t = IDF_i * (k1 + 1) tf / (K + tf),   K = k1 ((1 - b) + b dl / avdl),
    IDF_i = log((N - n_i + 0.5) / (n_i + 0.5))

with dl the document's length (its terms after stop-word removal), avdl the mean length of
the documents of snapshot T, n_i the documents of T that contain i, and N the number of hosts
over all snapshots (the paper keeps N fixed across T; a host absent at T is all zeros).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from spamflow_content.batch_words import BatchWords
from spamflow_content.text import stem_words


def term_occurrences(words: BatchWords | pa.Array | pa.ChunkedArray,
                     doc_of_page: np.ndarray) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """The stemmed terms of one batch of pages (its ``words`` column, or already encoded), stop
    words removed: per occurrence its document and its term (an index into the returned names,
    this batch's distinct terms in first-occurrence order).  Words are stemmed once per batch
    and nothing is kept between batches: a corpus-wide word or term index would grow with the
    whole vocabulary, most of it rare terms BM25 never uses."""
    if not isinstance(words, BatchWords):
        words = BatchWords(words)
    keep = ~words.stop[words.ids]
    docs = doc_of_page[words.parent[keep]]
    if len(docs) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), pa.array([], pa.string())
    content = ~words.stop
    stems = pc.dictionary_encode(pa.array(stem_words(words.distinct.filter(pa.array(content)).to_pylist()),
                                          pa.string()))
    term_of_word = np.full(len(content), -1, dtype=np.int64)
    term_of_word[content] = np.asarray(stems.indices, dtype=np.int64)
    return docs, term_of_word[words.ids[keep]], stems.dictionary


def count_terms(lists: BatchWords | pa.Array | pa.ChunkedArray,
                doc_of_page: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, pa.Array]:
    """(doc, term, count) triples of one batch of pages, one per distinct (doc, term), terms
    numbered in the returned names (``term_occurrences``)."""
    docs, terms, names = term_occurrences(lists, doc_of_page)
    return (*distinct_pairs(docs, terms, max(len(names), 1)), names)


def distinct_pairs(docs: np.ndarray, terms: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(doc, term, count) for each distinct (doc, term) of the occurrences, terms below ``width``."""
    keys, counts = np.unique(docs * np.int64(width) + terms, return_counts=True)
    return keys // width, keys % width, counts.astype(np.int64)


def eligible(df: np.ndarray, n_docs: int, min_df: float, max_df: float) -> np.ndarray:
    """Which terms (document frequencies ``df`` over ``n_docs`` documents) the vocabulary may
    take: in at least ``min_df`` and at most ``max_df`` of the documents."""
    return (df >= min_df * n_docs) & (df <= max_df * n_docs) & (df > 0)


def choose_vocabulary(tf: sp.csr_matrix, terms: list[str], size: int, min_df: float, max_df: float) -> list[str]:
    """The ``size`` most frequent terms (by total occurrences; ties by term) found in at least
    ``min_df`` and at most ``max_df`` of the documents (rows of ``tf``)."""
    n_docs = tf.shape[0]
    df = np.diff(tf.tocsc().indptr)
    cf = np.asarray(tf.sum(axis=0)).ravel()
    chosen = np.flatnonzero(eligible(df, n_docs, min_df, max_df))
    names = np.array(terms, dtype=object)[chosen]
    order = np.lexsort((names.astype(str), -cf[chosen]))
    return [str(t) for t in names[order[:size]]]


def rsj_idf(df: np.ndarray, n_hosts: int) -> np.ndarray:
    """Robertson-Spärck Jones IDF, log((N - n + 0.5) / (n + 0.5)); negative for terms in more
    than half of the documents, as the formula gives."""
    return np.log((n_hosts - df + 0.5) / (df + 0.5))


def bm25_matrix(tf: sp.csr_matrix, dl: np.ndarray, idf: np.ndarray, avdl: float, k1: float, b: float) -> sp.csr_matrix:
    """BM25 weights of a docs × vocabulary term-count matrix (``dl`` per row, ``idf`` per column)."""
    tf = sp.csr_matrix(tf, dtype=np.float64, copy=True)
    tf.eliminate_zeros()
    rows = np.repeat(np.arange(tf.shape[0]), np.diff(tf.indptr))
    norm = np.ones_like(dl, dtype=np.float64) if avdl <= 0 else dl / avdl
    big_k = k1 * ((1.0 - b) + b * norm[rows])
    counts = tf.data
    tf.data = idf[tf.indices] * (k1 + 1.0) * counts / (big_k + counts)
    return tf
