"""An article spinner of the kind DSpin (Zhang et al., NDSS 2014) studies.

Spinners walk the text left to right and, at each position, replace the longest word
or phrase found in their synonym dictionary by one of its synonyms chosen at random.
Words the dictionary does not know ("immutables") survive in every copy; that shared
skeleton is exactly what DSpin's immutable-Jaccard looks for.
"""

from __future__ import annotations

import random
import re

WORD_RE = re.compile(r"[A-Za-z]+(?:['-][A-Za-z]+)*")


def parse_dictionary(text: str) -> dict[tuple[str, ...], list[str]]:
    """``head|syn1|syn2`` lines -> {head words (lower case): [synonyms]}."""
    out: dict[tuple[str, ...], list[str]] = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) >= 2 and parts[0]:
            out[tuple(parts[0].lower().split())] = [p for p in parts[1:] if p]
    return out


def _match_case(src: str, repl: str) -> str:
    return repl[:1].upper() + repl[1:] if src[:1].isupper() else repl


def spin(text: str, dictionary: dict[tuple[str, ...], list[str]], rng: random.Random) -> str:
    """Return one spun copy of ``text``; whitespace and punctuation are kept as they are.

    A phrase only matches across words separated by single spaces (no punctuation between).
    """
    max_len = max((len(k) for k in dictionary), default=1)
    words = list(WORD_RE.finditer(text))
    out: list[str] = []
    pos = 0  # index into text already emitted
    i = 0
    while i < len(words):
        hit = None
        for n in range(min(max_len, len(words) - i), 0, -1):
            span = words[i : i + n]
            if any(text[a.end() : b.start()] != " " for a, b in zip(span, span[1:])):
                continue
            key = tuple(w.group(0).lower() for w in span)
            if key in dictionary:
                hit = (n, key)
                break
        if hit is None:
            i += 1
            continue
        n, key = hit
        first, last = words[i], words[i + n - 1]
        out.append(text[pos : first.start()])
        out.append(_match_case(first.group(0), rng.choice(dictionary[key])))
        pos = last.end()
        i += n
    out.append(text[pos:])
    return "".join(out)
