"""Corpus statistics: what the content features need from the whole corpus, saved with a run
so that new hosts can be featurised against them without recomputing the corpus
(Erdélyi et al., section 6.2: document frequencies and the popular-word lists are the only
global content information, and a small update barely moves them)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spamflow_content.text import STOP_WORDS

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
    table = counts.filter(pc.invert(pc.is_in(counts["word"], value_set=pa.array(sorted(STOP_WORDS)))))
    n = np.asarray(table["n"], dtype=np.int64)
    if 0 < k < len(n):  # sort only the words that can be in the top k: those at least the k-th count (ties too)
        table = table.filter(pa.array(n >= np.partition(n, len(n) - k)[len(n) - k]))
    table = table.sort_by([("n", "descending"), ("word", "ascending")])
    return table["word"].slice(0, k).to_pylist()


class WordCounter:
    """Occurrences of every word over the batches it is given, to rank the corpus words."""

    def __init__(self) -> None:
        self._parts: list[pa.Table] = []  # the merged counts first, then the batches' since
        self._pending_rows = 0

    def add(self, flat_words: pa.Array) -> None:
        part = count_words(flat_words)
        self._parts.append(part)
        self._pending_rows += part.num_rows
        # merge when the new rows reach the merged ones (at least 2^20): linear in all, at most ~2x the words held
        if self._pending_rows >= max(self._parts[0].num_rows, 1 << 20) and len(self._parts) > 1:
            self._parts = [self._merged()]
            self._pending_rows = 0

    def _merged(self) -> pa.Table:
        if not self._parts:
            return pa.table({"word": pa.array([], pa.string()), "n": pa.array([], pa.int64())})
        parts = pa.concat_tables(self._parts)
        words = pc.dictionary_encode(parts["word"].combine_chunks())  # leaner than a group_by's hash table
        n = np.bincount(np.asarray(words.indices, dtype=np.int64), weights=np.asarray(parts["n"], dtype=np.float64),
                        minlength=len(words.dictionary))
        return pa.table({"word": words.dictionary, "n": pa.array(n.astype(np.int64))})

    def top(self, k: int) -> list[str]:
        """The ``k`` most frequent non-stop words, ties broken by the word."""
        return top_words(self._merged(), k)
