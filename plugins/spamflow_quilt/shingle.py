"""Shingling: a page's words to the set of its k-gram hashes.

A k-gram is k consecutive words joined by one space (the paper's ``HashPatches``), hashed
with xxh3-64.  At 10^9 distinct grams the expected number of colliding pairs is
n²/2^65 ≈ 0.03 (docs/quilt.md).

>>> gram_hashes(["a", "b", "c", "a", "b"], 2) == sorted({xxh3_64_intdigest(b"a b"), xxh3_64_intdigest(b"b c"),
...                                                   xxh3_64_intdigest(b"c a")})
True
>>> gram_hashes(["too", "short"], 3)
[]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow.dataset as ds
from xxhash import xxh3_64_intdigest


def gram_hashes(words: Sequence[str], k: int) -> list[int]:
    """The distinct k-gram hashes of ``words``, sorted (grams_k(d) as a set)."""
    return sorted({xxh3_64_intdigest(" ".join(words[i:i + k]).encode("utf-8"))
                   for i in range(len(words) - k + 1)})


NO_SERVER = "-"
"""Stands for a missing domain or IP in a shingle line."""


def shingle_line(doc_id: int, grams: Sequence[int], domain: str | None, ip: str | None) -> str:
    """One page as the MapReduce jobs read it: ``doc<TAB>domain<TAB>ip<TAB>gram gram ...``.

    Plain text, not JSON: every job reads every gram of every page, and parsing JSON was
    half of their time (benchmarks/README.md).

    >>> shingle_line(7, [3, 1], "a.example", None)
    '7\\ta.example\\t-\\t3 1'
    """
    return f"{doc_id}\t{domain or NO_SERVER}\t{ip or NO_SERVER}\t{' '.join(map(str, grams))}"


def write_shingles(pages: Path, out: Path, k: int, snapshot: str | None = None) -> dict[str, int]:
    """One :func:`shingle_line` per page, the input of the MapReduce jobs.  Pages with fewer
    than k words are written with no grams: they count as pages but can never be quilted."""
    counts = {"pages": 0, "pages_without_grams": 0, "grams": 0}
    table = ds.dataset(pages, format="parquet")
    columns = ["doc_id", "words", "domain", "ip", "snapshot"]
    with open(out, "w", encoding="utf-8") as fh:
        for batch in table.to_batches(columns=columns, batch_size=2048):
            for row in batch.to_pylist():
                if snapshot is not None and row["snapshot"] != snapshot:
                    continue
                grams = gram_hashes(row["words"] or [], k)
                counts["pages"] += 1
                counts["grams"] += len(grams)
                counts["pages_without_grams"] += not grams
                fh.write(shingle_line(row["doc_id"], grams, row["domain"], row["ip"]) + "\n")
    return counts
