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

import multiprocessing
import shutil
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from xxhash import xxh3_64_intdigest

from spamflow_quilt.mr_gram_df import POPULAR
from spamflow_quilt.packed import pack
from spamflow_quilt.servers import NO_SERVER

MAX_ORDINAL = int(POPULAR)
"""Page ordinals are 32-bit; the largest value marks a gram in more than m pages (job (a))."""


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


def shingle_line(ordinal: int, doc_id: int, grams: Sequence[int] | np.ndarray, domain: str | None,
                 ip: str | None) -> bytes:
    """One page as the MapReduce jobs read it: ``ordinal<TAB>doc<TAB>domain<TAB>ip<TAB>packed grams``.

    The ordinal numbers the pages of one shingle file (distinct, below 2³² − 1): job (a)
    shuffles a row per (gram, page), and a 32-bit ordinal makes it 12 bytes instead of 16.
    The grams are packed (:mod:`spamflow_quilt.packed`), not written as decimal numbers:
    every job reads every gram of every page, and parsing text was most of their time.

    >>> shingle_line(0, 7, [3, 1], "a.example", None)
    b'0\\t7\\ta.example\\t-\\t2:u8:03000000000000000100000000000000'
    """
    if not 0 <= ordinal < MAX_ORDINAL:
        raise ValueError(f"page ordinal {ordinal} is out of range: a shingle file holds at most "
                         f"{MAX_ORDINAL} pages; split the snapshot")
    head = f"{ordinal}\t{doc_id}\t{domain or NO_SERVER}\t{ip or NO_SERVER}\t".encode()
    return head + pack(np.asarray(grams, np.uint64))


def write_shingles(pages: Path, out: Path, k: int, snapshot: str | None = None, *,
                   workers: int = 1) -> dict[str, int]:
    """One :func:`shingle_line` per page, the input of the MapReduce jobs.  Pages with fewer
    than k words are written with no grams: they count as pages but can never be quilted.

    With ``workers`` > 1 the Parquet row groups are shared among that many processes, each
    writing a part that is then appended to ``out``; the lines are the same, in another order
    and with other ordinals (worker w of W numbers its pages w, w + W, w + 2W, ...), which
    changes nothing downstream."""
    units = row_groups(pages)
    shares = [units[i::workers] for i in range(workers)] if workers > 1 else [units]
    shares = [share for share in shares if share] or [[]]
    parts = [out.with_name(f"{out.name}.part{i}") for i in range(len(shares))]
    jobs = [(share, part, k, snapshot, w, len(shares)) for w, (share, part) in enumerate(zip(shares, parts))]
    if len(jobs) == 1:
        results = [_shingle_share(jobs[0])]
    else:
        with ProcessPoolExecutor(len(jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(_shingle_share, jobs))
    counts: Counter[str] = Counter({"pages": 0, "pages_without_grams": 0, "grams": 0})
    with open(out, "wb") as fh:
        for part, result in zip(parts, results):
            counts.update(result)
            with open(part, "rb") as src:
                shutil.copyfileobj(src, fh, 1 << 22)
            part.unlink()
    return dict(counts)


def row_groups(pages: Path) -> list[tuple[str, int]]:
    """Every (Parquet file, row group) of a page table (one file or a folder of parts)."""
    files = sorted(pages.rglob("*.parquet")) if pages.is_dir() else [pages]
    return [(str(f), i) for f in files for i in range(pq.ParquetFile(f).num_row_groups)]


def _shingle_share(job: tuple[list[tuple[str, int]], Path, int, str | None, int, int]) -> dict[str, int]:
    """Shingle some row groups into one part file (runs in a worker process)."""
    units, out, k, snapshot, first, step = job
    ordinal = first
    counts = {"pages": 0, "pages_without_grams": 0, "grams": 0}
    with open(out, "wb") as fh:
        for path, group in units:
            columns = ["doc_id", "words", "domain", "ip"] + (["snapshot"] if snapshot is not None else [])
            for batch in pq.ParquetFile(path).iter_batches(batch_size=2048, row_groups=[group], columns=columns):
                if snapshot is not None:
                    batch = batch.filter(pc.equal(batch.column("snapshot"), snapshot))
                if batch.num_rows == 0:
                    continue
                grams, offsets = batch_gram_hashes(batch.column("words"), k)
                sizes = np.diff(offsets)
                counts["pages"] += batch.num_rows
                counts["grams"] += int(sizes.sum())
                counts["pages_without_grams"] += int((sizes == 0).sum())
                docs, domains, ips = (batch.column(name).to_pylist() for name in ("doc_id", "domain", "ip"))
                bounds = offsets.tolist()
                fh.writelines(shingle_line(ordinal + i * step, doc, grams[bounds[i]:bounds[i + 1]], domain, ip)
                              + b"\n" for i, (doc, domain, ip) in enumerate(zip(docs, domains, ips)))
                ordinal += batch.num_rows * step
    return counts
