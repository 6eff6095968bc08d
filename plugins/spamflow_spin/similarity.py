"""Jaccard coefficient of two immutable sets (DSpin equation 4) and the 4-gram shingle
baseline (equation 2), for evaluation.

>>> jaccard({"a", "b", "c"}, {"b", "c", "d"})
0.5
>>> shingle_jaccard("a b c d e f".split(), "a b c d e g".split(), 4)
0.5
"""

from __future__ import annotations

from collections.abc import Sequence, Set


def jaccard(a: Set[str], b: Set[str]) -> float:
    """|A ∩ B| / |A ∪ B|; 0.0 for two empty sets."""
    if not a and not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def shingles(words: Sequence[str], n: int = 4) -> set[str]:
    """The set of n-word shingles, DSpin's shingling baseline (n = 4)."""
    return {" ".join(words[i:i + n]) for i in range(len(words) - n + 1)}


def shingle_jaccard(a: Sequence[str], b: Sequence[str], n: int = 4) -> float:
    return jaccard(shingles(a, n), shingles(b, n))
