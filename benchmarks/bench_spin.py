"""Spin-detector benchmark: partition speed, and candidate pairs versus all pairs.

Run from the repository root::

    .venv/bin/python benchmarks/bench_spin.py                  # 10,000 and 100,000 articles
    .venv/bin/python benchmarks/bench_spin.py --sizes 2000     # quick
    .venv/bin/python benchmarks/bench_spin.py --runner local   # the jobs on mrjob's local runner, 2 cores
    .venv/bin/python benchmarks/bench_spin.py --stage --sizes 200 10000 40000 --runner local
        # the whole stage on real-text pages: peak RSS per process, time (bench_spin_stage.py)

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
3. **Candidate pairs** with the detector's two mrjob jobs (``find_candidates``: document
   frequencies, then the prefix filter) at the defaults t = 0.6, k = 3, max_pages 10,000, on
   ``--runner`` (default ``inline``): wall seconds, articles/s, candidate pairs and their share
   of all pairs.  Each article's immutables are streamed to the jobs' input file as it is
   partitioned and kept only as sorted integer ids (4 bytes each) for the recall checks.
4. **Recall.** Against exhaustive comparison (sparse matrix product, scipy): of all pairs up
   to ``--exhaustive-max`` articles; above, of ``--sample`` random articles with every other
   article (every pair >= t that involves a sampled article must be a candidate); and
   against the planted spun pairs on every size.
6. ``--stage``: instead of 1-5, the whole stage (``--engine``, default ``mapreduce``) on
   real-text pages of ~145 KB of HTML, each size in a fresh child process: wall time, peak
   RSS of the stage's process and of the largest process it started (``bench_spin_stage.py``).
5. ``--group-copies``: as the detector does since version 4, articles with the same immutable
   set go to the jobs as one (the smallest index); candidate pairs of groups are expanded back to
   article pairs, and every pair inside a group counts as above t. Without it: every article goes
   to the jobs (the path before grouping), for a before/after figure on the same corpus.
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

from bench_spin_stage import measure, real_texts, report  # noqa: E402
from spinning import moby_spin_dictionary, spin_words, spinner_lines  # noqa: E402

from spamflow.words import words  # noqa: E402
from spamflow_spin.candidates import find_candidates  # noqa: E402
from spamflow_spin.copies import between_group_pairs, group_same_immutables, within_group_pairs  # noqa: E402
from spamflow_spin.dictionary import load_dictionary  # noqa: E402
from spamflow_spin.partition import partition  # noqa: E402

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


def exhaustive(docs: list[np.ndarray], t: float, rows: np.ndarray | None = None) -> set[tuple[int, int]]:
    """All pairs with Jaccard >= t by a sparse product of the article-immutable matrix: of every
    article with every other, or (``rows``) of a sample of articles with every other."""
    n = len(docs)
    sizes = np.array([len(d) for d in docs], dtype=np.float64)
    indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    cols = np.concatenate(docs)
    m = sp.csr_matrix((np.ones(len(cols), dtype=np.float32), cols, indptr), shape=(n, int(cols.max()) + 1))
    rows = np.arange(n) if rows is None else rows
    mt = m.T.tocsr()
    out = set()
    for start in range(0, len(rows), 500):
        chunk = rows[start:start + 500]
        block = (m[chunk] @ mt).tocoo()
        i, j, inter = chunk[block.row], block.col, block.data.astype(np.float64)
        keep = (i != j) & (inter >= t * (sizes[i] + sizes[j] - inter) - 1e-6)
        out |= {(min(a, b), max(a, b)) for a, b in zip(i[keep].tolist(), j[keep].tolist())}
    return out


def jaccard_ids(a: np.ndarray, b: np.ndarray) -> float:
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)


def run_size(n: int, spinner, dictionary, tmp: Path, a: argparse.Namespace) -> None:
    """One corpus size: partition (streamed to the jobs' input file), the two jobs, recall."""
    rng = random.Random(n)
    articles, planted = corpus(n, spinner, rng)
    n_words = sum(map(len, articles))
    print(f"\n## {n:,} articles, {n_words / n:.0f} words each on average, {len(planted):,} planted spun pairs")
    ids: dict[str, int] = {}
    docs = []
    lines = tmp / f"immutables{n}.tsv"
    sec = 0.0
    with open(lines, "w", encoding="utf-8") as fh:
        for i in range(n):
            t0 = time.process_time()
            part = partition(articles[i], dictionary)
            sec += time.process_time() - t0
            fh.write(f"{i}\t{' '.join(part.immutables)}\n")
            docs.append(np.array(sorted({ids.setdefault(x, len(ids)) for x in part.immutables}), dtype=np.int32))
            articles[i] = []  # free the words as we go
    del ids
    n_imm = sum(map(len, docs))
    print(f"partition: {sec:.2f} s CPU, {n / sec:,.0f} articles/s, {n_words / sec / 1e6:.2f} M words/s "
          f"(target >= 2,000 articles/s per core: {'MET' if n / sec >= 2000 else 'NOT MET'}); "
          f"{n_imm / n:.0f} immutables per article")
    t0 = time.time()
    groups = (group_same_immutables({i: d.tolist() for i, d in enumerate(docs)}) if a.group_copies
              else {i: [i] for i in range(n)})
    if a.group_copies:
        job_lines = tmp / f"representatives{n}.tsv"
        with open(lines, encoding="utf-8") as src, open(job_lines, "w", encoding="utf-8") as dst:
            dst.writelines(line for line in src if int(line.partition("\t")[0]) in groups)
        lines = job_lines
    found = find_candidates(lines, tmp / f"work{n}", threshold=T, max_pages=a.max_pages, min_shared=K,
                            runner=a.runner, runner_args=RUNNER_ARGS.get(a.runner, ()))
    above = set(within_group_pairs(groups))
    above |= {p for ra, rb in found.pairs if jaccard_ids(docs[ra], docs[rb]) >= T
              for p in between_group_pairs(groups, ra, rb)}
    wall = time.time() - t0
    all_pairs = n * (n - 1) // 2
    inside = len(within_group_pairs(groups))
    print(f"grouping of copies {'on' if a.group_copies else 'off'}: {len(groups):,} articles go to the jobs, "
          f"{inside:,} pairs inside groups of equal immutables")
    print(f"candidate jobs (-r {a.runner}) and expansion: {wall:.1f} s wall, {n / wall:,.0f} articles/s; "
          f"{found.shared_immutables:,} immutables on 2+ pages, {found.dropped:,} over max_pages {a.max_pages}, "
          f"{found.prefix_dropped:,} articles with a dropped immutable in their prefix; pair counts made at shared "
          f"prefix immutables: {found.pairs_counted:,} ({found.pairs_counted / n:.1f} per article)")
    print(f"candidate pairs made by the jobs: {len(found.pairs):,} of {all_pairs:,} pairs = "
          f"{len(found.pairs) / all_pairs:.4%} (target < 1 %: {'MET' if len(found.pairs) / all_pairs < 0.01 else 'NOT MET'})")
    print(f"article pairs with immutable Jaccard >= {T}: {len(above):,}; planted spun pairs found: "
          f"{len(planted & above):,} / {len(planted):,} = {len(planted & above) / max(1, len(planted)):.2%}")
    t0 = time.time()
    if n <= a.exhaustive_max:
        exact = exhaustive(docs, T)
        what = f"all {all_pairs:,} pairs"
    else:
        sample = np.sort(np.random.default_rng(0).choice(n, a.sample, replace=False))
        exact = exhaustive(docs, T, sample)
        in_sample = set(sample.tolist())
        above = {p for p in above if p[0] in in_sample or p[1] in in_sample}
        what = f"every pair of {a.sample:,} random articles with all {n:,}"
    recall = len(exact & above) / max(1, len(exact))
    print(f"exhaustive ({what}, scipy, {time.time() - t0:.0f} s): {len(exact):,} pairs >= {T}; recall of the "
          f"candidates: {recall:.2%} (target > 99 %: {'MET' if recall > 0.99 else 'NOT MET'})")


RUNNER_ARGS = {"local": ("--num-cores", "2")}


def stage(a: argparse.Namespace) -> None:
    """``--stage``: the corpus pools once, then each size built and measured in a child."""
    t0 = time.time()
    shapes, runs, note = real_texts()
    print(f"{note}; {len(shapes)} pages with 40+ words, {len(runs):,} runs of 20 words ({time.time() - t0:.0f} s)")
    moby = DATA / "moby-thesaurus" / "mthesaur_words.txt.gz"
    vocabulary = [w for w, _ in Counter(w for r in runs for w in r).most_common(5000)]
    spinner = moby_spin_dictionary(moby, vocabulary) if moby.exists() else {
        (w,): [f"{w}x", f"{w}y"] for w in sorted(vocabulary)[::7]}
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        dict_path = Path(tmp) / "spinner.txt"
        dict_path.write_text("\n".join(spinner_lines(spinner)) + "\n", encoding="utf-8")
        for n in a.sizes:
            figures.append(measure(n, Path(tmp), shapes, runs, spinner, dict_path, a.engine, a.runner))
            f = figures[-1]
            print(f"{n:,} pages: built in {f['build']:.0f} s; stage {f['wall']:.1f} s, peak RSS stage "
                  f"{f['rss_stage'] / 2**20:,.0f} MB, largest child {f['rss_largest_child'] / 2**20:,.0f} MB", flush=True)
    report(figures, a.engine, a.runner)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    ap.add_argument("--runner", default="inline", choices=["inline", "local"],
                    help="mrjob runner for the candidate jobs (local: --num-cores 2)")
    ap.add_argument("--exhaustive-max", type=int, default=10000,
                    help="up to this size every pair is compared; above, --sample articles with all others")
    ap.add_argument("--sample", type=int, default=1000)
    ap.add_argument("--max-pages", type=int, default=10000, help="the detector's max_pages (its default)")
    ap.add_argument("--group-copies", action="store_true",
                    help="send one article per set of equal immutables to the jobs (the detector's path)")
    ap.add_argument("--stage", action="store_true",
                    help="the whole spin stage on real-text pages (peak RSS per process, time); --sizes, --runner")
    ap.add_argument("--engine", default="mapreduce", choices=["mapreduce", "memory"], help="with --stage")
    a = ap.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs visible, load {os.getloadavg()[0]:.1f}")
    if a.stage:
        stage(a)
        return
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
        for n in a.sizes:
            run_size(n, spinner, dictionary, Path(tmp), a)


if __name__ == "__main__":
    main()
