"""Candidate pairs of pages for an immutable-Jaccard threshold t (one mrjob job, two steps).

Input: one page per line, ``doc<TAB>immutable immutable ...`` (a set: repeats already
suffixed), and, as a side file (``--frequencies``), the document frequencies written by
``mr_immutable_frequency`` (immutables missing from it have df 1).  Comparing all pairs is
quadratic; this job is *prefix filtering* (Chaudhuri et al. 2006; Bayardo et al., AllPairs,
2007; Xiao et al., PPJoin, 2008) in MapReduce (Vernica et al. 2010).  All immutables are
ordered globally by (dropped, df, immutable): rarest first, the ones on more than
``--max-pages`` pages last.  With n = a page's number of immutables and k = ``--min-shared``:

* every page is *probed* by its first ``n - ceil(t*n) + k`` immutables and *indexed* by its
  first ``n - ceil(2t/(1+t)*n) + k`` (shorter: at t = 0.6, 0.25n + k instead of 0.4n + k);
* a pair (y, x), y the smaller page by (n, doc), is counted at an immutable that is in y's
  index prefix and x's probe prefix, if the sizes allow Jaccard >= t (n_y >= t*n_x) and the
  positions allow enough overlap (PPJoin's positional filter: at positions i in x and j in y,
  the overlap is at most min(i, j) + 1 + min(n_x - i - 1, n_y - j - 1));
* a pair is a candidate if it is counted at least ``min(k, alpha)`` times, alpha =
  ceil(t/(1+t) * (n_x + n_y)) being the overlap Jaccard >= t needs, and if its count c plus
  ``min(n_x - i - 1, n_y - j - 1)`` at the last immutable it was counted at (positions i, j)
  still reaches alpha (PPJoin's accumulated positional bound; pairs that pass the count but
  fail this bound are counted as ``#bound_pruned``).

Why nothing above t is lost: J >= t means an overlap o >= alpha >= t*n_x and >= 2t/(1+t)*n_y.
The j-th rarest shared immutable is at most at position n - o + j of each page's list, so the
min(o, k) rarest shared ones lie within both prefixes, and every filter above is an upper
bound on o.  The accumulated bound: shared immutables come in the same (global) order in both
pages, so every shared one before the last counted one is in both prefixes and, for a pair
that can reach alpha, passes the positional filter: it was counted, and c + (what can still
follow in both pages) >= o.  Immutables with df 1 take their place in the order but are
never emitted; dropped ones are never emitted, and a page whose probe prefix reaches one
loses the guarantee (counted as ``#prefix_dropped``).

1. mapper (side file loaded once per task): per page, sort, and for its probe prefix add
   ``doc n pos`` to the posting list of each immutable, held in memory across the task's pages
   ("in-mapper combining", flushed every ``--flush-postings`` entries and at the end), sent as
   one record per bucket of immutables (``buckets.bucket_of``, ``--buckets`` of them):
   ``bucket -> immutable<TAB>doc n pos,doc n pos<TAB>immutable<TAB>...``, not one record per
   page and immutable.  Pages are sorted ``--batch-pages`` at a time (:func:`order_pages`:
   each distinct immutable of a batch looked up once, the sorting in Arrow and numpy), with
   the same records as page by page.  Reducer, per bucket: per immutable, the pairs allowed above, counted in
   memory across the task's immutables (:class:`PairCounts`: numpy over ~16,000 posting lists at a
   time, the same counts as :func:`count_pairs` one pair at a time) and sent at the end (or once
   ``--flush-at`` pairs are held, checked after each batch of lists) one record per bucket of
   pairs (``(doc_a + doc_b) mod --buckets``):
   ``bucket -> doc_a doc_b count alpha rest,...``;
2. reducer, per bucket: per pair, add the counts and keep the smallest rest; keep the
   candidates.  (No combiner: step 1's reducers already sent each pair at most once per task,
   so a combiner would mostly re-sort and re-write step 2's input.)

Output: ``doc_a doc_b<TAB>count`` with doc_a < doc_b, ``#prefix_dropped<TAB>n``,
``#pairs_counted<TAB>n`` (how many times step 1 counted a pair: the work that must stay
linear in the corpus) and ``#bound_pruned<TAB>n`` (pairs counted often enough but dropped by
the accumulated positional bound).

Imports nothing from spamflow: a Spark or Hadoop worker gets only this package.
"""

import math
from dataclasses import dataclass
from itertools import chain, repeat

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from mrjob.job import MRJob
from mrjob.protocol import RawProtocol, RawValueProtocol
from mrjob.step import MRStep

from spamflow_spin.buckets import bucket_of

PREFIX_DROPPED = "#prefix_dropped"
PAIRS_COUNTED = "#pairs_counted"
BOUND_PRUNED = "#bound_pruned"
EPS = 1e-9


def overlap_needed(n, t):
    """Jaccard >= t needs at least this many shared immutables, for a page of n."""
    return math.ceil(t * n - EPS)


def pair_overlap_needed(n_a, n_b, t):
    """Jaccard >= t needs at least this many shared immutables between pages of n_a and n_b
    (o / (n_a + n_b - o) >= t  <=>  o >= t / (1 + t) * (n_a + n_b))."""
    return math.ceil(t / (1 + t) * (n_a + n_b) - EPS)


def prefix_length(n, t, k=1):
    """How many of a page's n immutables (rarest first) it is probed by, for threshold t and
    ``k`` required shared prefix immutables.

    >>> prefix_length(10, 0.5), prefix_length(10, 1.0), prefix_length(3, 0.34), prefix_length(10, 0.5, 3)
    (6, 1, 2, 8)
    """
    return min(n, n - overlap_needed(n, t) + k)


def index_length(n, t, k=1):
    """How many of a page's n immutables it is indexed by: enough for every partner at least
    as large (whose pair needs an overlap of at least 2t/(1+t)*n).

    >>> index_length(100, 0.6), index_length(100, 0.6, 3), index_length(10, 1.0), prefix_length(100, 0.6)
    (26, 28, 1, 41)
    """
    return min(n, n - overlap_needed(n, 2 * t / (1 + t)) + k)


def sizes_compatible(n_a, n_b, t):
    """Jaccard(A, B) <= min/max of the sizes, so it can reach t only if this holds."""
    return min(n_a, n_b) >= t * max(n_a, n_b) - EPS


def position_allows(pos_x, n_x, pos_y, n_y, need):
    """PPJoin's positional filter: sharing the immutable at 0-based positions pos_x and pos_y,
    can the pages still share ``need``?"""
    return min(pos_x, pos_y) + 1 + min(n_x - pos_x - 1, n_y - pos_y - 1) >= need


def probe_prefixes(sizes, shared, kept, t, k, lengths=None):
    """Per page: its probe prefix past its df-1 immutables (``stop``, may be <= 0), how many of its
    shared immutables it emits to the posting lists, and whether its
    probe prefix reaches a dropped immutable (``#prefix_dropped``): ``sizes`` its n (df-1
    immutables included: they come first in the order and take the first positions), ``shared``
    its immutables of df >= 2, ``kept`` those of them of df <= max_pages (the shared ones' first
    ``kept``: dropped ones come last).  ``lengths``: a cache n -> ``prefix_length(n, t, k)``.
    The pair job's mapper and the direct engine both take their prefixes from here.

    >>> stop, emitted, dropped = probe_prefixes(np.array([10, 10, 3]), np.array([8, 6, 1]), np.array([8, 1, 1]), 0.5, 1)
    >>> stop.tolist(), emitted.tolist(), dropped.tolist()  # prefix_length(10, 0.5) = 6, prefix_length(3, 0.5) = 2
    ([4, 2, 0], [4, 1, 0], [False, True, False])
    """
    lengths = {} if lengths is None else lengths
    unique, inverse = np.unique(sizes, return_inverse=True)
    for n in unique.tolist():
        if n not in lengths:
            lengths[n] = prefix_length(n, t, k)
    stop = np.array([lengths[n] for n in unique.tolist()], np.int64)[inverse.reshape(-1)] - (sizes - shared)
    probing = stop > 0
    return stop, np.where(probing, np.minimum(stop, kept), 0), probing & (stop > kept)


def rank_order(frequency, words):
    """Indices of ``words`` (a pyarrow string array) in the global order (df, immutable), ``frequency``
    their df; Arrow compares strings by their UTF-8 bytes, which is the order of code points,
    i.e. Python's str order."""
    return pc.sort_indices(pa.table({"df": frequency, "immutable": words}),
                           sort_keys=[("df", "ascending"), ("immutable", "ascending")]).to_numpy()


def candidate_filter(total, need, rest, k):
    """Step 2's filters on added-up pair counts (numpy arrays): (candidates, pruned), the pairs
    counted at least ``min(k, alpha)`` times that the accumulated positional bound keeps, and
    those it drops."""
    counted = total >= np.minimum(k, need)
    bound = total + rest >= need
    return counted & bound, counted & ~bound


@dataclass
class OrderedPages:
    """A batch of pages' immutables, each page's shared ones (df >= 2) in the global order
    (df, immutable), as flat arrays, page after page."""

    sizes: np.ndarray
    """n of each page: all its immutables, those of df 1 included."""
    starts: np.ndarray
    """Page i's shared immutables are ``codes[starts[i]:starts[i + 1]]``."""
    words: list[str]
    """The batch's distinct immutables."""
    codes: np.ndarray
    """Each shared immutable of each page, as an index into ``words``."""
    frequencies: np.ndarray
    """The df of each entry of ``codes`` (more than ``max_pages``: maybe capped, see order_pages)."""

    def page(self, i: int) -> list[tuple[int, str]]:
        """Page i's shared immutables as ``sorted((df, immutable) ...)`` gives them."""
        at = slice(self.starts[i], self.starts[i + 1])
        return [(f, self.words[c]) for f, c in zip(self.frequencies[at].tolist(), self.codes[at].tolist())]


def order_pages(texts: list[str], df: dict[str, int], max_pages: int) -> OrderedPages:
    """Split each page's immutables as ``str.split()`` does and order its shared ones by (df,
    immutable), looking each distinct immutable of the batch up in ``df`` once (real prose
    repeats most of them within a batch of pages: ~3.6 occurrences per distinct immutable in
    2,000 pages of bench_scale's web) instead of once per occurrence, and sorting with Arrow
    and numpy instead of per page in Python."""
    # str.split() itself (pyarrow 26's utf8_split_whitespace splits at the same characters
    # but, seen here, sometimes keeps the whitespace that ends the array's last string)
    parts = [text.split() for text in texts]
    sizes = np.fromiter(map(len, parts), np.int64, len(parts))
    values = pa.array(list(chain.from_iterable(parts)), pa.large_string())
    page = np.repeat(np.arange(len(texts)), sizes)
    encoded = pc.dictionary_encode(values)
    words = encoded.dictionary.to_pylist()
    codes = encoded.indices.to_numpy()
    get = df.get
    try:
        frequency = np.fromiter(map(get, words, repeat(0)), np.int64, len(words))
    except OverflowError:  # a df beyond int64: that it is more than max_pages is all that matters
        frequency = np.array([min(get(word, 0), max_pages + 1) for word in words], np.int64)
    order = rank_order(frequency, encoded.dictionary)  # rank of each distinct immutable: (df, immutable)
    rank = np.empty(len(words), np.int64)
    rank[order] = np.arange(len(words))
    shared = frequency[codes] > 0  # df 1 (not in the side file): never emitted
    key = page[shared] * max(len(words), 1) + rank[codes[shared]]
    key.sort()  # page after page, each page's immutables by rank (repeats stay: same rank)
    codes = order[key % max(len(words), 1)]
    starts = np.zeros(len(texts) + 1, np.int64)
    np.cumsum(np.bincount(key // max(len(words), 1), minlength=len(texts)), out=starts[1:])
    return OrderedPages(sizes, starts, words, codes, frequency[codes])


def count_pairs(entries, t, k, counts):
    """The pairs allowed at one immutable, ``entries`` its ``doc n pos,...``, counted one pair
    at a time into ``counts`` (``(doc_a, doc_b) -> (count, alpha, rest)``); returns how many
    were counted.  The definition :class:`PairCounts` computes with arrays (a test compares them)."""
    numbers = list(map(int, entries.replace(",", " ").split()))
    pages = sorted(zip(numbers[1::3], numbers[0::3], numbers[2::3]))  # (n, doc, pos)
    counted = 0
    for i, (n_y, doc_y, pos_y) in enumerate(pages):
        if pos_y >= index_length(n_y, t, k):
            continue
        rest_y = n_y - pos_y - 1
        for n_x, doc_x, pos_x in pages[i + 1:]:
            if n_y < t * n_x - EPS:
                break  # sorted by size: every later page is larger still
            need = pair_overlap_needed(n_x, n_y, t)
            rest = min(n_x - pos_x - 1, rest_y)
            if min(pos_x, pos_y) + 1 + rest >= need:  # position_allows
                pair = (doc_y, doc_x) if doc_y < doc_x else (doc_x, doc_y)
                counted += 1
                count = counts.get(pair)
                counts[pair] = (1, need, rest) if count is None else (count[0] + 1, need, min(count[2], rest))
    return counted


def packed_key(*columns):
    """One int64 key sorting as ``np.lexsort(columns[::-1])`` (the first column most
    significant) and the columns' bit widths, or None when the values are negative or need
    more than 63 bits together.  Sorting one key is ~10-30x faster than a lexsort of several
    (numpy's vectorised sort against a stable indirect pass per column)."""
    widths = []
    for column in columns:
        if len(column) and int(column.min()) < 0:
            return None
        widths.append(int(column.max()).bit_length() if len(column) else 0)
    if sum(widths) > 63:
        return None
    key = np.zeros(len(columns[0]), np.int64)
    for column, width in zip(columns, widths):
        key <<= width
        key |= column
    return key, widths


def unpack_key(key, widths):
    """The columns :func:`packed_key` packed with these bit widths (the first most significant)."""
    out, shift = [], sum(widths)
    for width in widths:
        shift -= width
        out.append((key >> shift) & ((1 << width) - 1))
    return out


def add_up(a, b, count, need, rest):
    """Pair counts (arrays ``doc_a, doc_b, count, alpha, rest``, a pair on any number of rows)
    added up: one row per pair, sorted by (doc_a, doc_b), its counts summed and its smallest
    rest (alpha is the same on every row of a pair: it depends on the two sizes only)."""
    packed = packed_key(a, b)
    order = np.lexsort((b, a)) if packed is None else np.argsort(packed[0])  # a pair's rows: any order
    a, b, count, need, rest = a[order], b[order], count[order], need[order], rest[order]
    starts = np.concatenate(([0], np.flatnonzero((np.diff(a) != 0) | (np.diff(b) != 0)) + 1))
    return a[starts], b[starts], np.add.reduceat(count, starts), need[starts], np.minimum.reduceat(rest, starts)


class PairCounts:
    """A reduce task's pair counts, :func:`count_pairs` over many immutables at once with numpy:
    per immutable its pages sorted by (n, doc, pos); each page y in its index prefix paired
    with the later pages x while the sizes allow (``n_y >= t*n_x``), kept if the positions
    allow; the counts, alphas and smallest rests added up per pair.  The Python loop over
    pairs was the pair job's largest cost (~40 % of its CPU on bench_scale's web)."""

    CHUNK = 1 << 21
    """Pairs expanded at a time (one immutable on up to ``max_pages`` pages pairs them all)."""
    LISTS = 1 << 14
    """Posting lists counted at a time: a bucket holds a few dozen, too few for numpy to pay."""
    TABLE = 1 << 22
    """Sizes below this are looked up through a table of that many entries at most (larger: np.unique)."""

    def __init__(self, t, k):
        self.t, self.k = t, k
        self.counted = 0
        self.lists = []  # posting lists not yet counted
        self.held = []  # (a, b, count, need, rest) arrays not yet added up
        self.rows = 0
        self.pairs = 0  # distinct pairs after the last adding up
        self.index_lengths = {}
        self.size_limits = {}
        self.needs = {}

    def _table(self, cache, values, function):
        """``function`` of each value, through a cache (the same few sizes come again and again);
        the values present found by a flag per value up to the largest (sizes are small
        non-negative ints), not by np.unique's sort."""
        if not len(values):
            return np.zeros(0, np.int64)
        low, high = int(values.min()), int(values.max())
        if low < 0 or high >= self.TABLE:
            unique, inverse = np.unique(values, return_inverse=True)
            return self._fill(cache, unique, function)[inverse.reshape(-1)]
        present = np.zeros(high + 1, bool)
        present[values] = True
        table = np.zeros(high + 1, np.int64)
        unique = np.flatnonzero(present)
        table[unique] = self._fill(cache, unique, function)
        return table[values]

    @staticmethod
    def _fill(cache, unique, function):
        out = np.empty(len(unique), np.int64)
        for i, v in enumerate(unique.tolist()):
            got = cache.get(v)
            if got is None:
                got = cache[v] = function(v)
            out[i] = got
        return out

    def _largest_partner(self, n_y):
        """The largest n_x with ``not (n_y < t*n_x - EPS)``: the size filter's stop."""
        t = self.t
        n_x = int((n_y + EPS) / t) if t > 0 else 1 << 62
        while n_x > n_y and n_y < t * n_x - EPS:
            n_x -= 1
        while not n_y < t * (n_x + 1) - EPS and n_x < 1 << 62:
            n_x += 1
        return n_x

    def add(self, lists):
        """Count the pairs of these posting lists (``doc n pos,...``, each of two pages or more),
        :data:`LISTS` at a time."""
        self.lists += lists
        if len(self.lists) >= self.LISTS:
            self._count()

    def _count(self):
        lists, self.lists = self.lists, []
        if not lists:
            return
        sizes = np.fromiter((entries.count(",") + 1 for entries in lists), np.int64, len(lists))
        text = " ".join(lists).replace(",", " ")
        try:  # ~5x faster than int() of each field
            numbers = np.fromstring(text, dtype=np.int64, sep=" ")
        except ValueError:
            numbers = None
        if numbers is None or len(numbers) != 3 * int(sizes.sum()):
            raise ValueError(f"not 'doc n pos,...' posting lists: {lists[0][:80]!r}")
        group = np.repeat(np.arange(len(lists), dtype=np.int64), sizes)
        self.count_postings(group, numbers[0::3], numbers[1::3], numbers[2::3])

    def count_postings(self, group, doc, n, pos):
        """Count the pairs of posting lists given as arrays: entry i is ``doc[i] n[i] pos[i]`` of
        list ``group[i]`` (any order; int64).  The job's reducer parses its text into these; the
        direct engine (``direct.py``) hands its own arrays here."""
        if not len(group):
            return
        packed = packed_key(group, n, doc, pos)
        if packed is None:  # 64-bit doc ids (the job's): sort by the four columns
            order = np.lexsort((pos, doc, n, group))
            doc, n, pos, group = doc[order], n[order], pos[order], group[order]
        else:  # small ints (the direct engine's ranks): one key, sorted in place, no gathers
            key, widths = packed
            key.sort()
            group, n, doc, pos = unpack_key(key, widths)
        t, k = self.t, self.k
        indexed = self._table(self.index_lengths, n, lambda v: index_length(v, t, k))
        limit = self._table(self.size_limits, n, self._largest_partner)
        # the end of each page's partners: the first page of its immutable larger than its limit
        span = int(max(n.max(), limit.clip(max=n.max()).max())) + 2
        keys = group * span + n
        stop = np.searchsorted(keys, group * span + np.minimum(limit, span - 1), side="right")
        y = np.flatnonzero(pos < indexed)
        partners = stop[y] - y - 1
        keep = partners > 0
        y, partners = y[keep], partners[keep]
        ends = np.cumsum(partners)
        first = 0
        while first < len(y):
            last = int(np.searchsorted(ends, ends[first] - partners[first] + self.CHUNK, side="right"))
            last = max(last, first + 1)
            self._pairs(y[first:last], partners[first:last], doc, n, pos)
            first = last
        if self.rows - self.pairs >= max(self.pairs, 1 << 16):  # as many new rows as pairs: add up
            self._add_up()

    def _pairs(self, y, partners, doc, n, pos):
        total = int(partners.sum())
        ys = np.repeat(y, partners)
        xs = ys + 1 + np.arange(total) - np.repeat(np.cumsum(partners) - partners, partners)
        n_x, n_y, pos_x, pos_y = n[xs], n[ys], pos[xs], pos[ys]
        t = self.t
        need = self._table(self.needs, n_x + n_y, lambda s: pair_overlap_needed(s, 0, t))
        rest = np.minimum(n_x - pos_x - 1, n_y - pos_y - 1)
        ok = np.minimum(pos_x, pos_y) + 1 + rest >= need
        doc_x, doc_y = doc[xs][ok], doc[ys][ok]
        self.held.append((np.minimum(doc_x, doc_y), np.maximum(doc_x, doc_y), np.ones(len(doc_x), np.int64),
                          need[ok], rest[ok]))
        self.counted += len(doc_x)
        self.rows += len(doc_x)

    def _add_up(self):
        if len(self.held) > 1 or (self.held and self.rows > self.pairs):
            a, b, count, need, rest = (np.concatenate(column) for column in zip(*self.held))
            self.held = [add_up(a, b, count, need, rest)] if len(a) else []
        self.pairs = self.rows = len(self.held[0][0]) if self.held else 0

    def pairs_at_least(self, limit):
        """Do the counts hold ``limit`` distinct pairs or more?  (Posting lists not yet counted
        are not in them: with a small ``limit``, as in tests, they are counted first.)"""
        if limit <= self.LISTS:
            self._count()
        if self.rows < limit:
            return False
        if self.rows - self.pairs >= min(limit, max(self.pairs, 1 << 16)):  # adding up pays (amortised)
            self._add_up()
        return self.pairs >= limit

    def take(self):
        """The counts added up, (doc_a, doc_b, count, alpha, smallest rest) arrays, and emptied."""
        self._count()
        self._add_up()
        empty = np.zeros(0, np.int64)
        out = self.held[0] if self.held else (empty,) * 5
        self.held, self.rows, self.pairs = [], 0, 0
        return out


class MRCandidatePairs(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    INTERNAL_PROTOCOL = RawProtocol
    OUTPUT_PROTOCOL = RawProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--threshold", type=float, required=True, help="immutable Jaccard threshold t")
        self.add_passthru_arg("--max-pages", type=int, required=True,
                              help="immutables on more pages than this are never indexed")
        self.add_passthru_arg("--min-shared", type=int, default=1,
                              help="k: candidate pairs share this many prefix immutables")
        self.add_file_arg("--frequencies", required=True,
                          help="immutable<TAB>df lines (mr_immutable_frequency's output)")
        self.add_passthru_arg("--flush-at", type=int, default=200_000,
                              help="a reducer emits its pair counts once it holds this many pairs (checked after "
                                   "each batch of posting lists)")
        self.add_passthru_arg("--flush-postings", type=int, default=200_000,
                              help="a mapper emits its posting lists when they hold this many entries")
        self.add_passthru_arg("--batch-pages", type=int, default=2000,
                              help="a mapper orders this many pages at a time (each distinct immutable "
                                   "of a batch is looked up once; 1 or less: page by page)")
        self.add_passthru_arg("--buckets", type=int, default=4096,
                              help="shuffle keys: a map task sends one record per bucket of immutables")

    def steps(self):
        return [MRStep(mapper_init=self.start_postings, mapper=self.prefix, mapper_final=self.finish_postings,
                       reducer_init=self.start_pair_counts, reducer=self.pairs_of_bucket,
                       reducer_final=self.finish_pair_counts),
                MRStep(reducer_init=self.start_pruned, reducer=self.keep_pairs,
                       reducer_final=self.finish_pruned)]

    def load_frequencies(self):
        """The side file as a dict (every map task loads it: one split of the whole text, then
        the line-by-line parse only to name a bad line)."""
        with open(self.options.frequencies, encoding="utf-8") as fh:
            text = fh.read()
        body = text[:-1] if text.endswith("\n") else text
        fields = body.replace("\n", "\t").split("\t") if body else []
        counts = fields[1::2]
        if len(fields) % 2 or body.count("\n") + 1 != len(counts) > 0 or not all(map(str.isdigit, counts)):
            for number, line in enumerate(text.splitlines(), 1):
                immutable, tab, df = line.partition("\t")
                if not tab or not df.isdigit():
                    raise ValueError(f"{self.options.frequencies}:{number}: not 'immutable<TAB>df': {line[:80]!r}")
        self.df = dict(zip(fields[0::2], map(int, counts)))

    def start_postings(self):
        self.load_frequencies()
        self.postings = {}
        self.held = 0
        self.prefix_dropped = 0
        self.docs: list[str] = []  # the batch of pages not yet ordered
        self.texts: list[str] = []
        self.prefix_lengths: dict[int, int] = {}  # n -> prefix_length(n, t, k)

    def prefix(self, _, line):
        doc, tab, immutables = line.partition("\t")
        if not tab or not doc.lstrip("-").isdigit():
            raise ValueError(f"not a page line 'doc<TAB>immutables': {line[:80]!r}")
        self.docs.append(doc)
        self.texts.append(immutables)
        if len(self.docs) >= self.options.batch_pages:
            yield from self.prefix_batch()

    def finish_postings(self):
        yield from self.prefix_batch()
        yield from self.flush_postings()

    def prefix_batch(self):
        """The buffered pages' probe prefixes, page after page, added to the posting lists
        (flushed after the same pages as one page at a time would)."""
        if not self.docs:
            return
        docs, texts = self.docs, self.texts
        self.docs, self.texts = [], []
        max_pages, flush_at = self.options.max_pages, self.options.flush_postings
        ordered = order_pages(texts, self.df, max_pages)
        starts = ordered.starts
        # the order (dropped, df, immutable) is (df, immutable): dropped means df > max_pages,
        # so each page's dropped immutables are the end of its shared ones
        kept = np.bincount(np.repeat(np.arange(len(docs)), np.diff(starts))[ordered.frequencies <= max_pages],
                           minlength=len(docs)).tolist()
        counts = np.diff(starts)
        # per page: how many it emits (its probe prefix past its df-1 immutables, up to a dropped one)
        stops, emitted, dropped = (column.tolist() for column in probe_prefixes(
            ordered.sizes, counts, np.array(kept, np.int64), self.options.threshold, self.options.min_shared,
            self.prefix_lengths))
        first = 0  # the first page not yet added to the posting lists
        for i, stop in enumerate(stops):
            if stop <= 0:
                continue
            self.prefix_dropped += dropped[i]  # the prefix reaches a dropped immutable: it stops there
            self.held += stop
            if self.held >= flush_at:
                self.add_postings(docs, ordered, emitted, first, i + 1)
                first = i + 1
                yield from self.flush_postings()
        self.add_postings(docs, ordered, emitted, first, len(docs))

    def add_postings(self, docs, ordered, emitted, first, end):
        """Add ``doc n pos`` for the first ``emitted[i]`` shared immutables of pages first..end-1
        (pos counts the page's df-1 immutables, which come first)."""
        starts, sizes = ordered.starts, ordered.sizes
        take = emitted[first:end]
        if not any(take):
            return
        pages = np.repeat(np.arange(first, end), take)
        rank = np.arange(len(pages)) - np.repeat(np.cumsum(take) - take, take)  # within its page
        at = starts[pages] + rank
        positions = sizes[pages] - (starts[pages + 1] - starts[pages]) + rank
        heads = pa.array([f"{doc} {n} " for doc, n in zip(docs[first:end], sizes[first:end].tolist())])
        entries = pc.binary_join_element_wise(heads.take(pages - first), pc.cast(positions, pa.string()), "")
        # one "entry,entry,..." chunk per immutable (its entries in page order), the immutables
        # in the order of their first entry: the posting lists, and their order, are the same as
        # one entry at a time would give (flush_postings joins the chunks with ",")
        codes = ordered.codes[at]
        by_code = np.argsort(codes, kind="stable")
        grouped = codes[by_code]
        breaks = np.flatnonzero(np.diff(grouped)) + 1
        bounds = np.concatenate(([0], breaks, [len(grouped)])).astype(np.int64)
        chunks = pc.binary_join(pa.LargeListArray.from_arrays(pa.array(bounds), entries.take(by_code)), ",").to_pylist()
        order = np.argsort(by_code[bounds[:-1]])  # by first entry
        words = ordered.words
        postings = self.postings
        get = postings.get
        for code, chunk in zip(grouped[bounds[:-1]][order].tolist(), [chunks[i] for i in order.tolist()]):
            word = words[code]
            held = get(word)
            if held is None:
                postings[word] = [chunk]
            else:
                held.append(chunk)

    def flush_postings(self):
        """In-mapper combining: the task's posting lists, one record per bucket of immutables,
        ``bucket -> immutable<TAB>doc n pos,doc n pos<TAB>immutable<TAB>...`` (a list holds one
        chunk ``doc n pos,...`` per batch of pages)."""
        buckets = self.options.buckets
        records: dict[int, list[str]] = {}
        for immutable, entries in self.postings.items():
            records.setdefault(bucket_of(immutable, buckets), []).append(f"{immutable}\t{','.join(entries)}")
        for bucket, held in records.items():
            yield str(bucket), "\t".join(held)
        if self.prefix_dropped:
            yield PREFIX_DROPPED, str(self.prefix_dropped)
        self.postings.clear()
        self.held = self.prefix_dropped = 0

    def start_pair_counts(self):
        self.pair_counts = PairCounts(self.options.threshold, self.options.min_shared)

    def pairs_of_bucket(self, key, values):
        if key.startswith("#"):
            yield key, f"{sum(map(int, values))} 0 0"
            return
        postings: dict[str, str] = {}
        for value in values:
            fields = value.split("\t")
            for immutable, entries in zip(fields[0::2], fields[1::2]):
                held = postings.get(immutable)
                postings[immutable] = entries if held is None else f"{held},{entries}"
        self.pair_counts.add([entries for entries in postings.values() if "," in entries])  # else one page
        if self.pair_counts.pairs_at_least(self.options.flush_at):
            yield from self.flush_pair_counts()

    def flush_pair_counts(self):
        """In-reducer combining: a pair counted at several immutables of this task is one entry
        ``doc_a doc_b count alpha rest`` (rest: the smallest, at the last shared immutable counted:
        rests only shrink along the global order), the entries sent one record per bucket of pairs."""
        buckets = self.options.buckets
        a, b, count, need, rest = self.pair_counts.take()
        if not len(a):
            return
        bucket = (a % buckets + b % buckets) % buckets  # (a + b) mod buckets without int64 overflow
        order = np.argsort(bucket, kind="stable")
        bucket = bucket[order]
        bounds = np.concatenate(([0], np.flatnonzero(np.diff(bucket)) + 1, [len(bucket)])).tolist()
        entries = [f"{x} {y} {c} {n} {r}" for x, y, c, n, r in zip(
            a[order].tolist(), b[order].tolist(), count[order].tolist(), need[order].tolist(), rest[order].tolist())]
        for start, end in zip(bounds[:-1], bounds[1:]):
            yield str(bucket[start]), ",".join(entries[start:end])

    def finish_pair_counts(self):
        yield from self.flush_pair_counts()
        yield PAIRS_COUNTED, f"{self.pair_counts.counted} 0 0"

    def start_pruned(self):
        self.pruned = 0

    def keep_pairs(self, key, values):
        if key.startswith("#"):
            yield key, str(sum(int(value.split()[0]) for value in values))
            return
        totals: dict[tuple[str, str], tuple[int, int, int]] = {}
        for value in values:
            for entry in value.split(","):
                a, b, count, need, rest = entry.split()
                held = totals.get((a, b))
                totals[(a, b)] = ((int(count), int(need), int(rest)) if held is None else
                                  (held[0] + int(count), held[1], min(held[2], int(rest))))
        total, need, rest = (np.array(column, np.int64).reshape(-1) for column in zip(*totals.values()))
        kept, pruned = candidate_filter(total, need, rest, self.options.min_shared)
        self.pruned += int(pruned.sum())
        for (a, b), n, keep in zip(totals, total.tolist(), kept.tolist()):
            if keep:
                yield f"{a} {b}", str(n)

    def finish_pruned(self):
        yield BOUND_PRUNED, str(self.pruned)


if __name__ == "__main__":
    MRCandidatePairs.run()
