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

from dataclasses import dataclass

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


@dataclass(frozen=True)
class KeptTerms:
    """The terms worth a column of the documents × terms matrix: those BM25 may use.  Without
    saved statistics, the terms ``eligible`` by document frequency (the vocabulary is chosen
    among them, so dropping the rest changes nothing); with them (incremental scoring), the
    saved vocabulary's terms.  Most terms are rare (Heaps' law): this is what keeps the matrix,
    and the stage's memory, from growing with the whole vocabulary."""

    min_df: float
    max_df: float
    vocabulary: frozenset[str] | None = None

    def by_df(self, df: np.ndarray, n_docs: int) -> np.ndarray:
        """A mask over terms from their document frequencies over the ``n_docs`` nonempty documents."""
        if self.vocabulary is not None:
            return df > 0
        return eligible(df, n_docs, self.min_df, self.max_df)

    def by_name(self, term: str) -> bool:
        return self.vocabulary is None or term in self.vocabulary


@dataclass
class TermCounts:
    """What BM25 needs of the documents × terms counts: the counts of the kept terms only, and
    each document's length over all its terms (``dl`` counts every term, kept or not)."""

    tf: sp.csr_matrix
    """Documents × kept terms, columns in the order of ``terms``."""
    terms: list[str]
    lengths: np.ndarray
    """Per document, its occurrences of all terms (float64)."""
    n_terms: int
    """Distinct terms before pruning."""

    @property
    def present(self) -> np.ndarray:
        """The documents with at least one term (a host absent at a snapshot has none)."""
        return self.lengths > 0

    def id_of(self, term: str) -> int | None:
        return self._column.get(term)

    def __post_init__(self) -> None:
        self._column = {t: i for i, t in enumerate(self.terms)}


class PairCounter:
    """(document, term) occurrences summed over batches, held as one sorted int64 key per
    distinct pair (document << 32 | term) and its count: 16 bytes a pair, merged as batches
    come, instead of every batch's three int64 arrays and then their COO and CSR copies."""

    def __init__(self) -> None:
        self._keys = np.zeros(0, dtype=np.int64)
        self._counts = np.zeros(0, dtype=np.int64)
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []
        self._pending_size = 0

    def add(self, docs: np.ndarray, terms: np.ndarray, counts: np.ndarray) -> None:
        self._pending.append(((docs << _TERM_BITS) | terms, counts))
        self._pending_size += len(docs)
        if self._pending_size > max(len(self._keys), 1 << 20):  # merge when pending doubles the size: n log n
            self._merge()

    def _merge(self) -> None:
        if not self._pending:
            return
        keys = np.concatenate([self._keys, *(k for k, _ in self._pending)])
        counts = np.concatenate([self._counts, *(c for _, c in self._pending)])
        self._pending, self._pending_size = [], 0
        order = np.argsort(keys, kind="stable")
        keys, counts = keys[order], counts[order]
        del order
        first = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        self._keys = keys[first]
        self._counts = np.add.reduceat(counts, first) if len(first) else counts[:0]

    def term_counts(self, n_docs: int, terms: list[str], kept: KeptTerms) -> TermCounts:
        """The documents × terms counts of the kept terms (``terms`` names the term ids)."""
        self._merge()
        docs = self._keys >> _TERM_BITS
        term_ids = self._keys & _TERM_MASK
        lengths = np.bincount(docs, weights=self._counts, minlength=n_docs).astype(np.float64)
        df = np.bincount(term_ids, minlength=len(terms))
        mask = kept.by_df(df, int((lengths > 0).sum()))
        if kept.vocabulary is not None:
            mask &= np.array([kept.by_name(t) for t in terms], dtype=bool)
        column = np.cumsum(mask) - 1
        keep = mask[term_ids]
        rows = docs[keep]
        indptr = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n_docs))))
        # keys are sorted by document, then term, and column ids keep the term order: already CSR
        tf = sp.csr_matrix((self._counts[keep].astype(np.float64), column[term_ids[keep]], indptr),
                           shape=(n_docs, int(mask.sum())))
        kept_names = [terms[i] for i in np.flatnonzero(mask)]
        return TermCounts(tf=tf, terms=kept_names, lengths=lengths, n_terms=len(terms))


_TERM_BITS = 32
_TERM_MASK = (1 << _TERM_BITS) - 1


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
