"""Spinning for the evaluation only (never used by the detector): a rate-limited article
spinner and the two dictionaries of the Table II evaluation.

* ``moby_spin_dictionary``: the *spammer's* dictionary, from Moby Thesaurus II (public
  domain), built as ``spamflow/demo/build_spin_dictionary.py`` builds the demo's, but for a
  whole vocabulary: content-word heads, mutual Moby synonyms of at most three words, the five
  sharing most Moby neighbours with the head.
* ``mythes_dictionary_lines``: the *detector's* dictionary, from the WordNet-derived MyThes
  thesaurus: every head with the synonyms of all its senses ("(generic term)", "(related
  term)" and "(antonym)" entries dropped, "(similar term)" kept).
* ``spin_words``: The Best Spinner's "Frequency" setting: replace the longest dictionary
  entry at a word by a random synonym, then leave at least ``every - 1`` words alone.
"""

from __future__ import annotations

import gzip
import random
import re
from collections.abc import Iterable
from pathlib import Path

from spamflow.demo.build_spin_dictionary import FUNCTION_WORDS, load_moby, spinner_synonyms

SpinnerDictionary = dict[tuple[str, ...], list[str]]


def moby_spin_dictionary(moby: Path, vocabulary: Iterable[str]) -> SpinnerDictionary:
    thes = load_moby(moby)
    sets = {k: set(v) for k, v in thes.items()}
    out: SpinnerDictionary = {}
    for head in sorted(set(vocabulary)):
        if head in FUNCTION_WORDS or head not in thes:
            continue
        syns = spinner_synonyms(head, thes, sets)
        if syns:
            out[tuple(head.split())] = syns
    return out


def spinner_lines(dictionary: SpinnerDictionary) -> list[str]:
    return ["|".join([" ".join(head), *syns]) for head, syns in sorted(dictionary.items())]


_MARK = re.compile(r"\s*\((generic term|related term|antonym|similar term)\)\s*$")


def mythes_dictionary_lines(path: Path) -> list[str]:
    groups: dict[str, dict[str, None]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        next(fh)  # encoding line
        head = ""
        for line in fh:
            fields = line.rstrip("\n").split("|")
            if not line.startswith("("):
                head = fields[0].strip().lower()
                continue
            for syn in fields[1:]:
                mark = _MARK.search(syn)
                if mark and mark.group(1) != "similar term":
                    continue
                syn = _MARK.sub("", syn).strip().lower()
                if syn and syn != head and "|" not in syn:
                    groups.setdefault(head, {})[syn] = None
    return [f"{h}|{'|'.join(s)}" for h, s in sorted(groups.items()) if h and s]


def spin_words(words: list[str], dictionary: SpinnerDictionary, every: int, rng: random.Random) -> list[str]:
    """One spun copy of ``words``: longest match first; after a replacement the next
    ``every - 1`` words are kept (``every=1`` spins every word it can)."""
    max_len = max((len(k) for k in dictionary), default=1)
    out: list[str] = []
    i = 0
    free_from = 0
    while i < len(words):
        if i >= free_from:
            for n in range(min(max_len, len(words) - i), 0, -1):
                key = tuple(words[i:i + n])
                if key in dictionary:
                    out.extend(rng.choice(dictionary[key]).split())
                    i += n
                    free_from = i + every - 1
                    break
            else:
                out.append(words[i])
                i += 1
            continue
        out.append(words[i])
        i += 1
    return out
