"""The in-process content stage's spill between its passes (``spill.py``) and the per-batch
(document, term) pairs both passes count from (``term_counts.TermPairs``), against the
tables written and a plain count of the occurrences."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

from spamflow_content.batch_words import counted_sorted
from spamflow_content.spill import Spill
from spamflow_content.term_counts import TermPairs


def test_spill_gives_back_each_batch_of_each_kind_in_order(tmp_path):
    rng = np.random.default_rng(3)
    written = []
    spill = Spill(tmp_path)
    for i in range(7):
        n = 0 if i == 4 else int(rng.integers(1, 50))  # an empty batch among them
        tables = {"pairs": pa.table({"doc": pa.array(rng.integers(0, 9, n), pa.int32())}),
                  "terms": pa.table({"term": pa.array([f"w{i}-{j}" for j in range(n // 2)], pa.string())}),
                  "pages": pa.table({"ids": pa.array([[j, j + 1] for j in range(n)], pa.list_(pa.int32()))})}
        tables["pages"] = pa.concat_tables([tables["pages"].slice(0, n // 3), tables["pages"].slice(n // 3)])  # chunked
        spill.write(**tables)
        written.append(tables)
    read = list(spill.read())
    assert len(read) == len(written)
    for got, want in zip(read, written):
        assert sorted(got) == sorted(want)
        for kind, table in want.items():
            assert pa.Table.from_batches([got[kind]]).equals(table.combine_chunks())
    assert [b["terms"].num_rows for b in spill.read()] == [t["terms"].num_rows for t in written]  # read again


def test_spill_refuses_a_batch_with_other_kinds(tmp_path):
    spill = Spill(tmp_path)
    spill.write(a=pa.table({"x": [1]}), b=pa.table({"y": [2]}))
    with pytest.raises(ValueError, match="kinds"):
        spill.write(a=pa.table({"x": [1]}))
    spill.close()


def test_counted_sorted_is_np_unique_with_counts():
    rng = np.random.default_rng(5)
    for values in (rng.integers(-20, 20, 500), np.zeros(0, np.int64), np.array([4]), rng.integers(0, 2**45, 200)):
        keys, counts = counted_sorted(values.astype(np.int64))
        want_keys, want_counts = np.unique(values, return_counts=True)
        assert keys.tolist() == want_keys.tolist() and counts.tolist() == want_counts.tolist()


@pytest.mark.parametrize("seed", range(3))
def test_term_pairs_are_a_plain_count_of_the_occurrences(seed):
    rng = np.random.default_rng(seed)
    names = pa.array([f"t{i}" for i in range(30)], pa.string())
    docs, terms = rng.integers(0, 12, 400), rng.integers(0, 30, 400)
    pairs = TermPairs.of(docs, terms, names)
    expected = Counter(zip(docs.tolist(), terms.tolist()))
    assert list(zip(pairs.docs.tolist(), pairs.terms.tolist())) == sorted(expected)
    assert pairs.counts.tolist() == [expected[k] for k in sorted(expected)]
    assert pairs.lengths(12).tolist() == np.bincount(docs, minlength=12).astype(float).tolist()

