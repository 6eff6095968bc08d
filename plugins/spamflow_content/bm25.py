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

from spamflow_content.text import STOP_WORDS, stem_words

_STOP = pa.array(sorted(STOP_WORDS), pa.string())


class TermIndex:
    """Stemmed terms and their ids, grown batch by batch (a word is stemmed once)."""

    def __init__(self) -> None:
        self.terms: list[str] = []
        self._term_id: dict[str, int] = {}
        self._word_term: dict[str, int] = {}

    def ids_of_words(self, distinct_words: list[str]) -> np.ndarray:
        new = [w for w in distinct_words if w not in self._word_term]
        for word, stem in zip(new, stem_words(new)):
            term = self._term_id.get(stem)
            if term is None:
                term = self._term_id[stem] = len(self.terms)
                self.terms.append(stem)
            self._word_term[word] = term
        return np.fromiter((self._word_term[w] for w in distinct_words), dtype=np.int64, count=len(distinct_words))

    @classmethod
    def of_terms(cls, terms: list[str]) -> TermIndex:
        """An index of terms already stemmed and counted elsewhere (the MapReduce corpus job)."""
        index = cls()
        index.terms = list(terms)
        index._term_id = {t: i for i, t in enumerate(index.terms)}
        return index

    def id_of(self, term: str) -> int | None:
        return self._term_id.get(term)


def count_terms(lists: pa.ListArray, doc_of_page: np.ndarray, index: TermIndex) -> tuple[np.ndarray, ...]:
    """(doc, term, count) triples of one batch of pages, one per distinct (doc, term)."""
    flat = pc.list_flatten(lists)
    parent = np.asarray(pc.list_parent_indices(lists), dtype=np.int64)
    keep = pc.invert(pc.is_in(flat, value_set=_STOP))
    flat = flat.filter(keep)
    docs = doc_of_page[parent[np.asarray(keep, dtype=bool)]]
    if len(flat) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    encoded = pc.dictionary_encode(flat)
    term_of_word = index.ids_of_words(encoded.dictionary.to_pylist())
    terms = term_of_word[np.asarray(encoded.indices, dtype=np.int64)]
    width = np.int64(max(len(index.terms), 1))
    keys, counts = np.unique(docs * width + terms, return_counts=True)
    return keys // width, keys % width, counts.astype(np.int64)


def doc_term_matrix(pieces: list[tuple[np.ndarray, ...]], n_docs: int, n_terms: int) -> sp.csr_matrix:
    """Sum the (doc, term, count) triples of all batches into one docs × terms matrix."""
    if not pieces:
        return sp.csr_matrix((n_docs, n_terms), dtype=np.float64)
    rows = np.concatenate([p[0] for p in pieces])
    cols = np.concatenate([p[1] for p in pieces])
    data = np.concatenate([p[2] for p in pieces]).astype(np.float64)
    matrix = sp.coo_matrix((data, (rows, cols)), shape=(n_docs, n_terms)).tocsr()
    matrix.sum_duplicates()
    return matrix


def choose_vocabulary(tf: sp.csr_matrix, terms: list[str], size: int, min_df: float, max_df: float) -> list[str]:
    """The ``size`` most frequent terms (by total occurrences; ties by term) found in at least
    ``min_df`` and at most ``max_df`` of the documents (rows of ``tf``)."""
    n_docs = tf.shape[0]
    df = np.diff(tf.tocsc().indptr)
    cf = np.asarray(tf.sum(axis=0)).ravel()
    eligible = np.flatnonzero((df >= min_df * n_docs) & (df <= max_df * n_docs) & (df > 0))
    names = np.array(terms, dtype=object)[eligible]
    order = np.lexsort((names.astype(str), -cf[eligible]))
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
