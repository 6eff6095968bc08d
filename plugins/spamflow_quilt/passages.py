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
