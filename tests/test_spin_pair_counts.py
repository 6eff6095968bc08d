"""The pair job's reducer counts pairs with numpy (``PairCounts``): the same counts, alphas and
rests as the one-pair-at-a-time definition (``count_pairs``), whatever the batching."""

import random

import numpy as np
import pytest

from spamflow_spin.mr_candidate_pairs import PairCounts, count_pairs


def _posting_lists(seed: int, immutables: int = 120) -> list[str]:
    """Random posting lists ``doc n pos,...``: each doc has one size n, positions below n, some
    lists long (a popular immutable), docs up to 2^63 - 1 (the page table's 63-bit ids)."""
    rng = random.Random(seed)
    docs = [rng.choice([rng.randrange(1, 50), rng.randrange(1 << 62, 1 << 63)]) for _ in range(120)]
    size = {d: rng.randint(2, 40) for d in docs}
    lists = []
    for _ in range(immutables):
        members = rng.sample(sorted(set(docs)), rng.choice([2, 2, 3, 5, 8, 30, 80]))
        lists.append(",".join(f"{d} {size[d]} {rng.randrange(size[d])}" for d in members))
    return lists


def _as_dict(arrays: tuple[np.ndarray, ...]) -> dict[tuple[int, int], tuple[int, int, int]]:
    a, b, count, need, rest = (x.tolist() for x in arrays)
    assert len(set(zip(a, b))) == len(a)  # each pair once
    return {(x, y): (c, n, r) for x, y, c, n, r in zip(a, b, count, need, rest)}


@pytest.mark.parametrize("seed, t, k", [(1, 0.6, 3), (2, 0.5, 1), (3, 0.8, 2), (4, 1.0, 1), (5, 0.3, 1)])
def test_pair_counts_equal_the_one_pair_at_a_time_definition(seed, t, k, monkeypatch):
    lists = _posting_lists(seed)
    expected: dict[tuple[int, int], tuple[int, int, int]] = {}
    counted = sum(count_pairs(entries, t, k, expected) for entries in lists)
    assert counted > len(expected) > 0
    whole = PairCounts(t, k)
    whole.add(lists)
    assert _as_dict(whole.take()) == expected and whole.counted == counted
    # small batches and chunks, and counts taken part way: added up, the same
    monkeypatch.setattr(PairCounts, "LISTS", 7)
    monkeypatch.setattr(PairCounts, "CHUNK", 5)
    parts = PairCounts(t, k)
    total: dict[tuple[int, int], list[int]] = {}
    for i in range(0, len(lists), 40):
        parts.add(lists[i:i + 40])
        if parts.pairs_at_least(3):
            for pair, (c, n, r) in _as_dict(parts.take()).items():
                held = total.setdefault(pair, [0, n, r])
                held[0] += c
                held[2] = min(held[2], r)
    for pair, (c, n, r) in _as_dict(parts.take()).items():
        held = total.setdefault(pair, [0, n, r])
        held[0] += c
        held[2] = min(held[2], r)
    assert {pair: tuple(v) for pair, v in total.items()} == expected and parts.counted == counted


def test_pair_counts_name_a_bad_posting_list():
    counts = PairCounts(0.6, 1)
    counts.add(["1 5 0,2 5 x"])
    with pytest.raises(ValueError, match="posting lists"):
        counts.take()
