"""The 24 per-page content measures of Ntoulas et al. (2006), as the Web Spam Challenge
released them (Castillo et al. 2007), computed column-wise over an Arrow batch of pages.

Every measure reads the page table of the parse stage (``docs/parse.md``): ``words`` is the
visible text as words, ``title`` the title text, ``links.anchor`` the anchor texts,
``html_bytes`` the size of the HTML.  ``docs/content.md`` gives each definition with its
source and what we chose where the sources are silent.  Word-level work is vectorised with
pyarrow and numpy, each lookup once per distinct word of a batch (``batch_words.py``); only the
compression, and titles and anchors that are not ASCII, touch each page in Python.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spamflow.words import words as split_words
from spamflow_content.batch_words import BatchWords, filled_lists, unique_sorted

TOP_K = (100, 200, 500, 1000)
"""The list sizes of corpus and query precision and recall."""

MEASURES: tuple[str, ...] = (
    "number_of_words", "words_in_title", "average_word_length", "fraction_anchor_text",
    "fraction_visible_text", "compression_rate",
    *(f"corpus_precision_{k}" for k in TOP_K), *(f"corpus_recall_{k}" for k in TOP_K),
    *(f"query_precision_{k}" for k in TOP_K), *(f"query_recall_{k}" for k in TOP_K),
    "trigram_entropy", "independent_trigram_likelihood",
)
"""The 24 measures in the order of the public feature files (HST_1..24 and the other blocks)."""

PAGE_COLUMNS = ("title", "words", "links", "html_bytes")
"""Page-table columns the measures read."""



@dataclass(frozen=True)
class PopularTerms:
    """The ranked lists behind corpus and query precision/recall (most popular first)."""

    corpus: list[str]
    query: list[str]


def page_measures(batch: pa.Table | pa.RecordBatch, popular: PopularTerms,
                  words: BatchWords | None = None) -> dict[str, np.ndarray]:
    """The 24 measures of every page of ``batch``, as float64 arrays named as in ``MEASURES``;
    ``words``: the batch's words already encoded (the in-process stage encodes them once for
    the measures and the BM25 terms)."""
    if words is None:
        words = BatchWords(batch.column("words"))
    out = text_measures(batch, words, popular.query)
    out.update(ranked_measures("corpus", words, popular.corpus))
    return {name: out[name] for name in MEASURES}


CORPUS_MEASURES: tuple[str, ...] = tuple(m for m in MEASURES if m.startswith("corpus_"))
"""The measures that need the corpus's popular words: the in-process stage computes them in its
second pass, every other measure in its first (``text_measures``)."""


def text_measures(batch: pa.Table | pa.RecordBatch, words: BatchWords, query: list[str]) -> dict[str, np.ndarray]:
    """Every measure but ``CORPUS_MEASURES``: those a page gives on its own, with the ranked
    ``query`` terms (known before the corpus is read)."""
    n_pages = batch.num_rows
    n_words = np.asarray(pc.list_value_length(words.lists), dtype=np.float64)
    out: dict[str, np.ndarray] = {"number_of_words": n_words}

    out["words_in_title"] = word_counts(batch.column("title"))
    out["average_word_length"] = _ratio(words.per_page(pc.utf8_length(words.distinct)), n_words)
    out["fraction_anchor_text"] = _ratio(_anchor_words(batch.column("links"), n_pages), n_words)
    visible = words.per_page(pc.binary_length(words.distinct))
    visible += np.maximum(n_words - 1, 0)  # the single spaces that join the words
    html_bytes = np.asarray(batch.column("html_bytes").fill_null(0), dtype=np.float64)
    out["fraction_visible_text"] = _ratio(visible, html_bytes)
    out["compression_rate"] = _compression_rate(words.lists)
    out.update(ranked_measures("query", words, query))
    out["trigram_entropy"], out["independent_trigram_likelihood"] = _trigram_measures(words, n_words)
    return out


def ranked_measures(name: str, words: BatchWords, ranked: list[str]) -> dict[str, np.ndarray]:
    """``{name}_precision_{k}`` and ``{name}_recall_{k}`` of every page, for each k of ``TOP_K``,
    against the ``ranked`` words (``corpus`` or ``query``).  ``words`` may hold only the
    batch's non-stop occurrences (``BatchWords.content``): no ranked word is a stop word, and
    the denominator counts non-stop words only, so the values are the same."""
    precision, recall = _precision_recall(words, ranked, words.per_page(~words.stop))
    out = {}
    for k in TOP_K:
        out[f"{name}_precision_{k}"] = precision[k]
        out[f"{name}_recall_{k}"] = recall[k]
    return out


_ASCII_WORD_BYTE = np.array([48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 for c in range(256)])
"""Bytes of ASCII text that are word characters (``[A-Za-z0-9]``): lower-casing and NFC leave
ASCII text's words where they are, so its words are the runs of these bytes."""


def word_counts(texts: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Words of each string by ``spamflow.words.words`` (0 for a null), as float64: for ASCII
    strings the runs of ``[A-Za-z0-9]`` counted over the column's bytes at once, for the
    others ``len(words(text))``.  A Python call per title and anchor was ~8 % of the stage."""
    texts = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts
    texts = pc.cast(texts.fill_null(""), pa.large_string())
    counts = np.zeros(len(texts), dtype=np.float64)
    is_ascii = np.asarray(pc.string_is_ascii(texts), dtype=bool)
    ascii_texts = texts.filter(pa.array(is_ascii))
    offsets = np.frombuffer(ascii_texts.buffers()[1], dtype=np.int64)[
        ascii_texts.offset:ascii_texts.offset + len(ascii_texts) + 1]
    if len(ascii_texts) and offsets[-1] > offsets[0]:
        data = np.frombuffer(ascii_texts.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]]
        offsets = offsets - offsets[0]
        word = _ASCII_WORD_BYTE[data]
        start = word.copy()
        start[1:] &= ~word[:-1]
        begins = offsets[:-1][offsets[:-1] < len(data)]
        start[begins] = word[begins]  # a string's first byte starts a word whatever came before it
        before = np.concatenate(([0], np.cumsum(start, dtype=np.int64)))
        counts[is_ascii] = before[offsets[1:]] - before[offsets[:-1]]
    for i in np.flatnonzero(~is_ascii).tolist():
        counts[i] = len(split_words(texts[i].as_py()))
    return counts


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, 0 where den is 0 (an empty page has no fractions)."""
    out = np.zeros_like(num, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _anchor_words(links: pa.ChunkedArray | pa.Array, n_pages: int) -> np.ndarray:
    """Words in the anchor texts of each page's links (the same word rule as ``words``)."""
    lists = filled_lists(links)
    anchors = pc.struct_field(pc.list_flatten(lists), "anchor")
    parent = np.asarray(pc.list_parent_indices(lists), dtype=np.int64)
    return np.bincount(parent, weights=word_counts(anchors), minlength=n_pages)


def _compression_rate(lists: pa.ListArray) -> np.ndarray:
    """Bytes of the visible text (words joined by spaces, UTF-8) over its DEFLATE-compressed
    size, without container headers (``docs/content.md`` says why DEFLATE)."""
    texts = pc.binary_join(lists, " ").cast(pa.binary()).to_pylist()  # bytes: no str to encode again
    rates = np.zeros(len(texts), dtype=np.float64)
    for i, raw in enumerate(texts):
        if raw:
            rates[i] = len(raw) / len(zlib.compress(raw, 6, -15))  # one call: the same stream as compressobj's
    return rates


def _precision_recall(words: BatchWords, ranked: list[str],
                      content_words: np.ndarray) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    """Precision: the fraction of a page's non-stop words that are among the top k of
    ``ranked``; recall: the fraction of those k terms that occur in the page."""
    n_pages = words.n_pages
    rank = words.ranks(pa.array(ranked, pa.string()))
    hit = rank >= 0
    hit_parent, hit_rank = words.parent[hit], rank[hit]
    distinct = unique_sorted(hit_parent * (len(ranked) + 1) + hit_rank)
    d_parent, d_rank = distinct // (len(ranked) + 1), distinct % (len(ranked) + 1)
    precision, recall = {}, {}
    for k in TOP_K:
        precision[k] = _ratio(np.bincount(hit_parent, weights=hit_rank < k, minlength=n_pages), content_words)
        recall[k] = np.bincount(d_parent, weights=d_rank < k, minlength=n_pages) / k
    return precision, recall


def _trigram_measures(words: BatchWords, n_words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Entropy of the page's word-trigram distribution, -Σ p_w ln p_w, and the independent
    trigram likelihood, -(1/n) Σ ln p_w, both over the distinct trigrams w of the page, with
    p_w = count(w) / n and n the page's trigrams (words - 2).  0 for pages under 3 words.

    The 1/n (not 1/distinct) is what the released WEBSPAM-UK2007 values fit exactly
    (``docs/content.md``)."""
    n_pages = len(n_words)
    entropy = np.zeros(n_pages)
    likelihood = np.zeros(n_pages)
    parent, ids = words.parent, words.ids
    if len(ids) < 3:
        return entropy, likelihood
    start = np.flatnonzero(parent[:-2] == parent[2:])  # trigrams that stay within one page
    if len(start) == 0:
        return entropy, likelihood
    group_page, counts = _distinct_trigrams(parent[start], ids[start], ids[start + 1], ids[start + 2],
                                            len(words.distinct))
    n_trigrams = np.maximum(n_words - 2, 0)
    p = counts / n_trigrams[group_page]
    entropy = np.bincount(group_page, weights=-p * np.log(p), minlength=n_pages).astype(np.float64)
    likelihood = _ratio(np.bincount(group_page, weights=-np.log(p), minlength=n_pages), n_trigrams)
    return entropy, likelihood


def _distinct_trigrams(page: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray,
                       n_distinct: int) -> tuple[np.ndarray, np.ndarray]:
    """The page and the occurrences (float64) of each distinct (page, a, b, c), in that sort
    order.  One int64 key per trigram, page × words³ + ..., sorted once: over runs of pages
    few enough for the key to fit (a batch of 2,048 pages with over ~165,000 distinct words, a
    third of the stage's batches, takes two), each run's pages counted from its first; a sort
    on four keys (~4× slower, the same order) only when words³ alone does not fit."""
    width = max(n_distinct, 1)
    cube = width ** 3
    run = (2 ** 63 - 1) // cube  # pages a key can tell apart
    if run == 0:
        return _distinct_trigrams_lexsort(page, a, b, c)
    last = int(page[-1]) if len(page) else 0  # pages ascend
    pages_out, counts_out = [], []
    for low in range(0, last + 1, run):
        lo, hi = np.searchsorted(page, [low, low + run])
        if lo == hi:
            continue
        key = (((page[lo:hi] - low) * width + a[lo:hi]) * width + b[lo:hi]) * width + c[lo:hi]
        key.sort()
        new = np.ones(len(key), dtype=bool)
        new[1:] = key[1:] != key[:-1]
        first = np.flatnonzero(new)
        pages_out.append(key[first] // cube + low)
        counts_out.append(np.diff(np.append(first, len(key))).astype(np.float64))
    if len(pages_out) == 1:
        return pages_out[0], counts_out[0]
    if not pages_out:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    return np.concatenate(pages_out), np.concatenate(counts_out)


def _distinct_trigrams_lexsort(page: np.ndarray, a: np.ndarray, b: np.ndarray,
                               c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_distinct_trigrams`` by a sort on four keys, for vocabularies too large for one."""
    order = np.lexsort((c, b, a, page))
    page, a, b, c = page[order], a[order], b[order], c[order]
    new = np.ones(len(page), dtype=bool)
    new[1:] = (page[1:] != page[:-1]) | (a[1:] != a[:-1]) | (b[1:] != b[:-1]) | (c[1:] != c[:-1])
    first = np.flatnonzero(new)
    return page[first], np.diff(np.append(first, len(page))).astype(np.float64)
