"""Two ways for spin's pair job to order a page's immutables by document frequency, timed on
one run's own files: the dictionary every map task builds from ``frequencies.tsv`` today,
and a sorted table of 64-bit xxh3 hashes a task could map from disk (docs/spin.md, Limits).

    .venv/bin/python benchmarks/spin_df_lookup.py STAGE/work/SNAPSHOT [--pages 20000]

``STAGE/work/SNAPSHOT`` is a spin stage's work folder on the MapReduce engine (it holds
``frequencies.tsv`` and ``immutables.tsv``; ``bench_scale.py --keep`` leaves them).  Prints
the time to build each structure, the CPU seconds of each way over the first ``--pages``
pages (twice), and whether they give the same orderings.
"""

from __future__ import annotations

import argparse
import itertools
import time
from itertools import compress
from pathlib import Path

import numpy as np
from xxhash import xxh3_64_intdigest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work", type=Path, help="a spin stage's work/<snapshot> folder")
    ap.add_argument("--pages", type=int, default=20_000)
    args = ap.parse_args()
    text = (args.work / "frequencies.tsv").read_text(encoding="utf-8")
    fields = text[:-1].replace("\n", "\t").split("\t")
    names, counts = fields[0::2], list(map(int, fields[1::2]))
    del text, fields
    started = time.process_time()
    df = dict(zip(names, counts))
    print(f"{len(df):,} immutables; dictionary built in {time.process_time() - started:.2f} CPU s")
    started = time.process_time()
    hashes = np.fromiter((xxh3_64_intdigest(n.encode()) for n in names), np.uint64, len(names))
    order = np.argsort(hashes)
    hashes, frequency = hashes[order], np.asarray(counts, np.uint32)[order]
    print(f"hash table built in {time.process_time() - started:.2f} CPU s, "
          f"{int((np.diff(hashes) == 0).sum())} colliding hashes")
    del names, counts
    with open(args.work / "immutables.tsv", encoding="utf-8") as fh:
        pages = [line.rstrip("\n").split("\t", 1)[1].split() for line in itertools.islice(fh, args.pages)]
    size = len(hashes)
    for _ in range(2):
        started = time.process_time()
        by_dict = []
        for words in pages:
            get = df.get
            by_dict.append(sorted([(f, w) for w in words if (f := get(w))]))
        dict_s = time.process_time() - started
        started = time.process_time()
        by_table = []
        for words in pages:
            wanted = np.fromiter((xxh3_64_intdigest(w.encode()) for w in words), np.uint64, len(words))
            at = np.searchsorted(hashes, wanted)
            at[at == size] = 0
            hit = hashes[at] == wanted
            by_table.append(sorted(zip(frequency[at[hit]].tolist(), compress(words, hit.tolist()))))
        table_s = time.process_time() - started
        print(f"{len(pages):,} pages ordered: dictionary {dict_s:.2f} CPU s, hash table {table_s:.2f} CPU s, "
              f"same orderings: {by_dict == by_table}")


if __name__ == "__main__":
    main()
