"""DSpin's partition of an article's words into mutables and immutables (section IV-B).

The scan is greedy, left to right.  At each word it looks up the word and the word with up
to five following words (``MAX_PHRASE_WORDS``); a hit is *mutable* and the scan jumps past
it, a miss leaves the word *immutable*.  Two matching orders:

* ``"longest"`` (spamflow's default): the longest entry that starts at the word wins, as
  the spinner itself matches (it replaces the longest phrase it knows), so a phrase the
  spinner replaced as a whole is recognised as a whole;
* ``"paper"``: DSpin's implementation as the paper describes it: a word that is itself in
  the dictionary is mutable on its own, and only a word that is not is tried with its
  following words (longest phrase first).  Its quirk: with both {a} and {a b c} in the
  dictionary, ``a`` alone is mutable and ``b``, ``c`` become immutables.

Immutables form a set: the k-th occurrence (k ≥ 2) of a word becomes ``word#k``.

>>> from spamflow_spin.dictionary import SynonymDictionary
>>> d = SynonymDictionary()
>>> d.add_group("a", ["x"]); d.add_group("a b c", ["y"])
>>> partition(["a", "b", "c", "z", "z"], d, "paper")
Partition(immutables=['b', 'c', 'z', 'z#2'], mutables=['a'])
>>> partition(["a", "b", "c", "z", "z"], d, "longest")
Partition(immutables=['z', 'z#2'], mutables=['a b c'])
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Literal

from spamflow_spin.dictionary import SynonymDictionary

PhraseMatch = Literal["longest", "paper"]


@dataclass
class Partition:
    immutables: list[str]
    """Distinct immutables in text order (repeats suffixed ``#k``)."""
    mutables: list[str]
    """Mutable words and phrases in text order, repeats kept (the verifier counts them)."""


def partition(words: Sequence[str], dictionary: SynonymDictionary, phrase_match: PhraseMatch = "longest") -> Partition:
    """Split ``words`` (lower-cased, links already removed) into immutables and mutables."""
    entries = dictionary.neighbours
    prefixes = dictionary.prefixes
    max_words = dictionary.max_words
    starts = _word_kinds(dictionary)
    paper = phrase_match == "paper"
    immutables: list[str] = []
    mutables: list[str] = []
    seen: dict[str, int] = {}
    n_words = len(words)
    i = 0
    while i < n_words:
        word = words[i]
        kind = starts.get(word)
        if kind is None:  # most words: neither an entry nor the start of a phrase
            k = seen.get(word, 0) + 1
            seen[word] = k
            immutables.append(word if k == 1 else f"{word}#{k}")
            i += 1
            continue
        best = kind & ENTRY
        if not (paper and best) and kind & PREFIX:
            best = longest_entry(words, i, min(n_words, i + max_words), best, entries, prefixes)
        if best:
            mutables.append(" ".join(words[i:i + best]) if best > 1 else word)
            i += best
            continue
        k = seen.get(word, 0) + 1
        seen[word] = k
        immutables.append(word if k == 1 else f"{word}#{k}")
        i += 1
    return Partition(immutables, mutables)


ENTRY, PREFIX = 1, 2


def longest_entry(words: Sequence[str], i: int, stop: int, best: int, entries: Container[str],
                  prefixes: Container[str]) -> int:
    """The words of the longest entry starting at ``words[i]`` that ends before ``stop`` (the
    scan grows the phrase while it is a prefix of a longer entry), or ``best`` (the word's own
    ENTRY bit) when no longer one matches."""
    phrase, j = words[i], i + 1
    while j < stop:
        phrase = f"{phrase} {words[j]}"
        j += 1
        if phrase in entries:
            best = j - i
        if phrase not in prefixes:
            break
    return best


def _word_kinds(dictionary: SynonymDictionary) -> dict[str, int]:
    """word -> ENTRY | PREFIX bits: is it an entry, does a longer entry start with it; one
    lookup a word instead of two.  Built once per dictionary state (entries and prefixes are
    only ever added, so their sizes tell when it is stale)."""
    state = (len(dictionary.neighbours), len(dictionary.prefixes))
    held = dictionary.__dict__.get("_word_kinds")
    if held is not None and held[0] == state:
        return held[1]
    kinds = {entry: ENTRY for entry in dictionary.neighbours}
    for prefix in dictionary.prefixes:
        kinds[prefix] = kinds.get(prefix, 0) | PREFIX
    dictionary.__dict__["_word_kinds"] = (state, kinds)
    return kinds
