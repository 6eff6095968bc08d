"""The documents × terms counts BM25 needs, without the terms it cannot use.

BM25's vocabulary is chosen among the terms found in at least ``min_df`` of the virtual
documents, and most terms of a crawl are rare (Heaps' law: at 10^5 scale_web pages, 2.1M
distinct terms, a few thousand of them eligible).  So the in-process engine never indexes the
whole vocabulary: a first pass finds the *candidates*, a superset of the eligible terms, with
memory bounded by a chunk of pages; the second counts (document, candidate) pairs only; the
matrix keeps the candidates that are eligible.  Why the candidates are a superset: if the
pages are cut into at most ``m`` chunks and a term is in ``df`` documents, the chunks' own
document frequencies add up to at least ``df`` (a document split over chunks counts in each),
so some chunk has at least ``df / m``; a term below ``min_df * present / m`` in every chunk
(``present``: nonempty documents seen so far, at most the final number) cannot be eligible.
The same sums bound a term's document frequency from above for the whole corpus, and a
:class:`~spamflow_content.count_summary.CountSummary` of them keeps, in bounded memory, every
term whose sum can reach ``min_df * present``: the candidates are the terms that pass both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from spamflow_content.batch_words import counted_sorted, unique_sorted
from spamflow_content.bm25 import eligible
from spamflow_content.count_summary import CountSummary
from spamflow_content.key_index import KeyIndex

CHUNK_PAGES = 8_192
"""Pages per chunk of the candidate pass: its (document, term) pairs are what it holds."""

MERGE_PAIRS = 1 << 20
"""Pending pairs that start a merge in ``PairCounter``, at least (or a quarter of those held)."""

TERM_CAPACITY = 1 << 20
"""Terms whose summed chunk frequencies the candidate pass keeps (~1M).  Its error is at most
the sum of all chunk frequencies / (capacity + 1); it must stay below ``min_df`` × documents
(2,000 at 10^6 scale_web pages) for the summary to narrow the candidates."""


@dataclass(frozen=True)
class KeptTerms:
    """The terms worth a column: without saved statistics, those ``eligible`` by document
    frequency (the vocabulary is chosen among them, so dropping the rest changes nothing);
    with them (incremental scoring), the saved vocabulary's terms, whatever their frequency."""

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
    """Documents × kept terms counts, and each document's length over *all* its terms (BM25's
    ``dl`` counts every term, kept or not)."""

    tf: sp.csr_matrix
    """Documents × kept terms, columns in the order of ``terms``."""
    terms: list[str]
    lengths: np.ndarray
    """Per document, its occurrences of all terms (float64)."""
    _column: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._column = {t: i for i, t in enumerate(self.terms)}

    @property
    def present(self) -> np.ndarray:
        """The documents with at least one term (a host absent at a snapshot has none)."""
        return self.lengths > 0

    def id_of(self, term: str) -> int | None:
        return self._column.get(term)


@dataclass(frozen=True)
class TermPairs:
    """One batch's distinct (document, term) pairs and their occurrences, sorted by document
    then term; terms numbered among ``names``, the batch's own (``bm25.term_occurrences``).
    Both passes count from these, so the second can read them from disk instead of stemming
    the batch again."""

    docs: np.ndarray
    terms: np.ndarray
    counts: np.ndarray
    names: pa.Array

    @classmethod
    def of(cls, docs: np.ndarray, terms: np.ndarray, names: pa.Array) -> TermPairs:
        """From the occurrences ``bm25.term_occurrences`` gives."""
        width = np.int64(max(len(names), 1))
        keys, counts = counted_sorted(docs * width + terms)
        return cls(keys // width, keys % width, counts, names)

    def lengths(self, n_docs: int) -> np.ndarray:
        """Per document, its occurrences in the batch (float64)."""
        return np.bincount(self.docs, weights=self.counts.astype(np.float64), minlength=n_docs)


class Candidates:
    """First pass: the terms that may be eligible (see the module's docstring), from each
    batch's distinct (document, term) pairs, holding one chunk of pages' pairs at a time."""

    def __init__(self, min_df: float, n_docs: int, total_pages: int, capacity: int | None = TERM_CAPACITY) -> None:
        self.min_df = min_df
        self._df_sums = CountSummary(capacity)
        """Per term, its chunks' document frequencies summed: at least its corpus frequency."""
        self.max_chunks = total_pages // CHUNK_PAGES + 1  # a chunk closes at CHUNK_PAGES pages or more
        self.lengths = np.zeros(n_docs, dtype=np.float64)
        self.terms: set[str] = set()
        self._chunk: list[TermPairs] = []
        self._pages = 0

    def add(self, n_pages: int, docs: np.ndarray, terms: np.ndarray, names: pa.Array) -> None:
        """One batch of ``n_pages`` pages, as ``bm25.term_occurrences`` gives it."""
        self.add_pairs(n_pages, TermPairs.of(docs, terms, names))

    def add_pairs(self, n_pages: int, pairs: TermPairs) -> None:
        """One batch of ``n_pages`` pages, as its distinct pairs."""
        self.lengths += pairs.lengths(len(self.lengths))
        self._chunk.append(pairs)
        self._pages += n_pages
        if self._pages >= CHUNK_PAGES:
            self._close()

    def _close(self) -> None:
        if not self._chunk:
            return
        chunk, self._chunk, self._pages = self._chunk, [], 0
        # each batch's terms encoded once among the chunk's (not each of its pairs' terms)
        terms = pc.dictionary_encode(pa.concat_arrays([p.names for p in chunk]))
        ids = np.asarray(terms.indices, dtype=np.int64)
        width = np.int64(max(len(terms.dictionary), 1))
        starts = np.cumsum([0] + [len(p.names) for p in chunk])
        keys = [p.docs * width + ids[start:start + len(p.names)][p.terms] for p, start in zip(chunk, starts)]
        pairs = unique_sorted(np.concatenate(keys))  # a document split over batches counts once
        df = np.bincount(pairs % width, minlength=len(terms.dictionary))
        floor = self.min_df * int((self.lengths > 0).sum()) / self.max_chunks
        self.terms.update(terms.dictionary.filter(pa.array(df >= floor)).to_pylist())
        self._df_sums.add(terms.dictionary, df)

    def names(self) -> list[str]:
        """The candidates, sorted (the column order of the pass that counts them): the terms
        found often enough in some chunk whose summed chunk frequencies can reach ``min_df``
        of the nonempty documents.  The sums' summary tells when it cannot vouch for a term
        (its ``error`` reaches that threshold: ``min_df: 0``, or a summary too small for the
        corpus); the chunk rule alone decides then."""
        self._close()
        threshold = self.min_df * int((self.lengths > 0).sum())
        if self._df_sums.error >= threshold:
            return sorted(self.terms)
        sums = self._df_sums.counts()
        reach = np.asarray(sums["n"], dtype=np.int64) + self._df_sums.error >= threshold
        heavy = set(sums["key"].filter(pa.array(reach)).to_pylist())
        return sorted(t for t in self.terms if t in heavy)


class PairCounter:
    """Second pass: (document, term) occurrences of the given terms summed over batches, held
    as one sorted int64 key per distinct pair (document << 32 | term) and its count: 16 bytes a
    pair, merged as batches come (:meth:`_merge`)."""

    def __init__(self, terms: list[str], n_docs: int) -> None:
        self.terms = terms
        self._index = KeyIndex(pa.array(terms, pa.string()))
        """Built once: ``pc.index_in`` would hash every candidate term again for each batch,
        a cost of batches × candidates, which grows with the square of the corpus (0.40 s a
        batch against 0.04 with an index, for 2M candidates; py-spy found the stage there at
        10^6 scale_web pages)."""
        self.lengths = np.zeros(n_docs, dtype=np.float64)
        self._keys = np.zeros(0, dtype=np.int64)
        self._counts = np.zeros(0, dtype=np.int64)
        self._pending: list[tuple[np.ndarray, np.ndarray]] = []
        self._pending_size = 0

    def add(self, docs: np.ndarray, terms: np.ndarray, names: pa.Array) -> None:
        """One batch's occurrences, as ``bm25.term_occurrences`` gives them; other terms are
        left out but count in their document's length."""
        self.add_pairs(TermPairs.of(docs, terms, names))

    def add_pairs(self, pairs: TermPairs) -> None:
        """One batch's distinct pairs (``TermPairs``): those of other terms are left out but
        count in their document's length."""
        self.lengths += pairs.lengths(len(self.lengths))
        ours = self._index.positions(pairs.names)[pairs.terms]
        keep = ours >= 0
        keys = (pairs.docs[keep] << _TERM_BITS) | ours[keep]  # distinct: distinct terms have distinct columns
        self._pending.append((keys, pairs.counts[keep]))
        self._pending_size += len(keys)
        if self._pending_size > max(len(self._keys) // 4, MERGE_PAIRS):  # each merge grows the keys by <= 1/4: linear
            self._merge()

    def _merge(self) -> None:
        """Fold the pending batches into the sorted keys: the pending pairs are summed among
        themselves (sorting only them), then added in place where a key is already held and
        inserted where not (one new array each for keys and counts).  With pending pairs at most
        a quarter of those held, a merge holds ~3 copies of the keys and counts, where sorting
        everything again held ~12 (at 10^6 scale_web pages memray found that final sort at the
        stage's high-water mark: 2.2 of 3.8 GB)."""
        if not self._pending:
            return
        keys = np.concatenate([k for k, _ in self._pending])
        counts = np.concatenate([c for _, c in self._pending])
        self._pending, self._pending_size = [], 0
        order = np.argsort(keys, kind="stable")
        keys, counts = keys[order], counts[order]
        del order
        first = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1]))) if len(keys) else keys[:0]
        keys, counts = keys[first], (np.add.reduceat(counts, first) if len(first) else counts[:0])
        at = np.searchsorted(self._keys, keys)
        held = at < len(self._keys)
        held[held] = self._keys[at[held]] == keys[held]
        self._counts[at[held]] += counts[held]  # the pending keys are unique: each position once
        new = ~held
        self._keys = np.insert(self._keys, at[new], keys[new])
        self._counts = np.insert(self._counts, at[new], counts[new])

    def term_counts(self, kept: KeptTerms) -> TermCounts:
        """The documents × terms counts of the kept terms."""
        self._merge()
        n_docs = len(self.lengths)
        docs = self._keys >> _TERM_BITS
        term_ids = self._keys & _TERM_MASK
        df = np.bincount(term_ids, minlength=len(self.terms))
        mask = kept.by_df(df, int((self.lengths > 0).sum()))
        if kept.vocabulary is not None:
            mask &= np.array([kept.by_name(t) for t in self.terms], dtype=bool)
        column = np.cumsum(mask) - 1
        keep = mask[term_ids]
        indptr = np.concatenate(([0], np.cumsum(np.bincount(docs[keep], minlength=n_docs))))
        # keys are sorted by document, then term, and columns keep the term order: already CSR
        tf = sp.csr_matrix((self._counts[keep].astype(np.float64), column[term_ids[keep]], indptr),
                           shape=(n_docs, int(mask.sum())))
        return TermCounts(tf=tf, terms=[self.terms[i] for i in np.flatnonzero(mask)], lengths=self.lengths)


_TERM_BITS = 32
_TERM_MASK = (1 << _TERM_BITS) - 1
