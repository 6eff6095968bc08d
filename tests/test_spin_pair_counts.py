"""The pair job's reducer counts pairs with numpy (``PairCounts``): the same counts, alphas and
rests as the one-pair-at-a-time definition (``count_pairs``), whatever the batching, with the
job's 63-bit doc ids (lexsort) and with small ones (the direct engine's ranks: one packed key)."""

import random

import numpy as np
import pytest

from spamflow_spin import mr_candidate_pairs
from spamflow_spin.mr_candidate_pairs import PairCounts, add_up, count_pairs, packed_key, unpack_key


def _posting_lists(seed: int, immutables: int = 120, big: bool = True) -> list[str]:
    """Random posting lists ``doc n pos,...``: each doc has one size n, positions below n, some
    lists long (a popular immutable), docs up to 2^63 - 1 (the page table's 63-bit ids) or, not
    ``big``, below 200."""
    rng = random.Random(seed)
    docs = [rng.choice([rng.randrange(1, 50), rng.randrange(1 << 62, 1 << 63) if big else rng.randrange(50, 200)])
            for _ in range(120)]
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


@pytest.mark.parametrize("big", [True, False])
@pytest.mark.parametrize("seed, t, k", [(1, 0.6, 3), (2, 0.5, 1), (3, 0.8, 2), (4, 1.0, 1), (5, 0.3, 1)])
def test_pair_counts_equal_the_one_pair_at_a_time_definition(seed, t, k, big, monkeypatch):
    lists = _posting_lists(seed, big=big)
    expected: dict[tuple[int, int], tuple[int, int, int]] = {}
    counted = sum(count_pairs(entries, t, k, expected) for entries in lists)
    assert counted > len(expected) > 0
    whole = PairCounts(t, k)
    whole.add(lists)
    assert _as_dict(whole.take()) == expected and whole.counted == counted
    # small batches and chunks, and counts taken part way: added up, the same
    monkeypatch.setattr(PairCounts, "LISTS", 7)
    monkeypatch.setattr(PairCounts, "CHUNK", 5)
    monkeypatch.setattr(PairCounts, "TABLE", 30)  # sizes above it: np.unique's lookup
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


def test_packed_key_sorts_as_lexsort():
    rng = np.random.default_rng(7)
    for _ in range(50):
        columns = [rng.integers(0, 1 << int(rng.integers(0, 16)), 300) for _ in range(int(rng.integers(1, 5)))]
        key, widths = packed_key(*columns)
        assert widths == [int(c.max()).bit_length() for c in columns]
        order = np.lexsort(columns[::-1])
        # the same order up to equal keys, which are equal rows
        assert np.array_equal(np.stack(columns)[:, np.argsort(key, kind="stable")], np.stack(columns)[:, order])
        assert all(np.array_equal(a, b) for a, b in zip(unpack_key(key, widths), columns))
    assert packed_key(np.array([1 << 40]), np.array([1 << 30])) is None  # 41 + 31 bits
    assert packed_key(np.array([-1]), np.array([1])) is None
    assert packed_key(np.array([1 << 40]), np.array([1 << 20]))[1] == [41, 21]


def _random_postings(rng, docs_below):
    """Posting lists as arrays, in no order: each doc one size, on a list at most once."""
    docs = np.unique(rng.integers(0, docs_below, 400))
    size = {d: 2 + d * 7919 % 38 for d in docs.tolist()}  # the same in every batch
    group, doc = [], []
    for g in range(60):
        members = rng.choice(docs, min(len(docs), int(rng.choice([2, 3, 5, 30, 100]))), replace=False)
        group += [g] * len(members)
        doc += members.tolist()
    n = np.array([size[d] for d in doc])
    order = rng.permutation(len(doc))
    return (np.array(group)[order], np.array(doc)[order], n[order],
            (rng.random(len(doc)) * n).astype(np.int64)[order])


@pytest.mark.parametrize("seed", range(8))
def test_count_postings_packed_equals_lexsorted(seed, monkeypatch):
    """The one-key sort (small doc ranks) counts exactly what the four-column lexsort counts,
    and ``add_up`` over a packed key adds up as over a lexsort."""
    rng = np.random.default_rng(seed)
    batches = [_random_postings(rng, int(rng.choice([5, 300, 1 << 20]))) for _ in range(4)]
    t, k = float(rng.choice([0.3, 0.5, 0.6, 0.8])), int(rng.integers(1, 4))

    def counted(packed):
        if not packed:
            monkeypatch.setattr(mr_candidate_pairs, "packed_key", lambda *columns: None)
        counts = PairCounts(t, k)
        for batch in batches:
            counts.count_postings(*batch)
        out = counts.take(), counts.counted
        monkeypatch.undo()
        return out

    (fast, fast_counted), (slow, slow_counted) = counted(True), counted(False)
    assert fast_counted == slow_counted > 0
    assert all(np.array_equal(a, b) for a, b in zip(fast, slow))


def test_add_up_packed_equals_lexsorted_and_the_sums(monkeypatch):
    """Rows of pairs in any order added up: over a packed (doc_a, doc_b) key as over a lexsort,
    and as summed pair by pair in Python."""
    rng = np.random.default_rng(11)
    a, b = rng.integers(0, 40, 5000), rng.integers(0, 40, 5000)
    count, rest = rng.integers(1, 4, 5000), rng.integers(0, 30, 5000)
    need = (a * 7 + b) % 13  # one alpha per pair, as from its two sizes
    expected: dict[tuple[int, int], list[int]] = {}
    for x, y, c, n, r in zip(*(v.tolist() for v in (a, b, count, need, rest))):
        held = expected.setdefault((x, y), [0, n, r])
        held[0] += c
        held[2] = min(held[2], r)
    fast = add_up(a, b, count, need, rest)
    monkeypatch.setattr(mr_candidate_pairs, "packed_key", lambda *columns: None)
    slow = add_up(a, b, count, need, rest)
    assert all(np.array_equal(x, y) for x, y in zip(fast, slow))
    assert {(x, y): [c, n, r] for x, y, c, n, r in zip(*(v.tolist() for v in fast))} == expected
    assert list(zip(fast[0].tolist(), fast[1].tolist())) == sorted(expected)
