"""A page's article text (DSpin's, and the mundane-page rules'): its words without the words
of its links.  Core (spamflow/mundane.py uses it; spin and HSS both do).

DSpin excludes links "as links can vary from one spun version to another" (section IV-B).
The page table keeps each link's anchor text inside ``words``; we cut every anchor's words
out where they occur, matching anchors in document order.

>>> article_words(["read", "my", "blog", "about", "cats", "home"], ["my blog", "Home"])
(['read', 'about', 'cats'], 0)
>>> article_words(["a", "b"], ["zzz"])  # an anchor not found in the words is counted
(['a', 'b'], 1)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from spamflow.words import words as split_words


def find_phrase(words: Sequence[str], part: Sequence[str], start: int) -> int:
    """The first ``i >= start`` where ``part`` occurs in ``words``, or -1; the candidates found
    by ``index`` (a C loop: the Python loop over every word was ~5 % of spin's CPU)."""
    first, n = part[0], len(part)
    stop = len(words) - n + 1
    i = start
    while i < stop:
        try:
            i = words.index(first, i, stop)
        except ValueError:
            return -1
        if list(words[i:i + n]) == list(part):
            return i
        i += 1
    return -1


def article_words(words: Sequence[str], anchors: Iterable[str]) -> tuple[list[str], int]:
    """(the words with every anchor's words removed, anchors not found)."""
    out: list[str] = []
    pos = 0
    missing = 0
    for anchor in anchors:
        part = split_words(anchor)
        if not part:
            continue
        at = find_phrase(words, part, pos)
        if at < 0:
            missing += 1
            continue
        out.extend(words[pos:at])
        pos = at + len(part)
    out.extend(words[pos:])
    return out, missing
