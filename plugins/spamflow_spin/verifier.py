"""DSpin's mutable verifier (section IV-C): do two pages' mutables agree up to synonyms?

The mutables of each page are a multiset of dictionary entries.  Overlap is counted in
three passes, each over what the previous passes left unmatched:

1. the entries the two pages have in common (``min`` of the two counts);
2. first-level synonyms: an entry of one page matches a remaining entry of the other that
   is its synonym, from page A to page B, then from B to A;
3. second-level synonyms (synonyms of synonyms), the same way.

Every match pairs one entry of A with one of B.  The score is the overlap over the union,
``overlap / (|A| + |B| - overlap)``, which is the multiset Jaccard when only pass 1 matches.
DSpin keeps a pair when the score is at least 70 %.  Pure (the synonym graph only), so the
MapReduce verification job runs this very function.

>>> from spamflow_spin.dictionary import SynonymDictionary
>>> d = SynonymDictionary()
>>> d.add_group("big", ["large", "huge"]); d.add_group("fast", ["quick"])
>>> mutable_overlap(["big", "fast"], ["big", "quick"], d)   # 1 shared + 1 first-level
1.0
>>> mutable_overlap(["large", "fast"], ["huge", "slow"], d)  # large-big-huge: second level; 1 / (2 + 2 - 1)
0.3333333333333333
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from spamflow_spin.synonyms import SynonymLookup


def _match(left: dict[str, int], right: dict[str, int], related: Callable[[str], list[str]]) -> int:
    """Pair each remaining entry of ``left`` with a related remaining entry of ``right``
    (in sorted order, so the result does not depend on hashing); both are decremented
    (entries may stay with a count of 0).  ``related``: an entry's related entries, sorted.
    Only the entries left with a count are sorted (after pass 1 most are 0, and sorting every
    entry four times a pair was a third of the verifier's time); only ``left[entry]`` of the
    entry at hand changes in ``left``, so the others' counts are those seen here."""
    matched = 0
    for entry in sorted([entry for entry, count in left.items() if count]):
        count = left[entry]
        partners = related(entry)
        for _ in range(count):
            partner = next((s for s in partners if right.get(s, 0) > 0), None)
            if partner is None:
                break
            right[partner] -= 1
            left[entry] -= 1
            matched += 1
    return matched


def overlap_levels(mutables_a: Sequence[str], mutables_b: Sequence[str],
                   dictionary: SynonymLookup) -> tuple[int, int, int]:
    """Matches found by pass 1 (shared), 2 (first-level), 3 (second-level)."""
    a, b = Counter(mutables_a), Counter(mutables_b)
    shared = 0
    for entry, n in a.items():
        m = b.get(entry)
        if m:
            both = n if n < m else m
            shared += both
            a[entry] = n - both
            b[entry] = m - both
    def first_level(entry: str) -> list[str]:
        return dictionary.sorted_related(entry, False)

    def second_level(entry: str) -> list[str]:
        return dictionary.sorted_related(entry, True)

    first = _match(a, b, first_level) + _match(b, a, first_level)
    second = _match(a, b, second_level) + _match(b, a, second_level)
    return shared, first, second


def mutable_overlap(mutables_a: Sequence[str], mutables_b: Sequence[str], dictionary: SynonymLookup) -> float:
    """The verifier's score in [0, 1]; 0.0 when neither page has a mutable."""
    overlap = sum(overlap_levels(mutables_a, mutables_b, dictionary))
    union = len(mutables_a) + len(mutables_b) - overlap
    return overlap / union if union else 0.0


def spun_pairs(scored: Iterable[tuple[int, int, float, float]], threshold: float,
               counts: Counter[str]) -> list[dict[str, Any]]:
    """The pair records of the scored pairs ``(doc_a, doc_b, immutable Jaccard, mutable
    overlap)`` whose overlap reaches ``threshold``; the others counted in ``counts`` as
    ``pairs_rejected_by_verifier``, the kept ones as ``spun_pairs`` (both engines of the stage)."""
    out = []
    for a, b, score, overlap in scored:
        if overlap < threshold:
            counts["pairs_rejected_by_verifier"] += 1
            continue
        out.append({"doc_a": a, "doc_b": b, "immutable_jaccard": score, "mutable_overlap": overlap, "kind": "spun"})
    counts["spun_pairs"] = len(out)
    return out
