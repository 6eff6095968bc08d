"""A batch's words encoded once, for every per-word lookup the stage makes on it.

The measures, the corpus word counts and the BM25 terms each looked the batch's word
occurrences up on their own (stop words, popular-word ranks, a dictionary for trigrams, one
for stemming, a word count): five hashes of ~600,000 strings a batch of 2,048 pages.  Here
the occurrences are dictionary-encoded once; each lookup is made on the batch's distinct
words (~50,000) and spread to the occurrences by their ids.  The ids and the distinct words
are those ``pc.dictionary_encode`` gives (first-occurrence order), so everything built on
them is what the per-occurrence lookups gave.
"""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spamflow_content.text import STOP_WORDS_ARRAY


def filled_lists(column: pa.ChunkedArray | pa.Array) -> pa.ListArray:
    """A list column as one array, null lists as empty ones (a page without words or links)."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if array.null_count:
        array = pc.if_else(pc.is_null(array), pa.scalar([], array.type), array)
    return array


class BatchWords:
    """The ``words`` lists of one batch of pages: per occurrence its page (``parent``) and its
    id among the batch's ``distinct`` words."""

    def __init__(self, column: pa.ChunkedArray | pa.Array) -> None:
        """``column``: lists of strings, or of dictionary-encoded strings (``WORDS_AS_READ``)."""
        read = _encoding_as_read(column) if pa.types.is_dictionary(column.type.value_type) else None
        if read is not None:
            column = column.cast(pa.list_(pa.string()))
        self.lists = filled_lists(column)
        self.n_pages = len(self.lists)
        self.parent = np.asarray(pc.list_parent_indices(self.lists), dtype=np.int64)
        if read is None:
            encoded = pc.dictionary_encode(pc.list_flatten(self.lists))
            read = np.asarray(encoded.indices, dtype=np.int64), encoded.dictionary
        self.ids, self.distinct = read

    @classmethod
    def from_ids(cls, ids: pa.ListArray, distinct: pa.StringArray) -> BatchWords:
        """A batch encoded before, from per page the ids of its words among ``distinct``
        (``content_ids``: the in-process stage's second pass reads them from disk rather than
        encoding the words again).  ``lists`` then holds those ids, not words."""
        words = cls.__new__(cls)
        words.lists = filled_lists(ids)
        words.n_pages = len(words.lists)
        words.parent = np.asarray(pc.list_parent_indices(words.lists), dtype=np.int64)
        words.ids = np.asarray(pc.list_flatten(words.lists), dtype=np.int64)
        words.distinct = distinct
        return words

    def content_ids(self) -> pa.ListArray:
        """Per page, the ids of its non-stop words in order (int32 lists): for ``from_ids``."""
        keep = ~self.stop[self.ids]
        per_page = np.bincount(self.parent[keep], minlength=self.n_pages)
        offsets = np.concatenate(([0], np.cumsum(per_page))).astype(np.int32)
        return pa.ListArray.from_arrays(pa.array(offsets), pa.array(self.ids[keep].astype(np.int32)))

    def __len__(self) -> int:
        """Occurrences (all words of all pages)."""
        return len(self.ids)

    @functools.cached_property
    def stop(self) -> np.ndarray:
        """Per distinct word, whether it is a stop word."""
        return np.asarray(pc.is_in(self.distinct, value_set=STOP_WORDS_ARRAY), dtype=bool)

    def counts(self) -> np.ndarray:
        """Per distinct word, its occurrences in the batch."""
        return np.bincount(self.ids, minlength=len(self.distinct))

    def per_page(self, per_word: np.ndarray) -> np.ndarray:
        """Per page, the sum over its occurrences of a value per distinct word (float64)."""
        return np.bincount(self.parent, weights=np.asarray(per_word, dtype=np.float64)[self.ids],
                           minlength=self.n_pages)

    def ranks(self, ranked: pa.Array) -> np.ndarray:
        """Per occurrence, its word's position in ``ranked`` (distinct strings), -1 if absent."""
        return np.asarray(pc.index_in(self.distinct, value_set=ranked).fill_null(-1), dtype=np.int64)[self.ids]


WORDS_AS_READ = "words.list.element"
"""The ``words`` column read dictionary-encoded (``ParquetReadOptions(dictionary_columns=...)``):
a Parquet column chunk's dictionary holds its distinct words in first-occurrence order, so a
batch's dictionaries, unified, give what ``pc.dictionary_encode`` of its words gives, without
the reader building each occurrence's string and the encoder hashing it again (~40 % of a
batch's reading and encoding on the 10^5 page table)."""


def _encoding_as_read(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, pa.StringArray] | None:
    """The ids and distinct words ``pc.dictionary_encode`` would give the flattened lists of
    dictionary-encoded words, from their dictionaries (whose words are distinct, as a Parquet
    writer makes them); None where an occurrence is null (the caller then encodes the words).
    A dictionary read from the files is in first-occurrence order and every word of it used
    unless rows were filtered out (pages not sampled): then its used words are renumbered by
    first occurrence."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    flat = [pc.list_flatten(c) for c in chunks]
    if not flat or any(f.null_count for f in flat) or not pa.types.is_string(column.type.value_type.value_type):
        return None
    unified = pa.chunked_array(flat, type=column.type.value_type).unify_dictionaries()
    dictionary = unified.chunk(0).dictionary
    ids = np.concatenate([np.asarray(c.indices, dtype=np.int64) for c in unified.chunks])
    n = len(ids)
    if n == 0:
        return ids, dictionary.slice(0, 0)
    top = np.maximum.accumulate(ids)  # each new id one past the largest before it: first-occurrence order
    if ids[0] == 0 and top[-1] == len(dictionary) - 1 and not (np.diff(top) > 1).any():
        return ids, dictionary
    first = np.full(len(dictionary), n, dtype=np.int64)
    np.minimum.at(first, ids, np.arange(n, dtype=np.int64))
    used = np.flatnonzero(first < n)
    order = used[np.argsort(first[used])]  # the used words by first occurrence (no two share one)
    renumber = np.empty(len(dictionary), dtype=np.int64)
    renumber[order] = np.arange(len(order), dtype=np.int64)
    return renumber[ids], dictionary.take(pa.array(order))


def counted_sorted(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_counts=True)`` of an int64 array, by a sort (``unique_sorted``)."""
    ordered = np.sort(values)
    if len(ordered) == 0:
        return ordered, np.zeros(0, dtype=np.int64)
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    return ordered[starts], np.diff(np.append(starts, len(ordered))).astype(np.int64)


def unique_sorted(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` of an int64 array, by a sort: NumPy 2.4's ``np.unique`` hashes
    and then sorts, ~35× slower on the stage's pair keys (600,000 keys, a third distinct:
    350 against 10 ms)."""
    ordered = np.sort(values)
    if len(ordered) == 0:
        return ordered
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]
