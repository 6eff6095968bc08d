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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from xxhash import xxh3_64_intdigest

from spamflow_quilt.packed import pack
from spamflow_quilt.servers import NO_SERVER


def gram_hashes(words: Sequence[str], k: int) -> list[int]:
    """The distinct k-gram hashes of ``words``, sorted (grams_k(d) as a set)."""
    return sorted({xxh3_64_intdigest(" ".join(words[i:i + k]).encode("utf-8"))
                   for i in range(len(words) - k + 1)})


def batch_gram_hashes(words: pa.Array, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`gram_hashes` of every page of a list<string> array at once.

    Returns the grams of all pages, distinct and sorted within each page, and each page's
    offset into them (``offsets[i]:offsets[i+1]``).  The pages' texts are joined in Arrow
    and each gram is hashed as a slice of that buffer, the same bytes ``gram_hashes`` hashes.

    >>> grams, offsets = batch_gram_hashes(pa.array([["a", "b", "c"], None, ["x", "y"]]), 2)
    >>> offsets.tolist(), grams[0:2].tolist() == gram_hashes(["a", "b", "c"], 2)
    ([0, 2, 2, 3], True)
    """
    n_pages = len(words)
    n_words = pc.fill_null(pc.list_value_length(words), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    texts = pc.binary_join(pc.fill_null(words, pa.scalar([], words.type)), " ")
    text_offsets = np.frombuffer(texts.buffers()[1], np.int32, count=n_pages + 1, offset=texts.offset * 4)
    flat = pc.list_flatten(words)  # null pages contribute no words
    word_bytes = pc.binary_length(flat).to_numpy(zero_copy_only=False).astype(np.int64)
    page_of_word = np.repeat(np.arange(n_pages), n_words)
    first_word = np.cumsum(n_words) - n_words
    # where each word starts in its page's text: the bytes and spaces of the words before it
    step = np.cumsum(word_bytes + 1) - (word_bytes + 1)
    start = text_offsets[:-1][page_of_word] + step - np.r_[step, 0][first_word][page_of_word]
    n_grams = np.maximum(n_words - k + 1, 0)
    page_of_gram = np.repeat(np.arange(n_pages), n_grams)
    gram_index = (np.arange(n_grams.sum()) - np.repeat(np.cumsum(n_grams) - n_grams, n_grams)
                  + first_word[page_of_gram])  # index of each gram's first word
    begin = start[gram_index] if len(gram_index) else gram_index
    last = gram_index + (k - 1)
    end = (start[last] + word_bytes[last]) if len(gram_index) else gram_index
    text = texts.buffers()[2].to_pybytes() if len(gram_index) else b""
    grams = np.fromiter(map(xxh3_64_intdigest, map(text.__getitem__, map(slice, begin.tolist(), end.tolist()))),
                        np.uint64, count=len(begin))
    bounds = np.r_[0, np.cumsum(n_grams)].tolist()
    for lo, hi in zip(bounds, bounds[1:]):  # sorting page by page is ~20x faster than one lexsort
        if hi - lo > 1:
            grams[lo:hi].sort()
    if len(grams):
        distinct = np.r_[True, (grams[1:] != grams[:-1]) | (page_of_gram[1:] != page_of_gram[:-1])]
        grams, page_of_gram = grams[distinct], page_of_gram[distinct]
    offsets = np.r_[0, np.cumsum(np.bincount(page_of_gram, minlength=n_pages))]
    return grams, offsets


def shingle_line(doc_id: int, grams: Sequence[int] | np.ndarray, domain: str | None, ip: str | None) -> bytes:
    """One page as the MapReduce jobs read it: ``doc<TAB>domain<TAB>ip<TAB>packed grams``.

    The grams are packed (:mod:`spamflow_quilt.packed`), not written as decimal numbers:
    every job reads every gram of every page, and parsing text was most of their time.

    >>> shingle_line(7, [3, 1], "a.example", None)
    b'7\\ta.example\\t-\\t2:u8:03000000000000000100000000000000'
    """
    head = f"{doc_id}\t{domain or NO_SERVER}\t{ip or NO_SERVER}\t".encode()
    return head + pack(np.asarray(grams, np.uint64))


def write_shingles(pages: Path, out: Path, k: int, snapshot: str | None = None) -> dict[str, int]:
    """One :func:`shingle_line` per page, the input of the MapReduce jobs.  Pages with fewer
    than k words are written with no grams: they count as pages but can never be quilted."""
    counts = {"pages": 0, "pages_without_grams": 0, "grams": 0}
    table = ds.dataset(pages, format="parquet")
    columns = ["doc_id", "words", "domain", "ip"]
    where = None if snapshot is None else pc.field("snapshot") == snapshot
    with open(out, "wb") as fh:
        for batch in table.to_batches(columns=columns, filter=where, batch_size=2048):
            grams, offsets = batch_gram_hashes(batch.column("words"), k)
            sizes = np.diff(offsets)
            counts["pages"] += batch.num_rows
            counts["grams"] += int(sizes.sum())
            counts["pages_without_grams"] += int((sizes == 0).sum())
            docs, domains, ips = (batch.column(name).to_pylist() for name in ("doc_id", "domain", "ip"))
            bounds = offsets.tolist()
            fh.writelines(shingle_line(doc, grams[bounds[i]:bounds[i + 1]], domain, ip) + b"\n"
                          for i, (doc, domain, ip) in enumerate(zip(docs, domains, ips)))
    return counts
