"""Corpus statistics: what the content features need from the whole corpus, saved with a run
so that new hosts can be featurised against them without recomputing the corpus
(Erdélyi et al., section 6.2: document frequencies and the popular-word lists are the only
global content information, and a small update barely moves them)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spamflow_content.batch_words import BatchWords
from spamflow_content.count_summary import CountSummary
from spamflow_content.key_index import KeyIndex
from spamflow_content.text import STOP_WORDS_ARRAY

FORMAT = "spamflow-content-corpus-stats/1"


@dataclass
class CorpusStats:
    """Popular-word lists, the BM25 vocabulary and its per-snapshot IDF and mean lengths."""

    corpus_words: list[str]
    """The most frequent non-stop words of the sampled pages, most frequent first (1,000)."""
    query_terms: list[str]
    vocabulary: list[str]
    """BM25 terms (Porter stems), in column order of the BM25 matrices."""
    idf: dict[str, list[float]]
    """Per snapshot, the IDF of each vocabulary term."""
    avdl: dict[str, float]
    """Per snapshot, the mean virtual-document length."""
    n_hosts: int
    k1: float
    b: float

    def latest(self) -> str:
        return max(self.idf)

    def save(self, path: Path) -> None:
        path.write_text(json.dumps({"format": FORMAT, **asdict(self)}, ensure_ascii=False) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> CorpusStats:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"detectors.content.corpus_stats: cannot read {path}: {exc}") from exc
        if not isinstance(data, dict) or data.pop("format", None) != FORMAT:
            raise ValueError(f"detectors.content.corpus_stats: {path} is not a {FORMAT} file "
                             "(use the corpus_stats output of an earlier content stage)")
        try:
            return cls(**data)
        except TypeError as exc:
            raise ValueError(f"detectors.content.corpus_stats: {path}: {exc}") from exc


def count_words(flat_words: pa.Array) -> pa.Table:
    """``word``, ``n``: the occurrences of each distinct word of ``flat_words`` (one batch of
    pages; both engines count a batch with this)."""
    counts = pc.value_counts(flat_words)
    return pa.table({"word": counts.field("values"), "n": counts.field("counts")})


def top_words(counts: pa.Table, k: int) -> list[str]:
    """The ``k`` most frequent non-stop words of a ``word``, ``n`` table with one row per
    word, ties broken by the word."""
    table = heaviest(counts, k).sort_by([("n", "descending"), ("word", "ascending")])
    return table["word"].slice(0, k).to_pylist()


def heaviest(counts: pa.Table, k: int) -> pa.Table:
    """The non-stop rows of a ``word``, ``n`` table (one row per word, its whole count) that
    can be among its ``k`` most frequent: those with at least the k-th largest count, ties
    kept.  Applied to a table's parts as they come, the rows kept include the whole table's
    top k (a part's k-th count is at most the whole's)."""
    table = counts.filter(pc.invert(pc.is_in(counts["word"], value_set=STOP_WORDS_ARRAY)))
    n = np.asarray(table["n"], dtype=np.int64)
    if 0 < k < len(n):
        table = table.filter(pa.array(n >= np.partition(n, len(n) - k)[len(n) - k]))
    return table


WORD_CAPACITY = 1 << 21
"""Distinct words the in-process counter keeps (~2M): a crawl's vocabulary grows with the
crawl, its 1,000 most frequent words do not."""


class WordCounter:
    """Occurrences of the non-stop words of the batches it is given, to rank the corpus words
    exactly, in memory bounded by ``capacity`` distinct words (None: unbounded): a
    :class:`~spamflow_content.count_summary.CountSummary`.  Nothing cut (every corpus of up to
    ``capacity`` distinct words): the counts are exact.  Otherwise :meth:`top` knows the exact
    count of every word held since before the first cut, and recounts over the pages again,
    only when a word that can be among the top k was not."""

    def __init__(self, capacity: int | None = WORD_CAPACITY) -> None:
        self._summary = CountSummary(capacity)

    @property
    def error(self) -> int:
        """How far below its true count a kept count may be (0: exact)."""
        return self._summary.error

    def add(self, words: pa.Array | BatchWords) -> None:
        """One batch's words: flat, or already encoded (its distinct words are counted)."""
        if isinstance(words, BatchWords):
            content = ~words.stop
            self._summary.add(words.distinct.filter(pa.array(content)), words.counts()[content])
            return
        part = count_words(words)
        part = part.filter(pc.invert(pc.is_in(part["word"], value_set=STOP_WORDS_ARRAY)))
        self._summary.add(part["word"], part["n"])

    def counts(self) -> pa.Table:
        """``word``, ``n``, ``since`` of the kept words: true counts minus at most ``error``, and
        exactly ``n + error`` where ``since`` is 0 (``count_summary``)."""
        return self._summary.counts().rename_columns(["word", "n", "since"])

    def top(self, k: int, again: Callable[[], Iterable[pa.Array]] | None = None) -> list[str]:
        """The ``k`` most frequent non-stop words, ties broken by the word; exact.  With words
        cut (``error`` > 0), ``again()`` must give the batches' words once more: the words
        whose kept count plus ``error`` reaches the k-th largest kept count are the candidates (the
        k-th true count is at least that, and a word not kept has at most ``error``), recounted
        unless each was held since before the first cut (its count is then exactly n + error: the
        frequent words, which enter with the first pages); if ``error`` reaches that count, every
        word is recounted (this counter unbounded)."""
        summary = self.counts()
        if self.error == 0:
            return top_words(summary, k)
        if again is None:
            raise ValueError("WordCounter.top: words were cut from the summary; give again() to recount them")
        n = np.asarray(summary["n"], dtype=np.int64)
        kth = int(np.partition(n, len(n) - k)[len(n) - k]) if 0 < k <= len(n) else 0
        if self.error >= kth:
            exact = WordCounter(capacity=None)
            for flat in again():
                exact.add(flat)
            return exact.top(k)
        candidate = n + self.error >= kth
        candidates = summary["word"].filter(pa.array(candidate))
        if not np.asarray(summary["since"], dtype=np.int64)[candidate].any():  # every candidate's count exact
            return top_words(pa.table({"word": candidates, "n": pa.array(n[candidate] + self.error)}), k)
        index = KeyIndex(candidates)
        total = np.zeros(len(candidates), dtype=np.int64)
        for flat in again():
            batch = count_words(flat)
            at = index.positions(batch["word"])
            hit = at >= 0
            total += np.bincount(at[hit], weights=np.asarray(batch["n"], dtype=np.float64)[hit],
                                 minlength=len(candidates)).astype(np.int64)
        return top_words(pa.table({"word": candidates, "n": pa.array(total)}), k)


