"""The three spin jobs' arithmetic in this process (``engine: direct``), over integer immutable
ids, the rows between the steps raw arrays on local disk instead of text lines that mrjob
splits, sorts and hands to task processes.

On one machine the MapReduce plumbing cost more than the arithmetic: every page's ~300
immutable strings split, hashed and ordered in Python by the pair job's mapper, the frequency
side file loaded into a dict by every map task, each step's records written, sorted and split
again, and a Python process started per task.  Here each immutable of ``immutables.tsv`` gets
an integer id once (a dict of the snapshot's distinct immutables, in generations of at most
``VOCABULARY_ENTRIES`` merged by Arrow: :class:`IdWriter`), the ids go to a file, and:

* ``mr_immutable_frequency``: the document frequencies are a ``bincount`` of the ids;
* ``mr_candidate_pairs``, step 1's mapper: the global order (df, immutable) is a rank per id
  (:func:`~spamflow_spin.mr_candidate_pairs.rank_order`'s order, as the mapper ranks its
  batches, here sorted a df at a time); each
  page's shared ranks sorted, its probe prefix (:func:`~spamflow_spin.mr_candidate_pairs.probe_prefixes`,
  the mapper's own) written as ``(rank, doc, n, pos)`` rows to rank-bucket files; its reducer:
  each bucket's posting lists counted by :meth:`~spamflow_spin.mr_candidate_pairs.PairCounts.count_postings`,
  the reducer's own; step 2: :func:`~spamflow_spin.mr_candidate_pairs.candidate_filter`;
* ``mr_verify_pairs``: the exact Jaccard of each candidate pair of groups from the id arrays
  (a sort of the two pages' ids), and the verifier (``verifier.mutable_overlap``, as the job
  and the ``memory`` engine call it) on the mutables of the pages in the pairs at or above t,
  read from ``partitions.tsv`` at most ``MUTABLE_PAGES`` pages at a time.

Memory: the distinct immutables (a dict of at most ``VOCABULARY_ENTRIES``, then an Arrow
array), a few integers per page and per immutable, one rank bucket's rows and the pair counts
(the jobs' reducers hold those too); the ids stay on disk (memory-mapped).
The result is the jobs' own, pair for pair and count for count (tests/test_spin_direct.py).
"""

from __future__ import annotations

import mmap
from collections import defaultdict
from collections.abc import Container, Iterator, Sequence
from itertools import count
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from xxhash import xxh3_128_intdigest

from spamflow.bucket_files import BucketFiles
from spamflow_spin.candidates import Candidates
from spamflow_spin.dictionary import SynonymDictionary
from spamflow_spin.mr_candidate_pairs import PairCounts, add_up, candidate_filter, probe_prefixes
from spamflow_spin.verifier import mutable_overlap

BUCKET_ROWS = 1 << 22
"""Posting entries per rank bucket (20 bytes each on disk; a few copies in memory while its
pairs are counted)."""

VOCABULARY_ENTRIES = 1 << 22
"""Distinct immutables numbered by one Python dict (~120 bytes each with their strings: ~0.5 GB
at 2^22) before :class:`IdWriter` writes them to disk and starts a new generation.  A snapshot
of 5 x 10^4 pages of the scale benchmark's web has 2.4 M (one generation); at 5 x 10^5 pages
the dict's high-water mark stays in the process (Python keeps its freed small-object memory
for reuse), so the cap is also that much less for the steps after (benchmarks/README.md)."""

CHUNK_IDS = 1 << 21
"""Immutable ids handled at a time when counting frequencies and taking prefixes."""

MUTABLE_PAGES = 200_000
"""Pages whose mutables (their ``partitions.tsv`` text, ~1 KB a page) are held at a time by the
verifier; more pages in pairs at or above t: more passes over the file."""

FLUSH_PAIRS = 1 << 21
"""Distinct pairs counted in memory before they go to the pair-bucket files (40 bytes each, a
few copies while they are added up), as the job's reducer flushes at ``--flush-at``."""

ENTRY = np.dtype([("rank", "<u4"), ("doc", "<i8"), ("n", "<u4"), ("pos", "<u4")])
PAIR_FIELDS = ("a", "b", "count", "need", "rest")
PAIR = np.dtype([(name, "<i8") for name in PAIR_FIELDS])


class PageIds:
    """The pages of ``immutables.tsv`` in file order: doc ids, immutable ids (a memory-mapped
    file of uint32, page after page), where each page's start, and the immutables by id (an
    Arrow string array; :func:`direct_candidates` releases it once it has ordered them)."""

    def __init__(self, docs: np.ndarray, starts: np.ndarray, ids: np.ndarray,
                 words: pa.Array) -> None:
        self.docs, self.starts, self.ids = docs, starts, ids
        self.words: pa.Array | None = words
        self.vocabulary = len(words)
        """How many distinct immutables (ids ``0 .. vocabulary - 1``)."""
        self.by_doc = np.argsort(docs, kind="stable")

    def remove(self) -> None:
        """Delete the ids' file (``ids`` unusable after)."""
        path = getattr(self.ids, "filename", None)
        self.ids = np.zeros(0, np.uint32)
        if path is not None:
            Path(path).unlink()

    def drop_pages(self) -> None:
        """The ids file's pages read so far out of this process's memory (they count in its
        RSS while mapped; the file is read again from the page cache or disk when needed)."""
        mapped = getattr(self.ids, "_mmap", None)
        if mapped is not None:
            mapped.madvise(mmap.MADV_DONTNEED)

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.starts)

    def rows(self, docs: np.ndarray) -> np.ndarray:
        """The row (file order) of each doc id."""
        at = np.searchsorted(self.docs[self.by_doc], docs)
        rows = self.by_doc[np.minimum(at, len(self.docs) - 1)]
        if len(docs) and not np.array_equal(self.docs[rows], docs):
            missing = docs[self.docs[rows] != docs][0]
            raise ValueError(f"page {missing} has no line in the immutables file")
        return rows

    def jaccard(self, a: np.ndarray, b: np.ndarray, block: int = CHUNK_IDS) -> np.ndarray:
        """``similarity.jaccard`` of the immutable sets of the pages a[i] and b[i], as float64
        (|A ∩ B| / (|A| + |B| - |A ∩ B|): the same division of the same integers)."""
        rows_a, rows_b = self.rows(a), self.rows(b)
        sizes = self.sizes
        n_a, n_b = sizes[rows_a], sizes[rows_b]
        inter = np.zeros(len(a), np.int64)
        for first, last in _chunks(_starts(n_a + n_b), block):
            pairs = np.arange(last - first)
            rows = np.concatenate((rows_a[first:last], rows_b[first:last]))
            owner = np.concatenate((pairs, pairs))
            lengths = sizes[rows]
            ids = self.ids[_ranges(self.starts[rows], lengths)].astype(np.int64)
            key = np.repeat(owner, lengths) * (self.vocabulary + 1) + ids
            key.sort()
            shared = key[1:][key[1:] == key[:-1]] // (self.vocabulary + 1)
            inter[first:last] = np.bincount(shared, minlength=last - first)
            self.drop_pages()
        with np.errstate(invalid="ignore"):
            return np.where(n_a + n_b > 0, inter / np.maximum(n_a + n_b - inter, 1), 0.0)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[i] .. starts[i] + lengths[i] - 1``, one range after the other."""
    total = int(lengths.sum())
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total)


class IdWriter:
    """Pages' immutables numbered as they come (each distinct immutable its id, as first seen),
    the ids appended to a file of uint32; :meth:`finish` gives the :class:`PageIds`.

    The numbering is a dict of strings, whose memory grows with the vocabulary (~114 bytes an
    entry).  So it comes in generations: past ``vocabulary_entries`` distinct immutables at a
    batch's end, the dict's strings (in id order) go to an Arrow IPC file and a new dict starts
    at id 0.  :meth:`merge` then gives every immutable one id: Arrow dictionary-encodes the
    generations' strings (C++ hash tables, of a slice of the strings at a time) and the ids
    file is rewritten through each generation's map.  With one generation nothing is written
    or rewritten."""

    def __init__(self, path: Path, vocabulary_entries: int | None = None) -> None:
        self.path = path
        self.vocabulary_entries = VOCABULARY_ENTRIES if vocabulary_entries is None else vocabulary_entries
        self._new_vocabulary()
        self.generations: list[Path] = []
        """The spilled generations' strings, in id order (Arrow IPC files)."""
        self.generation_ends: list[int] = []
        """Ids written up to the end of each spilled generation."""
        self.written = 0
        self.words: pa.Array | None = None
        """The immutables by global id, from :meth:`merge` to :meth:`finish` (which hands them on)."""
        self.vocabulary_size = 0
        self.merged = False
        self.docs: list[int] = []
        self.sizes: list[int] = []
        self.held: list[np.ndarray] = []
        self.held_ids = 0
        self.out: BinaryIO = open(path, "wb")  # noqa: SIM115 (closed in merge())

    def _new_vocabulary(self) -> None:
        self.vocabulary: defaultdict[str, int] = defaultdict(count().__next__)
        self.lookup = self.vocabulary.__getitem__

    def add(self, doc: int, immutables: Sequence[str]) -> None:
        self.add_ids([doc], np.fromiter(map(self.lookup, immutables), np.uint32, len(immutables)),
                     [len(immutables)])

    def add_ids(self, docs: Sequence[int], ids: np.ndarray, sizes: Sequence[int]) -> None:
        """Pages already numbered (by :attr:`lookup`): their ids one page after the other."""
        self.docs += docs
        self.sizes += sizes
        self.held.append(ids)
        self.held_ids += len(ids)
        self.written += len(ids)
        if self.held_ids >= CHUNK_IDS:
            np.concatenate(self.held).tofile(self.out)
            self.held.clear()
            self.held_ids = 0
        if len(self.vocabulary) > self.vocabulary_entries:
            self._spill()

    def _spill(self) -> None:
        """The dict's strings, in id order, to the generation's file; a new dict."""
        path = self.path.with_name(f"{self.path.name}.vocabulary{len(self.generations)}.arrow")
        strings = pa.array(list(self.vocabulary), pa.large_string())
        self._new_vocabulary()  # freed before the file is written
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, pa.schema([("s", pa.large_string())])) as out:
            out.write_batch(pa.record_batch([strings], names=["s"]))
        self.generations.append(path)
        self.generation_ends.append(self.written)

    def relabel(self, row: int, doc: int) -> None:
        """The page written as row ``row`` (0 for the first :meth:`add`) is ``doc``."""
        self.docs[row] = doc

    def merge(self) -> bool:
        """No more pages: the ids file complete, its ids global (one id per distinct immutable
        in every generation) and :attr:`words` set; True if there was more than one generation
        (the ids rewritten)."""
        if self.merged:
            return bool(self.generations)
        self.merged = True
        np.concatenate([np.zeros(0, np.uint32), *self.held]).tofile(self.out)
        self.held.clear()
        self.out.close()
        if not self.generations:
            self.words = pa.array(list(self.vocabulary), pa.large_string())
            self.vocabulary_size = len(self.words)
            self._new_vocabulary()
            return False
        self._spill()  # the last generation; the dict is freed before the hash tables are built
        sources = [pa.memory_map(str(path)) for path in self.generations]
        strings = [pa.ipc.open_file(source).get_batch(0).column(0) for source in sources]  # zero-copy
        maps, slices = _global_ids(strings, -(-2 * sum(map(len, strings)) // max(self.vocabulary_entries, 1)))
        del strings
        for source, path in zip(sources, self.generations):
            source.close()
            path.unlink()
        self.words = pa.concat_arrays(slices.chunks) if slices.num_chunks else pa.array([], pa.large_string())
        del slices  # one array: a take from a chunked array combines its chunks first, at every call
        self.vocabulary_size = len(self.words)
        pa.default_memory_pool().release_unused()  # the hash tables' memory, which the pool keeps
        merged = self.path.with_name(self.path.name + ".global")
        with open(self.path, "rb") as local, open(merged, "wb") as out:  # read, not mapped: no file pages held
            start = 0
            for local_to_global, end in zip(maps, self.generation_ends):
                for first in range(start, end, CHUNK_IDS):
                    local_to_global[np.fromfile(local, np.uint32, min(CHUNK_IDS, end - first))].tofile(out)
                start = end
        merged.replace(self.path)
        return True

    def set_keys(self) -> list[int]:
        """Per page written, a 128-bit xxh3 of its sorted ids (global, after :meth:`merge`)."""
        sizes = np.array(self.sizes, np.int64)
        starts = _starts(sizes)
        ids = np.memmap(self.path, np.uint32, mode="r") if starts[-1] else np.zeros(0, np.uint32)
        keys: list[int] = []
        for first, last in _chunks(starts, CHUNK_IDS):
            chunk = np.sort(_row_major(ids[starts[first]:starts[last]], sizes[first:last], self.vocabulary_size))
            chunk = (chunk % max(self.vocabulary_size, 1)).astype(np.uint32)
            offsets = (starts[first:last + 1] - starts[first]).tolist()
            keys += [xxh3_128_intdigest(chunk[a:b].tobytes()) for a, b in zip(offsets[:-1], offsets[1:])]
        return keys

    def finish(self, keep: Container[int] | None = None) -> PageIds:
        """The pages written, or only those whose doc is in ``keep`` (in the order written)."""
        self.merge()
        docs, sizes = np.array(self.docs, np.int64), np.array(self.sizes, np.int64)
        path = self.path
        if keep is not None:
            rows = np.array([i for i, doc in enumerate(self.docs) if doc in keep], np.int64)
            path = _gather(self.path, _starts(sizes), rows, sizes[rows])
            docs, sizes = docs[rows], sizes[rows]
        starts = _starts(sizes)
        ids = np.memmap(path, np.uint32, mode="r") if starts[-1] else np.zeros(0, np.uint32)
        words, self.words = self.words, None  # held by the pages only: released with them
        assert words is not None
        return PageIds(docs, starts, ids, words)


def _global_ids(generations: list[pa.Array], parts: int) -> tuple[list[np.ndarray], pa.ChunkedArray]:
    """One id per distinct string of ``generations`` (string arrays, each without repeats):
    each generation's map from its positions to the global ids, and the strings by global id.
    Arrow dictionary-encodes the strings ``parts`` slices at a time (a slice: the strings of a
    hash of their bytes), so that its hash table holds a slice's distinct strings, not all."""
    part_of = [_part(strings, parts) for strings in generations]
    maps = [np.zeros(len(strings), np.uint32) for strings in generations]
    dictionaries: list[pa.Array] = []
    base = 0
    for part in range(parts):
        at = [np.flatnonzero(of == part) for of in part_of]
        encoded = pa.concat_arrays([strings.take(where) for strings, where in zip(generations, at)]
                                   ).dictionary_encode()
        indices = encoded.indices.to_numpy(zero_copy_only=False).astype(np.uint32) + np.uint32(base)
        first = 0
        for where, local_to_global in zip(at, maps):
            local_to_global[where] = indices[first:first + len(where)]
            first += len(where)
        dictionaries.append(encoded.dictionary)
        base += len(encoded.dictionary)
    return maps, pa.chunked_array(dictionaries, pa.large_string())


def _part(strings: pa.Array, parts: int) -> np.ndarray:
    """A hash of each string's length and first, middle and last bytes, modulo ``parts`` (equal
    strings, equal parts; no hash seed)."""
    offsets = np.frombuffer(strings.buffers()[1], np.int64)[strings.offset:strings.offset + len(strings) + 1]
    data = np.frombuffer(strings.buffers()[2], np.uint8) if strings.buffers()[2] is not None \
        else np.zeros(0, np.uint8)
    lengths = offsets[1:] - offsets[:-1]
    filled = lengths > 0
    key = lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for at in (offsets[:-1], offsets[:-1] + lengths // 2, offsets[1:] - 1):
        byte = np.zeros(len(lengths), np.uint64)
        byte[filled] = data[at[filled]]
        key = (key ^ byte) * np.uint64(0x100000001B3)
    return ((key >> np.uint64(29)) % np.uint64(parts)).astype(np.int64)


def _row_major(ids: np.ndarray, sizes: np.ndarray, words: int) -> np.ndarray:
    """Each id as ``row * words + id`` (row: its page within ``sizes``), so that one sort puts
    every page's ids in order, page after page."""
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes) * max(words, 1) + ids


def _starts(sizes: np.ndarray) -> np.ndarray:
    starts = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=starts[1:])
    return starts


def _chunks(starts: np.ndarray, block: int) -> Iterator[tuple[int, int]]:
    """Consecutive item ranges ``[first, last)`` of items ``starts[i] .. starts[i + 1]`` long,
    each of at most ``block`` values, or of one item when that item alone is longer."""
    first, items = 0, len(starts) - 1
    while first < items:
        last = max(int(np.searchsorted(starts, starts[first] + block, side="right")) - 1, first + 1)
        yield first, last
        first = last


def _gather(path: Path, starts: np.ndarray, rows: np.ndarray, sizes: np.ndarray) -> Path:
    """The ids of ``rows`` (each ``sizes`` long) copied to a new file, a chunk at a time."""
    ids = np.memmap(path, np.uint32, mode="r") if starts[-1] else np.zeros(0, np.uint32)
    kept = path.with_name(path.name + ".kept")
    with open(kept, "wb") as out:
        for first, last in _chunks(_starts(sizes), CHUNK_IDS):
            ids[_ranges(starts[rows[first:last]], sizes[first:last])].tofile(out)
    del ids
    path.unlink()
    return kept


def read_immutables(lines: Path, scratch: Path) -> PageIds:
    """``doc<TAB>immutable ...`` lines (the jobs' input, split as ``str.split()`` does) as
    :class:`PageIds`, the ids in ``scratch/ids.u32``."""
    writer = IdWriter(scratch / "ids.u32")
    with open(lines, encoding="utf-8", newline="\n") as fh:  # lines end at \n only, as the jobs read them
        for number, line in enumerate(fh, 1):
            doc, tab, immutables = line.rstrip("\n").partition("\t")
            if not tab or not doc.lstrip("-").isdigit():
                writer.finish()
                raise ValueError(f"{lines}:{number}: not a page line 'doc<TAB>immutables': {line[:80]!r}")
            writer.add(int(doc), immutables.split())
    return writer.finish()


def direct_candidates(pages: PageIds, scratch: Path, *, threshold: float, max_pages: int,
                      min_shared: int) -> Candidates:
    """:func:`~spamflow_spin.candidates.find_candidates`'s result for ``pages`` (the jobs'
    input lines read by :func:`read_immutables`, or the stage's :class:`IdWriter`), computed in
    this process (scratch files in ``scratch``)."""
    words = pages.vocabulary
    df = np.zeros(words, np.int64)
    for first in range(0, len(pages.ids), max(CHUNK_IDS, words)):  # O(ids + words), not chunks x words
        df += np.bincount(pages.ids[first:first + max(CHUNK_IDS, words)], minlength=words)
    pages.drop_pages()
    shared_ids = np.flatnonzero(df >= 2)
    shared_df = df[shared_ids]
    del df
    if pages.words is None:
        raise ValueError("the pages' immutables were released by an earlier direct_candidates")
    order = _order_by_df(shared_df, shared_ids, pages.words)
    pages.words = None  # only the ranks from here (~0.5 GB of strings at 5 x 10^5 pages a snapshot)
    small = np.int32 if len(shared_ids) < 1 << 31 else np.int64
    rank = np.full(words, -1, small)
    rank[shared_ids[order]] = np.arange(len(shared_ids), dtype=small)
    ranks = len(shared_ids)
    kept_ranks = int((shared_df <= max_pages).sum())  # (df, immutable) order: the dropped ones last
    del shared_ids, shared_df, order
    # pages counted by dense ranks of their doc ids (same order, same pairs): PairCounts then
    # sorts one packed int64 key instead of lexsorting 64-bit doc ids
    doc_of, doc_rank = np.unique(pages.docs, return_inverse=True)
    counts = PairCounts(threshold, min_shared)
    prefix_dropped = 0
    buckets = 1 << max(int(len(pages.ids) // BUCKET_ROWS), 0).bit_length()
    held = BucketFiles(scratch, "pairs", PAIR, buckets)
    if ranks:
        entries = BucketFiles(scratch, "entries", ENTRY, buckets)
        prefix_dropped = _prefixes(pages, doc_rank.reshape(-1), rank, ranks, kept_ranks, threshold, min_shared,
                                   entries)
        for rows in entries.take_all():  # a bucket's ranks share their residue: rank // buckets keeps the order
            counts.count_postings(rows["rank"].astype(np.int64) // buckets, rows["doc"], rows["n"].astype(np.int64),
                                  rows["pos"].astype(np.int64))
            if counts.pairs_at_least(FLUSH_PAIRS):  # as the reducer flushes: to pair buckets
                _hold(held, counts.take(), doc_of)
    _hold(held, counts.take(), doc_of)
    held.close()
    pairs: list[tuple[int, int]] = []
    pruned = 0
    for rows in held.take_all():  # step 2: each pair bucket added up and filtered
        a, b, total, need, rest = add_up(*(rows[name] for name in PAIR_FIELDS))
        kept, dropped = candidate_filter(total, need, rest, min_shared)
        pairs += zip(doc_of[a[kept]].tolist(), doc_of[b[kept]].tolist())
        pruned += int(dropped.sum())
    return Candidates(sorted(pairs), ranks, ranks - kept_ranks, prefix_dropped, counts.counted, pruned)


def _order_by_df(df: np.ndarray, ids: np.ndarray, words: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """``rank_order(df, words.take(ids))`` (the indices of ``ids`` in the order (df, immutable)),
    the strings taken and sorted one df at a time: memory for the largest group of equal df,
    not for every shared immutable's string and a table sort over them all."""
    order = np.argsort(df, kind="stable")
    ordered = df[order]
    bounds = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1], True]).tolist()
    for first, last in zip(bounds[:-1], bounds[1:]):
        if last - first > 1:
            group = order[first:last]
            order[first:last] = group[pc.sort_indices(words.take(ids[group])).to_numpy()]
    return order


def _hold(held: BucketFiles, counts: tuple[np.ndarray, ...], doc_of: np.ndarray) -> None:
    """Pair counts (their pages as doc ranks, ``doc_of`` their doc ids) to the pair buckets,
    ``(doc_a + doc_b) mod buckets`` as the job's."""
    a, b = doc_of[counts[0]], doc_of[counts[1]]
    buckets = len(held.paths)
    held.append((a % buckets + b % buckets) % buckets, **dict(zip(PAIR_FIELDS, counts)))


def _prefixes(pages: PageIds, doc_rank: np.ndarray, rank: np.ndarray, ranks: int, kept_ranks: int, t: float, k: int,
              buckets: BucketFiles) -> int:
    """The pair job's mapper: every page's probe prefix as ``(rank, doc, n, pos)`` rows (doc:
    the page's ``doc_rank``), to the rank buckets; returns how many pages' prefixes reached a
    dropped immutable."""
    lengths: dict[int, int] = {}
    dropped_pages = 0
    sizes = pages.sizes
    for first, last in _chunks(pages.starts, CHUNK_IDS):
        n = sizes[first:last]
        r = rank[pages.ids[pages.starts[first]:pages.starts[last]]]
        page = np.repeat(np.arange(last - first, dtype=np.int64), n)
        shared = r >= 0
        key = page[shared] * ranks + r[shared]
        key.sort()  # page after page, each page's shared immutables in the order (df, immutable)
        of_page, key_rank = key // ranks, key % ranks
        shared_n = np.bincount(of_page, minlength=last - first)
        kept_n = np.bincount(of_page[key_rank < kept_ranks], minlength=last - first)
        _, emitted, dropped = probe_prefixes(n, shared_n, kept_n, t, k, lengths)
        dropped_pages += int(dropped.sum())
        page_start = np.cumsum(shared_n) - shared_n
        at = _ranges(page_start, emitted)
        within = at - np.repeat(page_start, emitted)
        ranks_at = key_rank[at]
        buckets.append(ranks_at % len(buckets.paths), rank=ranks_at, doc=np.repeat(doc_rank[first:last], emitted),
                       n=np.repeat(n, emitted),
                       pos=np.repeat(n - shared_n, emitted) + within)  # the df-1 immutables come first
    buckets.close()
    pages.drop_pages()
    return dropped_pages


def verify_direct(scored: Sequence[tuple[int, int, float]], partitions: Path, dictionary: SynonymDictionary,
                  max_pages: int = MUTABLE_PAGES) -> list[tuple[int, int, float, float]]:
    """(doc_a, doc_b, Jaccard, verifier overlap) of each pair at or above t, in order, the
    mutables read from ``partitions.tsv`` (``A<TAB>doc<TAB>immutables<TAB>mutables``, the join
    job's input) for at most ``max_pages`` pages at a time."""
    out: list[tuple[int, int, float, float]] = []
    first = 0
    while first < len(scored):
        needed: set[int] = set()
        last = first
        while last < len(scored):
            new = {scored[last][0], scored[last][1]} - needed
            if len(needed) + len(new) > max(max_pages, 2):
                break
            needed |= new
            last += 1
        mutables = _mutables(partitions, needed)
        for a, b, score in scored[first:last]:
            out.append((a, b, score, mutable_overlap(_split(mutables, a), _split(mutables, b), dictionary)))
        first = last
    return out


def _mutables(partitions: Path, needed: set[int]) -> dict[int, str]:
    """The mutables text (joined by ``|``) of the pages in ``needed``."""
    found: dict[int, str] = {}
    with open(partitions, encoding="utf-8", newline="\n") as fh:
        for number, line in enumerate(fh, 1):
            end = line.find("\t", 2)
            try:
                doc = int(line[2:end])
            except ValueError:
                raise ValueError(f"{partitions}:{number}: not 'A<TAB>doc<TAB>immutables<TAB>mutables': "
                                 f"{line[:80]!r}") from None
            if doc in needed:
                found[doc] = line.rstrip("\n").rpartition("\t")[2]
    return found


def _split(mutables: dict[int, str], doc: int) -> list[str]:
    text = mutables.get(doc)
    if text is None:
        raise ValueError(f"page {doc} is in a pair to verify but has no partition line")
    return text.split("|") if text else []
