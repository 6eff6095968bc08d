"""The 24 per-page content measures of Ntoulas et al. (2006), as the Web Spam Challenge
released them (Castillo et al. 2007), computed column-wise over an Arrow batch of pages.

Every measure reads the page table of the parse stage (``docs/parse.md``): ``words`` is the
visible text as words, ``title`` the title text, ``links.anchor`` the anchor texts,
``html_bytes`` the size of the HTML.  ``docs/content.md`` gives each definition with its
source and what we chose where the sources are silent.  Word-level work is vectorised with
pyarrow and numpy; only the title, the anchors and the compression touch each page in Python.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spamflow.words import words as split_words
from spamflow_content.text import STOP_WORDS_ARRAY

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


def page_measures(batch: pa.Table | pa.RecordBatch, popular: PopularTerms) -> dict[str, np.ndarray]:
    """The 24 measures of every page of ``batch``, as float64 arrays named as in ``MEASURES``."""
    n_pages = batch.num_rows
    lists = _filled_lists(batch.column("words"))
    flat = pc.list_flatten(lists)
    parent = np.asarray(pc.list_parent_indices(lists), dtype=np.int64)
    n_words = np.asarray(pc.list_value_length(lists), dtype=np.float64)
    out: dict[str, np.ndarray] = {"number_of_words": n_words}

    out["words_in_title"] = np.array([len(split_words(t)) if t else 0 for t in batch.column("title").to_pylist()],
                                     dtype=np.float64)
    chars = np.bincount(parent, weights=np.asarray(pc.utf8_length(flat), dtype=np.float64), minlength=n_pages)
    out["average_word_length"] = _ratio(chars, n_words)
    out["fraction_anchor_text"] = _ratio(_anchor_words(batch.column("links"), n_pages), n_words)
    visible = np.bincount(parent, weights=np.asarray(pc.binary_length(flat), dtype=np.float64), minlength=n_pages)
    visible += np.maximum(n_words - 1, 0)  # the single spaces that join the words
    html_bytes = np.asarray(batch.column("html_bytes").fill_null(0), dtype=np.float64)
    out["fraction_visible_text"] = _ratio(visible, html_bytes)
    out["compression_rate"] = _compression_rate(lists)

    stop = np.asarray(pc.is_in(flat, value_set=STOP_WORDS_ARRAY), dtype=bool)
    content_words = np.bincount(parent, weights=~stop, minlength=n_pages)
    for name, ranked in (("corpus", popular.corpus), ("query", popular.query)):
        precision, recall = _precision_recall(flat, parent, n_pages, ranked, content_words)
        for k in TOP_K:
            out[f"{name}_precision_{k}"] = precision[k]
            out[f"{name}_recall_{k}"] = recall[k]
    out["trigram_entropy"], out["independent_trigram_likelihood"] = _trigram_measures(flat, parent, n_words)
    return {name: out[name] for name in MEASURES}


def _filled_lists(column: pa.ChunkedArray | pa.Array) -> pa.ListArray:
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if array.null_count:
        array = pc.if_else(pc.is_null(array), pa.scalar([], array.type), array)
    return array


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, 0 where den is 0 (an empty page has no fractions)."""
    out = np.zeros_like(num, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _anchor_words(links: pa.ChunkedArray | pa.Array, n_pages: int) -> np.ndarray:
    """Words in the anchor texts of each page's links (the same word rule as ``words``)."""
    lists = _filled_lists(links)
    anchors = pc.struct_field(pc.list_flatten(lists), "anchor").fill_null("").to_pylist()
    parent = np.asarray(pc.list_parent_indices(lists), dtype=np.int64)
    per_anchor = np.array([len(split_words(a)) if a else 0 for a in anchors], dtype=np.float64)
    return np.bincount(parent, weights=per_anchor, minlength=n_pages)


def _compression_rate(lists: pa.ListArray) -> np.ndarray:
    """Bytes of the visible text (words joined by spaces, UTF-8) over its DEFLATE-compressed
    size, without container headers (``docs/content.md`` says why DEFLATE)."""
    texts = pc.binary_join(lists, " ").to_pylist()
    rates = np.zeros(len(texts), dtype=np.float64)
    for i, text in enumerate(texts):
        if text:
            raw = text.encode("utf-8")
            packer = zlib.compressobj(6, zlib.DEFLATED, -15)
            rates[i] = len(raw) / len(packer.compress(raw) + packer.flush())
    return rates


def _precision_recall(flat: pa.Array, parent: np.ndarray, n_pages: int, ranked: list[str],
                      content_words: np.ndarray) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    """Precision: the fraction of a page's non-stop words that are among the top k of
    ``ranked``; recall: the fraction of those k terms that occur in the page."""
    rank = np.asarray(pc.index_in(flat, value_set=pa.array(ranked, pa.string())).fill_null(-1), dtype=np.int64)
    hit = rank >= 0
    hit_parent, hit_rank = parent[hit], rank[hit]
    distinct = np.unique(hit_parent * (len(ranked) + 1) + hit_rank)
    d_parent, d_rank = distinct // (len(ranked) + 1), distinct % (len(ranked) + 1)
    precision, recall = {}, {}
    for k in TOP_K:
        precision[k] = _ratio(np.bincount(hit_parent, weights=hit_rank < k, minlength=n_pages), content_words)
        recall[k] = np.bincount(d_parent, weights=d_rank < k, minlength=n_pages) / k
    return precision, recall


def _trigram_measures(flat: pa.Array, parent: np.ndarray, n_words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Entropy of the page's word-trigram distribution, -Σ p_w ln p_w, and the independent
    trigram likelihood, -(1/n) Σ ln p_w, both over the distinct trigrams w of the page, with
    p_w = count(w) / n and n the page's trigrams (words - 2).  0 for pages under 3 words.

    The 1/n (not 1/distinct) is what the released WEBSPAM-UK2007 values fit exactly
    (``docs/content.md``)."""
    n_pages = len(n_words)
    entropy = np.zeros(n_pages)
    likelihood = np.zeros(n_pages)
    if len(flat) < 3:
        return entropy, likelihood
    ids = np.asarray(pc.dictionary_encode(flat).indices, dtype=np.int64)
    start = np.flatnonzero(parent[:-2] == parent[2:])  # trigrams that stay within one page
    if len(start) == 0:
        return entropy, likelihood
    page, a, b, c = parent[start], ids[start], ids[start + 1], ids[start + 2]
    order = np.lexsort((c, b, a, page))
    page, a, b, c = page[order], a[order], b[order], c[order]
    new = np.ones(len(page), dtype=bool)
    new[1:] = (page[1:] != page[:-1]) | (a[1:] != a[:-1]) | (b[1:] != b[:-1]) | (c[1:] != c[:-1])
    first = np.flatnonzero(new)
    counts = np.diff(np.append(first, len(page))).astype(np.float64)
    group_page = page[first]
    n_trigrams = np.maximum(n_words - 2, 0)
    p = counts / n_trigrams[group_page]
    entropy = np.bincount(group_page, weights=-p * np.log(p), minlength=n_pages).astype(np.float64)
    likelihood = _ratio(np.bincount(group_page, weights=-np.log(p), minlength=n_pages), n_trigrams)
    return entropy, likelihood
