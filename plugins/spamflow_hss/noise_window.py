"""The n-grams HSS fingerprints on a page: every n-gram of its HTML noise (window = 0, the
paper's preprocessing and the default), or only the first and the last ``window`` of them
(all of them when the page has at most 2 * window).

Why the option: a template lives at both ends of a page (head, navigation, footer) and the
page's own content block sits between them.  Sim_b estimates the Jaccard resemblance of the
n-gram sets (docs/hss.md), so a page whose content block is huge and unlike its siblings' (a
780 KB statistics table on data.gov.uk: 32,698 distinct n-grams against ~4,000 for the other
pages of its CKAN template) matches them on at most 9 of 128 dimensions although it holds
their whole template; with window = 4000 it joins them.  Why not the default: on modern
pages the two ends are also where third-party boilerplate sits (tag managers, consent and
ad scripts), and the window joins unrelated news sites by it (docs/hss.md has the figures).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from spamflow_hss.ngram_hash import ngram_hashes

U64 = npt.NDArray[np.uint64]


def window_ngram_hashes(noise: str, n: int, window: int) -> U64:
    """preHash of the first ``window`` and the last ``window`` overlapping n-grams of
    ``noise`` (of all of them when there are at most 2 * window, or when window is 0)."""
    if window < 0:
        raise ValueError(f"window must be 0 (all n-grams) or positive, got {window}")
    if window == 0 or ngram_count(noise, n) <= 2 * window:
        return ngram_hashes(noise, n)
    span = window + n - 1  # the characters of `window` consecutive n-grams
    return np.concatenate([ngram_hashes(noise[:span], n), ngram_hashes(noise[-span:], n)])


def ngram_count(noise: str, n: int) -> int:
    """How many overlapping n-grams the whole noise has (the fingerprint table's ``ngrams``)."""
    return max(len(noise) - n + 1, 0)
