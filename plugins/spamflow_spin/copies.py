"""Copies of one article: pages with the same immutable set are one group before pair generation.

A spinner changes only the mutables, so the copies of a spun article usually keep every
immutable: their immutable Jaccard is exactly 1.0, and any other page has the same Jaccard with
each of them.  Sending one page per group to the candidate jobs costs one page, not the
k(k - 1)/2 pairs of a text on k hosts; the pairs are expanded back to pages afterwards, so the
verifier still sees every pair of pages the jobs would have found.

>>> groups = group_same_immutables({7: ["a", "b"], 3: ["b", "a"], 5: ["a", "c"]})
>>> groups
{3: [3, 7], 5: [5]}
>>> within_group_pairs(groups)
[(3, 7)]
>>> between_group_pairs(groups, 3, 5)
[(3, 5), (5, 7)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations


def group_same_immutables(immutables: Mapping[int, Sequence[str]]) -> dict[int, list[int]]:
    """Pages with equal immutable sets (order does not matter: Jaccard is over sets), as
    {representative: members}; the representative is the smallest doc id, members sorted."""
    by_set: dict[frozenset[str], list[int]] = {}
    for doc, items in immutables.items():
        by_set.setdefault(frozenset(items), []).append(doc)
    groups = (sorted(members) for members in by_set.values())
    return {members[0]: members for members in sorted(groups)}


def within_group_pairs(groups: Mapping[int, Sequence[int]]) -> list[tuple[int, int]]:
    """Every pair of pages inside one group (immutable Jaccard 1.0), (a, b) with a < b."""
    return [pair for members in groups.values() for pair in combinations(members, 2)]


def between_group_pairs(groups: Mapping[int, Sequence[int]], rep_a: int, rep_b: int) -> list[tuple[int, int]]:
    """The page pairs behind a candidate pair of representatives, (a, b) with a < b, sorted."""
    return sorted((min(a, b), max(a, b)) for a in groups[rep_a] for b in groups[rep_b])
