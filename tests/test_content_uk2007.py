"""Our reading of the released WEBSPAM-UK2007 content features, checked on all 3,849 released
training rows: identities that our definitions imply must hold in the public data.

* independent trigram likelihood ≤ trigram entropy, equal exactly when no trigram repeats,
  and then both are ln(words − 2) (so the likelihood is normalised by the page's trigrams);
* recall × k is a whole number of popular terms, and precision grows with k.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from spamflow.parse.pages import PAGE_SCHEMA
from spamflow_content.measures import MEASURES, PopularTerms, page_measures

from content_pages import page_row

ARFF = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "webspam-uk2007" / "features-train-only" / \
    "content-train.arff.gz"
pytestmark = pytest.mark.skipif(not ARFF.exists(), reason=f"{ARFF} is absent (real data in ../shared/data)")

WORDS, ENTROPY, LIKELIHOOD = MEASURES.index("number_of_words"), MEASURES.index("trigram_entropy"), \
    MEASURES.index("independent_trigram_likelihood")


def _released() -> np.ndarray:
    rows = []
    with gzip.open(ARFF, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip() and not line.startswith("@"):
                rows.append([float(x) for x in line.strip().split(",")[:-1]])
    return np.array(rows)


def _check(block: np.ndarray) -> None:
    n, h, lh = block[:, WORDS], block[:, ENTROPY], block[:, LIKELIHOOD]
    real = n >= 3
    assert np.all(lh[real] <= h[real] + 1e-6)
    equal = real & (np.abs(h - lh) < 1e-6)
    assert equal.sum() >= 10 and (real & ~equal).sum() >= 10  # both kinds of page are there
    assert np.allclose(h[equal], np.log(n[equal] - 2), atol=1e-5)
    for name in ("corpus", "query"):
        for k in (100, 200, 500, 1000):
            terms = block[:, MEASURES.index(f"{name}_recall_{k}")] * k
            assert np.allclose(terms, np.round(terms), atol=1e-3 * k / 100 + 1e-6), (name, k)
        precision = block[:, [MEASURES.index(f"{name}_precision_{k}") for k in (100, 200, 500, 1000)]]
        assert np.all(np.diff(precision, axis=1) >= -1e-6)


def test_released_home_page_and_max_pagerank_blocks_fit_our_definitions():
    released = _released()
    assert released.shape == (3849, 96)
    _check(released[:, 0:24])   # HST
    _check(released[:, 24:48])  # HMG


def test_our_measures_fit_the_same_identities():
    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(300)]
    rows = [page_row(f"http://h{i}.example/", [vocab[j] for j in rng.integers(0, 4 if i % 2 else 40 + 5 * i, size=3 + 5 * i)])
            for i in range(50)]
    ranked = vocab[::-1] + [f"x{i}" for i in range(800)]
    got = page_measures(pa.Table.from_pylist(rows, schema=PAGE_SCHEMA), PopularTerms(ranked, vocab + ranked))
    _check(np.column_stack([got[m] for m in MEASURES]))
