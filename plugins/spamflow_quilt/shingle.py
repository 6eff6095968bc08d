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

import json
from collections.abc import Sequence
from pathlib import Path

import pyarrow.dataset as ds
from xxhash import xxh3_64_intdigest


def gram_hashes(words: Sequence[str], k: int) -> list[int]:
    """The distinct k-gram hashes of ``words``, sorted (grams_k(d) as a set)."""
    return sorted({xxh3_64_intdigest(" ".join(words[i:i + k]).encode("utf-8"))
                   for i in range(len(words) - k + 1)})


def write_shingles(pages: Path, out: Path, k: int, snapshot: str | None = None) -> dict[str, int]:
    """One JSON line per page, the input of the MapReduce jobs:
    ``{"d": doc_id, "g": [gram hashes], "dom": domain, "ip": ip}``.  Pages with fewer than
    k words are written with no grams: they count as pages but can never be quilted."""
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
                fh.write(json.dumps({"d": row["doc_id"], "g": grams, "dom": row["domain"], "ip": row["ip"]},
                                    separators=(",", ":")) + "\n")
    return counts
