"""The suite compares floats that went through BLAS, threads or another block size with a
stated tolerance, never bit for bit: OpenBLAS sums a matrix product in an order that depends
on its shape and kernel, so such a test passes on one machine and fails on another."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

from conftest import assert_close

TESTS = Path(__file__).resolve().parent

MODEL_OUTPUTS = re.compile(r"predict_proba|\.scores\(|candidate_scores|model_auc_|weights_|evidence")
BIT_EQUAL = re.compile(r"array_equal\(|\.equals\(|atol=0\b")


def _bit_equal_model_outputs() -> list[str]:
    found = []
    for path in sorted(TESTS.glob("test_*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            statement = " ".join(lines[i:i + 2])  # a call may wrap onto the next line
            if BIT_EQUAL.search(line) and MODEL_OUTPUTS.search(statement):
                found.append(f"{path.name}:{i + 1}: {line.strip()}")
    return found


def test_no_test_compares_model_outputs_bit_for_bit():
    assert _bit_equal_model_outputs() == [], "compare with a stated tolerance (assert_allclose, assert_close)"


def test_assert_close_allows_the_stated_tolerance_and_no_more():
    a = {"score": 0.1 + 0.2, "features": [["x", 1.0], ["y", float("nan")]], "label": "spam"}
    assert_close(a, {"score": 0.3, "features": [["x", 1.0], ["y", float("nan")]], "label": "spam"}, 1e-12)
    for other in ({"score": 0.3 + 1e-9, "features": [["x", 1.0], ["y", float("nan")]], "label": "spam"},
                  {"score": 0.3, "features": [["x", 1.0]], "label": "spam"},
                  {"score": 0.3, "features": [["x", 1.0], ["y", float("nan")]], "label": "ham"}):
        with pytest.raises(AssertionError):
            assert_close(a, other, 1e-12)
    t = pa.table({"host": ["a", "b"], "f": [1.0, 2.0]})
    assert_close(t, pa.table({"host": ["a", "b"], "f": [1.0 + 1e-15, 2.0]}), 1e-12)
    with pytest.raises(AssertionError):
        assert_close(t, pa.table({"host": ["a", "c"], "f": [1.0, 2.0]}), 1e-12)
