""":func:`~spamflow_spin.partition.partition` of a batch of texts at once, for the direct
engine: each text's immutables as integer ids (``IdWriter``'s) and its ``partitions.tsv``
line, with Python work per *distinct* word of the batch rather than per word.

``partition`` runs a few dictionary operations per word (its kind, its repeat count, then the
id writer's lookup of the immutable string): ~40 % of the direct engine's CPU at 10⁵ pages.
Here Arrow dictionary-encodes the batch's words (one C hash per word), and:

* each distinct word's kind (entry / prefix of a longer entry, ``partition._word_kinds``) is
  looked up once; a word that is an entry and starts no phrase (or, in the ``paper`` order,
  any entry) is a one-word mutable unless an earlier phrase covers it;
* only the words that may start a phrase run the phrase scan in Python (the same loop as
  ``partition``'s); the phrases are then taken greedily left to right, as ``partition`` does
  (a phrase inside an earlier one is skipped), and they cover the words after their first;
* the rest are immutables; a repeat's ``k`` (``word#k``) is its rank among the equal words of
  its text (a stable sort by text and word), so an immutable is a pair (word, k), made a
  string (``word`` or ``word#k``) and given its id once per distinct pair of the batch;
* the ``partitions.tsv`` lines (``A<TAB>doc<TAB>immutables<TAB>mutables``) are joined by Arrow.

The result is ``partition``'s, text for text (tests/test_spin_direct.py compares them on
random texts and dictionaries, phrases and prefixes that are not entries, both orders).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain, repeat

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spamflow_spin.dictionary import SynonymDictionary
from spamflow_spin.mr_candidate_pairs import packed_key, unpack_key
from spamflow_spin.partition import ENTRY, PREFIX, PhraseMatch, _word_kinds, longest_entry


@dataclass
class BatchPartition:
    """The partitions of a batch of texts, text ``t``'s immutables ``ids[starts[t]:starts[t + 1]]``
    in text order."""

    ids: np.ndarray
    """Immutable ids (uint32), text after text."""
    starts: np.ndarray
    """Where each text's ids start (int64, one more than texts)."""
    mutables: np.ndarray
    """Mutables per text (int64)."""
    lines: list[str]
    """Per text, its ``partitions.tsv`` line without the newline."""


def partition_batch(docs: Sequence[int], texts: Sequence[Sequence[str]], dictionary: SynonymDictionary,
                    phrase_match: PhraseMatch, immutable_id: Callable[[str], int]) -> BatchPartition:
    """``partition(texts[t])`` for each text, its immutables numbered by ``immutable_id`` (one
    call per distinct immutable of the batch), its line under ``docs[t]``."""
    n_texts = len(texts)
    lengths = np.fromiter(map(len, texts), np.int64, n_texts)
    offsets = np.zeros(n_texts + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    n = int(offsets[-1])
    flat = list(chain.from_iterable(texts))
    encoded = pa.array(flat, pa.string()).dictionary_encode() if n else None
    codes = encoded.indices.to_numpy().astype(np.int64) if encoded is not None else np.zeros(0, np.int64)
    distinct: list[str] = encoded.dictionary.to_pylist() if encoded is not None else []
    kinds = np.fromiter(map(_word_kinds(dictionary).get, distinct, repeat(0)), np.int64, len(distinct))[codes]
    text_of = np.repeat(np.arange(n_texts, dtype=np.int64), lengths)

    # mutables: one-word entries, and phrases found by partition's own scan where one may start
    paper = phrase_match == "paper"
    single = (kinds & ENTRY).astype(bool)
    may_start = (kinds & PREFIX).astype(bool)
    if paper:  # the paper's order: an entry is a mutable on its own, only other words start phrases
        may_start &= ~single
    phrase_at, phrase_len, phrase_text = _phrases(flat, np.flatnonzero(may_start), offsets[1:][text_of],
                                                  kinds, dictionary)
    single[phrase_at] = False  # decided by the scan: a phrase, or its own entry bit when no phrase matched
    single[phrase_at[phrase_len == 1]] = True
    taken, covered = _take_greedily(phrase_at, phrase_len, n)
    single &= ~covered
    is_phrase = np.zeros(n, bool)
    is_phrase[phrase_at[taken]] = True
    mutable = single | is_phrase
    immutable = ~(mutable | covered)

    # immutables: (word, k) -> string -> id, once per distinct pair
    at = np.flatnonzero(immutable)
    word, text = codes[at], text_of[at]
    k = np.ones(len(at), np.int64)
    if len(at):
        order, key = _stable_order(text * max(len(distinct), 1) + word)
        run_start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        rank = np.arange(len(at)) - np.repeat(run_start, np.diff(np.r_[run_start, len(at)]))
        k[order] = rank + 1
    pair_of, strings = _distinct_pairs(word, k, distinct)
    ids = np.fromiter(map(immutable_id, strings), np.uint32, len(strings))[pair_of]
    starts = np.zeros(n_texts + 1, np.int64)
    np.cumsum(np.bincount(text, minlength=n_texts), out=starts[1:])

    # the lines: immutables joined by " ", mutables by "|"
    immutable_text = _joined(pa.array(strings, pa.string()).take(pair_of), starts, " ")
    m_at = np.flatnonzero(mutable)
    m_text = pc.take(encoded.dictionary, codes[m_at]) if encoded is not None else pa.array([], pa.string())
    if len(phrase_at[taken]):
        phrase_strings = [phrase_text[i] for i in np.flatnonzero(taken).tolist()]
        m_text = pc.replace_with_mask(m_text, pa.array(is_phrase[m_at]), pa.array(phrase_strings, pa.string()))
    m_starts = np.zeros(n_texts + 1, np.int64)
    np.cumsum(np.bincount(text_of[m_at], minlength=n_texts), out=m_starts[1:])
    mutable_text = _joined(m_text, m_starts, "|")
    lines = pc.binary_join_element_wise(pa.array(["A"] * n_texts, pa.string()),
                                        pc.cast(pa.array(docs, pa.int64()), pa.string()),
                                        immutable_text, mutable_text, "\t").to_pylist()
    return BatchPartition(ids, starts, np.diff(m_starts), lines)


def _stable_order(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.argsort(key, kind="stable")`` and the sorted keys: when (key, index) pack into an
    int64 (:func:`~spamflow_spin.mr_candidate_pairs.packed_key`; a batch's (text, word) keys
    do), those unique keys sorted in place (numpy's vectorised sort, ~2x faster here than the
    stable argsort's merge sort)."""
    packed = packed_key(key, np.arange(len(key)))
    if packed is None:
        order = np.argsort(key, kind="stable")
        return order, key[order]
    ordered, widths = packed
    ordered.sort()
    key_sorted, order = unpack_key(ordered, widths)
    return order, key_sorted


def _distinct_pairs(word: np.ndarray, k: np.ndarray, distinct: list[str]) -> tuple[np.ndarray, list[str]]:
    """The distinct (word, k) pairs' strings (``word``, ``word#k``) and each immutable's pair:
    first occurrences by a table over the batch's words, repeats (~30 %) by a sort."""
    first = k == 1
    words = np.flatnonzero(np.bincount(word[first], minlength=len(distinct)))
    where = np.zeros(len(distinct), np.int64)
    where[words] = np.arange(len(words))
    repeats, repeat_of = np.unique(k[~first] * len(distinct) + word[~first], return_inverse=True)
    pair_of = np.empty(len(word), np.int64)
    pair_of[first] = where[word[first]]
    pair_of[~first] = len(words) + repeat_of.reshape(-1)
    repeat_k, repeat_word = np.divmod(repeats, max(len(distinct), 1))
    strings = [distinct[w] for w in words.tolist()]
    strings += [f"{distinct[w]}#{r}" for w, r in zip(repeat_word.tolist(), repeat_k.tolist())]
    return pair_of, strings


def _phrases(flat: list[str], at: np.ndarray, ends: np.ndarray, kinds: np.ndarray,
             dictionary: SynonymDictionary) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``partition``'s phrase scan at each position of ``at`` (words that start a longer entry):
    the longest entry there (its length in words, the word's own ENTRY bit when no longer one
    matched, 0 for none) and its text."""
    entries, prefixes, max_words = dictionary.neighbours, dictionary.prefixes, dictionary.max_words
    lengths: list[int] = []
    found: list[str] = []
    for i, end, kind in zip(at.tolist(), ends[at].tolist(), kinds[at].tolist()):
        best = longest_entry(flat, i, min(end, i + max_words), kind & ENTRY, entries, prefixes)
        lengths.append(best)
        found.append(" ".join(flat[i:i + best]))
    return at, np.array(lengths, np.int64), found


def _take_greedily(at: np.ndarray, lengths: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Which phrases (of two words or more) the left-to-right scan takes (one inside an earlier
    taken phrase is skipped), and the words they cover after their first."""
    taken = np.zeros(len(at), bool)
    placed = 0
    for index in np.flatnonzero(lengths >= 2).tolist():
        i = int(at[index])
        if i >= placed:
            taken[index] = True
            placed = i + int(lengths[index])
    # a one-word match (an entry that starts no longer matching phrase) is taken unless covered
    depth = np.zeros(n + 1, np.int64)
    np.add.at(depth, at[taken] + 1, 1)
    np.add.at(depth, at[taken] + lengths[taken], -1)
    covered = np.cumsum(depth[:n]) > 0
    taken |= (lengths == 1) & ~covered[at]
    return taken, covered


def _joined(strings: pa.Array, starts: np.ndarray, separator: str) -> pa.Array:
    """``separator.join`` of ``strings[starts[t]:starts[t + 1]]`` for each t."""
    return pc.binary_join(pa.ListArray.from_arrays(pa.array(starts, pa.int32()), strings), separator)
