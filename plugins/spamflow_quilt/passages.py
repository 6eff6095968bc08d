"""Which words of a quilted page a source page shares: the word k-grams the two have in common
(Najork's shared grams), mapped back to word positions so the report can highlight them."""

from __future__ import annotations

from collections.abc import Sequence


def grams(words: Sequence[str], k: int) -> set[tuple[str, ...]]:
    """The distinct word k-grams of ``words``.

    >>> sorted(grams(["a", "b", "c", "a", "b"], 2))
    [('a', 'b'), ('b', 'c'), ('c', 'a')]
    """
    return {tuple(words[i:i + k]) for i in range(len(words) - k + 1)}


def covered(words: Sequence[str], shared: set[tuple[str, ...]], k: int) -> list[bool]:
    """For each word, whether some k-gram in ``shared`` covers it.

    >>> covered(["x", "a", "b", "y"], {("a", "b")}, 2)
    [False, True, True, False]
    """
    mark = [False] * len(words)
    for i in range(len(words) - k + 1):
        if tuple(words[i:i + k]) in shared:
            for j in range(i, i + k):
                mark[j] = True
    return mark


def source_marks(page: Sequence[str], sources: Sequence[Sequence[str]], k: int) -> tuple[list[int], list[list[bool]]]:
    """Highlight a quilt beside its sources.

    Returns, for each word of ``page``, the index of the first source (in the given, greedy
    order) sharing a k-gram that covers it, or -1; and for each source, which of its words are
    covered by a k-gram it shares with ``page``.

    >>> source_marks(["p", "a", "b", "c", "d"], [["a", "b", "z"], ["c", "d"]], 2)
    ([-1, 0, 0, 1, 1], [[True, True, False], [True, True]])
    """
    page_grams = grams(page, k)
    owner = [-1] * len(page)
    in_sources = []
    for index, source in enumerate(sources):
        shared = page_grams & grams(source, k)
        for j, hit in enumerate(covered(page, shared, k)):
            if hit and owner[j] < 0:
                owner[j] = index
        in_sources.append(covered(source, shared, k))
    return owner, in_sources


def runs(words: Sequence[str], marks: Sequence[int]) -> list[tuple[int, str]]:
    """Consecutive words with the same mark joined: ``[(mark, text), ...]``.

    >>> runs(["a", "b", "c"], [-1, 0, 0])
    [(-1, 'a'), (0, 'b c')]
    """
    out: list[tuple[int, str]] = []
    for word, mark in zip(words, marks):
        if out and out[-1][0] == mark:
            out[-1] = (mark, out[-1][1] + " " + word)
        else:
            out.append((mark, word))
    return out


CUT = -2
"""The mark of a run that stands for words left out (its text is how many)."""


def elide(marked: Sequence[tuple[int, str]], context: int) -> list[tuple[int, str]]:
    """``runs`` with every unmarked run longer than ``2 * context`` words cut to its first and
    last ``context`` words (only its last ``context`` at the start of the text, only its first
    at the end), the words left out as a ``(CUT, "<count>")`` run: a source beside a quilt
    shows what it shares with the page and a little around it, not all of its text.

    >>> elide([(-1, "a b c d e f"), (0, "x y"), (-1, "g h i j k l m"), (1, "z"), (-1, "n o p")], 1)
    [(-2, '5'), (-1, 'f'), (0, 'x y'), (-1, 'g'), (-2, '5'), (-1, 'm'), (1, 'z'), (-1, 'n'), (-2, '2')]
    >>> elide([(-1, "a b c")], 1)
    [(-1, 'a b c')]
    """
    out: list[tuple[int, str]] = []
    last = len(marked) - 1
    for i, (mark, text) in enumerate(marked):
        words = text.split(" ")
        head = 0 if i == 0 else context
        tail = 0 if i == last else context
        if mark >= 0 or len(words) <= head + tail + context or (i == 0 and i == last):
            out.append((mark, text))
            continue
        if head:
            out.append((mark, " ".join(words[:head])))
        out.append((CUT, str(len(words) - head - tail)))
        if tail:
            out.append((mark, " ".join(words[-tail:])))
    return out
