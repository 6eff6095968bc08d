"""Shingling: a page's words to the set of its k-gram hashes.

A k-gram is k consecutive words (the paper's ``HashPatches``).  Each word is hashed with
xxh3-64 (its UTF-8 bytes), and the gram's hash combines the k word hashes h_0 .. h_{k-1}:

    gram = avalanche( sum_{t<k} h_t * B**t  mod 2**64 )

with B odd and ``avalanche`` xxh3's final mixing step (a bijection of 64-bit values).  Two
different grams get equal values with probability about 2⁻⁶⁴ (docs/quilt.md), as if the
gram's text were hashed; but a word is hashed once per batch of pages however often it
occurs, and the combination runs in numpy, ~4x faster than hashing every gram's text.

>>> h = [xxh3_64_intdigest(w) for w in (b"a", b"b", b"c")]
>>> gram_hashes(["a", "b", "c", "a", "b"], 2) == sorted({combine([h[0], h[1]]), combine([h[1], h[2]]),
...                                                   combine([h[2], h[0]])})
True
>>> gram_hashes(["too", "short"], 3)
[]
"""

from __future__ import annotations

import multiprocessing
import shutil
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from xxhash import xxh3_64_intdigest

from spamflow_quilt.copies import MAX_ORDINAL, WINDOW_PAGES, CopyWindow
from spamflow_quilt.packed import pack
from spamflow_quilt.servers import NO_SERVER, server_id

BASE = 0x9E3779B97F4A7C15
"""B: odd (the 64-bit golden ratio), so every power of it is invertible modulo 2**64."""
PRIME_MX2 = 0x165667919E3779F9
"""The multiplier of xxh3's avalanche."""
MASK64 = (1 << 64) - 1


def combine(word_hashes: Sequence[int]) -> int:
    """The gram hash of k word hashes, in plain integers: the definition the vectorised
    :func:`batch_gram_hashes` is tested against."""
    x = sum(h * pow(BASE, t, 1 << 64) for t, h in enumerate(word_hashes)) & MASK64
    x ^= x >> 37
    x = x * PRIME_MX2 & MASK64
    return x ^ (x >> 32)


def gram_hashes(words: Sequence[str], k: int) -> list[int]:
    """The distinct k-gram hashes of ``words``, sorted (grams_k(d) as a set)."""
    h = [xxh3_64_intdigest(w.encode("utf-8")) for w in words]
    return sorted({combine(h[i:i + k]) for i in range(len(words) - k + 1)})


def batch_gram_hashes(words: pa.Array, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`gram_hashes` of every page of a list<string> array at once.

    Returns the grams of all pages, distinct and sorted within each page, and each page's
    offset into them (``offsets[i]:offsets[i+1]``).  Arrow finds the distinct words, each
    is hashed once, and numpy combines the k word hashes of every gram (Horner's rule).

    >>> grams, offsets = batch_gram_hashes(pa.array([["a", "b", "c"], None, ["x", "y"]]), 2)
    >>> offsets.tolist(), grams[0:2].tolist() == gram_hashes(["a", "b", "c"], 2)
    ([0, 2, 2, 3], True)
    """
    if isinstance(words, pa.ChunkedArray):
        words = words.combine_chunks()
    n_pages = len(words)
    n_words = pc.fill_null(pc.list_value_length(words), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    n_grams = np.maximum(n_words - k + 1, 0)
    page_of_gram = np.repeat(np.arange(n_pages), n_grams)
    grams = np.empty(0, np.uint64)
    if len(page_of_gram):
        encoded = pc.dictionary_encode(pc.list_flatten(words))  # null pages contribute no words
        binary = pa.large_binary() if pa.types.is_large_string(encoded.dictionary.type) else pa.binary()
        vocabulary = pc.cast(encoded.dictionary, binary).to_pylist()
        word_hash = np.fromiter(map(xxh3_64_intdigest, vocabulary), np.uint64, count=len(vocabulary))
        h = word_hash[encoded.indices.to_numpy(zero_copy_only=False)]
        first_word = np.cumsum(n_words) - n_words
        start = (np.arange(len(page_of_gram)) - np.repeat(np.cumsum(n_grams) - n_grams, n_grams)
                 + first_word[page_of_gram])  # index of each gram's first word
        grams = h[start + (k - 1)]
        for t in range(k - 2, -1, -1):
            grams *= np.uint64(BASE)
            grams += h[start + t]
        grams ^= grams >> np.uint64(37)
        grams *= np.uint64(PRIME_MX2)
        grams ^= grams >> np.uint64(32)
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
    :func:`write_shingles` writes such a line per gram set, with a sixth field listing the
    pages that are its copies (:class:`spamflow_quilt.copies.CopyWindow`); a file of these
    five-field lines alone (one per page) is valid input too.

    >>> shingle_line(0, 7, [3, 1], "a.example", None)
    b'0\\t7\\ta.example\\t-\\t2:u8:BAwAAAAAAAAABAAAAAAAAAA=='
    """
    if not 0 <= ordinal < MAX_ORDINAL:
        raise ValueError(f"page ordinal {ordinal} is out of range: a shingle file holds at most "
                         f"{MAX_ORDINAL} pages; split the snapshot")
    head = f"{ordinal}\t{doc_id}\t{domain or NO_SERVER}\t{ip or NO_SERVER}\t".encode()
    return head + pack(np.asarray(grams, np.uint64))


def add_page(window: CopyWindow, doc_id: int, grams: Sequence[int] | np.ndarray, domain: str | None,
             ip: str | None) -> None:
    """One page into a :class:`CopyWindow`: its line as :func:`shingle_line` would start it,
    its packed grams and its servers' ids (for when it is written as another page's copy)."""
    domain, ip = domain or NO_SERVER, ip or NO_SERVER
    window.add(doc_id, f"{doc_id}\t{domain}\t{ip}\t".encode(), pack(np.asarray(grams, np.uint64)),
               domain_id=server_id(domain), ip_id=server_id(ip))


def write_shingles(pages: Path, out: Path, k: int, snapshot: str | None = None, *,
                   workers: int = 1, window_pages: int = WINDOW_PAGES) -> dict[str, int]:
    """One :func:`shingle_line` per gram set, the input of the MapReduce jobs: the pages of a
    window of ``window_pages`` pages that have the same grams are one line, listing the
    copies (:class:`spamflow_quilt.copies.CopyWindow`).  Pages with fewer than k words are
    written with no grams, one line each: they count as pages but can never be quilted.

    With ``workers`` > 1 the Parquet row groups are shared among that many processes, each
    writing a part that is then appended to ``out``; copies are collapsed within a process,
    the lines come in another order and with other ordinals (worker w of W numbers its lines
    w, w + W, w + 2W, ...), which changes nothing downstream.  Counts: ``pages``,
    ``pages_without_grams``, ``grams`` (per page, copies included) and ``copies`` (pages
    written as another page's copy)."""
    units = row_groups(pages)
    shares = [units[i::workers] for i in range(workers)] if workers > 1 else [units]
    shares = [share for share in shares if share] or [[]]
    parts = [out.with_name(f"{out.name}.part{i}") for i in range(len(shares))]
    jobs = [(share, part, k, snapshot, w, len(shares), window_pages)
            for w, (share, part) in enumerate(zip(shares, parts))]
    if len(jobs) == 1:
        results = [_shingle_share(jobs[0])]
    else:
        with ProcessPoolExecutor(len(jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(_shingle_share, jobs))
    counts: Counter[str] = Counter({"pages": 0, "pages_without_grams": 0, "grams": 0, "copies": 0})
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


def gram_batches(units: list[tuple[str, int]], k: int, snapshot: str | None,
                 counts: dict[str, int]) -> Iterator[tuple[np.ndarray, list[int], list, list, list]]:
    """The pages of some row groups (of ``snapshot``, when given), a batch at a time: (every
    page's gram hashes, end to end; the bounds of each page's; doc ids; domains; ips), counting
    ``pages``, ``grams`` and ``pages_without_grams`` into ``counts``."""
    columns = ["doc_id", "words", "domain", "ip"] + (["snapshot"] if snapshot is not None else [])
    for path, group in units:
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
            yield grams, offsets.tolist(), docs, domains, ips


def _shingle_share(job: tuple[list[tuple[str, int]], Path, int, str | None, int, int, int]) -> dict[str, int]:
    """Shingle some row groups into one part file, copies collapsed (runs in a worker process)."""
    units, out, k, snapshot, first, step, window_pages = job
    counts = {"pages": 0, "pages_without_grams": 0, "grams": 0}
    with open(out, "wb") as fh:
        window = CopyWindow(fh, out.with_name(out.name + ".scratch"), first=first, step=step,
                            window_pages=window_pages)
        for grams, bounds, docs, domains, ips in gram_batches(units, k, snapshot, counts):
            for i, (doc, domain, ip) in enumerate(zip(docs, domains, ips)):
                add_page(window, doc, grams[bounds[i]:bounds[i + 1]], domain, ip)
        window.close()
    return {**counts, "copies": window.copies}
