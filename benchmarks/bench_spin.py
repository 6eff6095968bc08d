"""Spin-detector benchmark: partition speed, and candidate pairs versus all pairs.

Run from the repository root::

    .venv/bin/python benchmarks/bench_spin.py                 # 10,000 and 20,000 articles
    .venv/bin/python benchmarks/bench_spin.py --sizes 100000 --mr-max 100 --exhaustive-max 100
        # partition at 100k; its candidate count needs more than 7 GB (docs/spin.md, Cost)
    .venv/bin/python benchmarks/bench_spin.py --sizes 2000    # quick

1. **Corpus.** Synthetic articles of ~400 words (normal, sd 60) whose tokens are, with
   probability 0.15, a word of the spinner dictionary (uniform over its one-word heads) and
   otherwise a made-up word drawn from a Zipf law (exponent 1.1, unbounded vocabulary: the
   top word has ~9 % of the tokens, like "the", and most articles have words no other has,
   like names).  1 % of the articles are bases of campaigns, each spun into 9 more copies
   (every 3rd word, TBS's recommended setting) with the Moby-derived spinner dictionary of
   ``spinning.py`` (heads: the 5,000 most frequent words of the PAN13 source documents), which
   the detector also uses here.  Partition speed is also measured on 2,000 real-text articles
   (20 random sentences of the PAN13 source documents each).
2. **Partition** (``partition``, longest match) of every article, timed on one core:
   articles/s and words/s.
3. **Candidate pairs** with the mrjob job (``-r inline``) at the defaults t = 0.6, k = 3:
   seconds, articles/s, candidate pairs and their share of all pairs.  Above ``--mr-max``
   articles the job is not run (the inline runner is a test runner, ~50k records/s); the
   candidates are then counted with an in-process prefix filter that implements the same
   rule, checked equal to the job's output on the smaller size, and the job's time is
   extrapolated linearly (EXTRAPOLATED).
4. **Recall.** Against exhaustive comparison (sparse matrix product over all pairs, scipy)
   on sizes up to ``--exhaustive-max``; against the planted spun pairs on every size.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import tarfile
import tempfile
import time
from collections import Counter
from itertools import combinations
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).parent))

from spinning import moby_spin_dictionary, spin_words, spinner_lines  # noqa: E402

from spamflow.mr import run_job  # noqa: E402
from spamflow.words import words  # noqa: E402
from spamflow_spin.dictionary import load_dictionary  # noqa: E402
from spamflow_spin.mr_candidate_pairs import (  # noqa: E402
    MRCandidatePairs,
    prefix_length,
    shared_needed,
    sizes_compatible,
)
from spamflow_spin.partition import partition  # noqa: E402
from spamflow_spin.similarity import jaccard  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
T = 0.6
K = 3


def sentence_pool() -> tuple[list[list[str]], bool]:
    path = DATA / "pan13-text-alignment-no-obfuscation-subset" / "pan13-02-subset.tar.gz"
    if not path.exists():
        rng = random.Random(1)
        vocab = [f"w{i}" for i in range(50000)]
        weights = [1 / (i + 2.7) for i in range(50000)]
        return [rng.choices(vocab, weights, k=rng.randint(8, 30)) for _ in range(60000)], True
    pool = []
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            if m.isfile() and "/src/" in m.name:
                fh = tar.extractfile(m)
                assert fh is not None
                text = fh.read().decode("utf-8", errors="replace")
                pool += [w for w in (words(s) for s in re.split(r"(?<=[.!?])\s+", text)) if len(w) >= 5]
    return pool, False


def corpus(n: int, spinner, rng: random.Random):
    """n synthetic articles (word lists) and the planted spun pairs (index pairs)."""
    heads = sorted(h[0] for h in spinner if len(h) == 1)
    zipf = np.random.default_rng(n)
    names: dict[int, str] = {}  # one string object per made-up word (memory at 100k articles)

    def article() -> list[str]:
        size = max(50, int(rng.gauss(400, 60)))
        ranks = zipf.zipf(1.1, size)
        return [rng.choice(heads) if rng.random() < 0.15 else names.get(r) or names.setdefault(r, f"w{r}")
                for r in ranks.tolist()]

    articles: list[list[str]] = []
    planted: set[tuple[int, int]] = set()
    n_bases = n // 100
    for _ in range(n_bases):
        base = article()
        first = len(articles)
        articles.append(base)
        articles += [spin_words(base, spinner, 3, rng) for _ in range(9)]
        planted |= set(combinations(range(first, len(articles)), 2))
    while len(articles) < n:
        articles.append(article())
    return articles, planted


def prefix_filter_pairs(sets: list[frozenset[str]], t: float, k: int) -> set[tuple[int, int]]:
    """The job's rule in one process (a second implementation, for counting at scale)."""
    df = Counter(x for s in sets for x in s)
    index: dict[str, list[int]] = {}
    for doc, s in enumerate(sets):
        for x in sorted(s, key=lambda x: (df[x], x))[:prefix_length(len(s), t, k)]:
            if df[x] > 1:
                index.setdefault(x, []).append(doc)
    shared: Counter[tuple[int, int]] = Counter()
    for docs in index.values():
        for a, b in combinations(docs, 2):
            if sizes_compatible(len(sets[a]), len(sets[b]), t):
                shared[(a, b)] += 1
    return {p for p, c in shared.items() if c >= shared_needed(len(sets[p[0]]), len(sets[p[1]]), t, k)}


def prefix_filter_pairs_np(docs: list[np.ndarray], t: float, k: int,
                           max_pages: int) -> tuple[dict[tuple[int, int], int], int]:
    """The same rule on integer token ids in numpy arrays (memory: 4 bytes per immutable, 8 per
    emitted pair), for sizes where Python sets of strings do not fit; pair -> shared prefix immutables."""
    df = np.bincount(np.concatenate(docs))
    tokens, owners = [], []
    prefix_dropped = 0
    for doc, ids in enumerate(docs):
        order = np.lexsort((ids, df[ids], df[ids] > max_pages))  # as the job: dropped immutables last
        prefix = ids[order[:prefix_length(len(ids), t, k)]]
        prefix_dropped += bool((df[prefix] > max_pages).any())
        prefix = prefix[(df[prefix] > 1) & (df[prefix] <= max_pages)]
        tokens.append(prefix)
        owners.append(np.full(len(prefix), doc, dtype=np.int64))
    tok, own = np.concatenate(tokens), np.concatenate(owners)
    order = np.argsort(tok, kind="stable")
    tok, own = tok[order], own[order]
    bounds = np.flatnonzero(np.diff(tok)) + 1
    sizes = np.array([len(d) for d in docs], dtype=np.int64)
    keys = []
    for group in np.split(own, bounds):  # step 3: the pairs of each prefix immutable, vectorised
        if len(group) < 2:
            continue
        i, j = np.triu_indices(len(group), 1)
        a, b = group[i], group[j]
        small, big = np.minimum(sizes[a], sizes[b]), np.maximum(sizes[a], sizes[b])
        ok = small >= t * big - 1e-9
        keys.append(a[ok] * len(docs) + b[ok])
    pair_keys, shared = np.unique(np.concatenate(keys), return_counts=True)  # step 4
    a, b = pair_keys // len(docs), pair_keys % len(docs)
    need = np.minimum(k, np.minimum(np.ceil(t * sizes[a] - 1e-9), np.ceil(t * sizes[b] - 1e-9)))
    keep = shared >= need
    return {(int(x), int(y)): int(c) for x, y, c in zip(a[keep], b[keep], shared[keep])}, prefix_dropped


def exhaustive(sets: list[frozenset[str]], t: float) -> set[tuple[int, int]]:
    """All pairs with Jaccard >= t, by a sparse product of the article-immutable matrix."""
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for i, s in enumerate(sets):
        for x in s:
            rows.append(i)
            cols.append(vocab.setdefault(x, len(vocab)))
    m = sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(sets), len(vocab)))
    sizes = np.array([len(s) for s in sets], dtype=np.float32)
    out = set()
    for start in range(0, len(sets), 500):
        block = (m[start:start + 500] @ m.T).tocoo()
        i, j, inter = block.row + start, block.col, block.data
        keep = (i < j) & (inter >= t * (sizes[i] + sizes[j] - inter) - 1e-6)
        out |= set(zip(i[keep].tolist(), j[keep].tolist()))
    return out


def large(articles: list[list[str]], planted: set[tuple[int, int]], dictionary, n_words: int,
          mr_rate: float | None, max_pages: int) -> None:
    """Sizes above --mr-max: partition streamed into integer ids, the numpy prefix filter."""
    n = len(articles)
    ids: dict[str, int] = {}
    docs = []
    sec = 0.0
    for i in range(n):
        t0 = time.process_time()
        part = partition(articles[i], dictionary)
        sec += time.process_time() - t0
        docs.append(np.array(sorted({ids.setdefault(x, len(ids)) for x in part.immutables}), dtype=np.int32))
        articles[i] = []  # free the words as we go
    print(f"partition: {sec:.2f} s CPU, {n / sec:,.0f} articles/s, {n_words / sec / 1e6:.2f} M words/s "
          f"(target >= 2,000 articles/s per core: {'MET' if n / sec >= 2000 else 'NOT MET'})")
    if mr_rate:
        print(f"candidate job (inline): EXTRAPOLATED {n / mr_rate:.0f} s at {mr_rate:,.0f} articles/s")
    t0 = time.process_time()
    pairs, prefix_dropped = prefix_filter_pairs_np(docs, T, K, max_pages)
    sec_fast = time.process_time() - t0
    all_pairs = n * (n - 1) // 2
    print(f"in-process prefix filter (numpy, max_pages {max_pages}): {sec_fast:.1f} s CPU, {n / sec_fast:,.0f} "
          f"articles/s; {prefix_dropped:,} articles had a dropped immutable in their prefix")
    print(f"candidate pairs: {len(pairs):,} of {all_pairs:,} pairs = {len(pairs) / all_pairs:.4%} "
          f"(target < 1 %: {'MET' if len(pairs) / all_pairs < 0.01 else 'NOT MET'})")
    above = set()
    for a, b in pairs:
        inter = len(np.intersect1d(docs[a], docs[b], assume_unique=True))
        if inter >= T * (len(docs[a]) + len(docs[b]) - inter) - 1e-9:
            above.add((a, b))
    print(f"pairs with immutable Jaccard >= {T} among candidates: {len(above):,}; planted spun pairs: "
          f"{len(planted):,}, found: {len(planted & above) / max(1, len(planted)):.2%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000, 20000])
    ap.add_argument("--mr-max", type=int, default=10000)
    ap.add_argument("--exhaustive-max", type=int, default=10000)
    ap.add_argument("--max-pages", type=int, default=2000,
                    help="the job's max_pages for sizes above --mr-max (the numpy path's pair memory)")
    a = ap.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs visible, load {os.getloadavg()[0]:.1f}")
    pool, synthetic = sentence_pool()
    print(f"sentence pool: {len(pool)} sentences" + (" SYNTHETIC" if synthetic else " (PAN13 source documents)"))
    moby = DATA / "moby-thesaurus" / "mthesaur_words.txt.gz"
    vocabulary = [w for w, _ in Counter(w for s in pool for w in s).most_common(5000)]  # Moby build is slow
    spinner = moby_spin_dictionary(moby, vocabulary) if moby.exists() else {
        (w,): [f"{w}x", f"{w}y"] for w in sorted(vocabulary)[::7]}
    with tempfile.TemporaryDirectory() as tmp:
        dict_path = Path(tmp) / "spinner.txt"
        dict_path.write_text("\n".join(spinner_lines(spinner)) + "\n", encoding="utf-8")
        dictionary = load_dictionary([dict_path])
        print(f"dictionary: {len(dictionary.heads)} heads, {len(dictionary)} entries")
        real = [[w for s in random.Random(0).sample(pool, 20) for w in s] for _ in range(2000)]
        t0 = time.process_time()
        for text in real:
            partition(text, dictionary)
        sec = time.process_time() - t0
        print(f"partition of 2,000 real-text articles ({sum(map(len, real)) / 2000:.0f} words): "
              f"{2000 / sec:,.0f} articles/s on one core")
        mr_rate = None
        for n in a.sizes:
            rng = random.Random(n)
            articles, planted = corpus(n, spinner, rng)
            n_words = sum(map(len, articles))
            print(f"\n## {n:,} articles, {n_words / n:.0f} words each on average")
            if n > a.mr_max:
                large(articles, planted, dictionary, n_words, mr_rate, a.max_pages)
                continue
            t0 = time.process_time()
            parts = [partition(w, dictionary) for w in articles]
            sec = time.process_time() - t0
            print(f"partition: {sec:.2f} s CPU, {n / sec:,.0f} articles/s, {n_words / sec / 1e6:.2f} M words/s "
                  f"(target >= 2,000 articles/s per core: {'MET' if n / sec >= 2000 else 'NOT MET'})")
            sets = [frozenset(p.immutables) for p in parts]
            t0 = time.process_time()
            fast = prefix_filter_pairs(sets, T, K)
            sec_fast = time.process_time() - t0
            all_pairs = n * (n - 1) // 2
            if n <= a.mr_max:
                lines = Path(tmp) / f"imm{n}.tsv"
                lines.write_text("".join(f"{i}\t{' '.join(p.immutables)}\n" for i, p in enumerate(parts)))
                t0 = time.time()
                out = run_job(MRCandidatePairs, [lines], Path(tmp) / f"pairs{n}.tsv", runner="inline",
                              args=["--threshold", repr(T), "--max-pages", "10000", "--min-shared", str(K)])
                mr_sec = time.time() - t0
                mr_rate = n / mr_sec
                job = {tuple(map(int, ln.split("\t")[0].split())) for ln in out.read_text().splitlines()
                       if not ln.startswith("#")}
                print(f"candidate job (inline): {mr_sec:.1f} s, {mr_rate:,.0f} articles/s; "
                      f"same pairs as the in-process prefix filter: {job == fast}")
            elif mr_rate:
                print(f"candidate job (inline): EXTRAPOLATED {n / mr_rate:.0f} s at {mr_rate:,.0f} articles/s")
            print(f"in-process prefix filter: {sec_fast:.1f} s CPU, {n / sec_fast:,.0f} articles/s")
            print(f"candidate pairs: {len(fast):,} of {all_pairs:,} pairs = {len(fast) / all_pairs:.4%} "
                  f"(target < 1 %: {'MET' if len(fast) / all_pairs < 0.01 else 'NOT MET'})")
            above = {p for p in fast if jaccard(sets[p[0]], sets[p[1]]) >= T}
            print(f"pairs with immutable Jaccard >= {T} among candidates: {len(above):,}; planted spun pairs: "
                  f"{len(planted):,}, found: {len(planted & above) / max(1, len(planted)):.2%}")
            if n <= a.exhaustive_max:
                t0 = time.time()
                exact = exhaustive(sets, T)
                print(f"exhaustive (all {all_pairs:,} pairs, scipy, {time.time() - t0:.0f} s): {len(exact):,} pairs "
                      f">= {T}; recall of the candidates: {len(exact & above) / max(1, len(exact)):.2%}")
            print(f"prefix length at n=200 immutables: {prefix_length(200, T, K)} of 200")


if __name__ == "__main__":
    main()
