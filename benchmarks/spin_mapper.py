"""spin's pair-job mapper page by page (the code before --batch-pages, kept here) against the
batched one (``order_pages``), on one run's own files, in the same process.

    .venv/bin/python benchmarks/spin_mapper.py STAGE/work/SNAPSHOT [--pages 10000 50000] [--batch-pages 2000]

``STAGE/work/SNAPSHOT`` is a spin stage's work folder on the MapReduce engine (it holds
``frequencies.tsv`` and ``immutables.tsv``; ``bench_scale.py --keep`` leaves them).  The side
file is loaded once (its load time printed); then, for each number of pages, the first pages
of ``immutables.tsv`` go through both mappers (the task's whole map phase: mapper calls and
mapper_final), twice, and the CPU seconds are printed with whether both sent the same
records in the same order.  ``--pad-dictionary N`` makes the dictionary N entries larger
with made-up immutables interleaved with the real ones (as a larger crawl's vocabulary would
be: 1.55M immutables at 5 x 10^4 pages a snapshot, 15.4M at 5 x 10^5), to see how each
mapper's time grows with the dictionary alone.
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Iterator
from pathlib import Path

from spamflow_spin.mr_candidate_pairs import MRCandidatePairs, prefix_length


def old_prefix(job: MRCandidatePairs, line: str) -> Iterator[tuple[str, str]]:
    """MRCandidatePairs.prefix before the batches (commit f7cfb23), verbatim but for the name."""
    doc, tab, immutables = line.partition("\t")
    if not tab or not doc.lstrip("-").isdigit():
        raise ValueError(f"not a page line 'doc<TAB>immutables': {line[:80]!r}")
    df, max_pages = job.df, job.options.max_pages
    words = immutables.split()
    n = len(words)
    get = df.get
    shared = sorted([(f, word) for word in words if (f := get(word))])
    singles = n - len(shared)
    stop = prefix_length(n, job.options.threshold, job.options.min_shared) - singles
    if stop <= 0:
        return
    postings, entry = job.postings, f"{doc} {n} "
    for pos, (f, word) in enumerate(shared[:stop], singles):
        if f > max_pages:
            job.prefix_dropped += 1
            break
        held = postings.get(word)
        if held is None:
            postings[word] = [entry + str(pos)]
        else:
            held.append(entry + str(pos))
    job.held += stop
    if job.held >= job.options.flush_postings:
        yield from job.flush_postings()


def job_with(df: dict[str, int], args: list[str]) -> MRCandidatePairs:
    job = MRCandidatePairs(args + ["--frequencies", "unused"])
    job.load_frequencies = lambda: setattr(job, "df", df)  # loaded once, for both mappers
    job.start_postings()
    return job


def run_old(df: dict[str, int], args: list[str], lines: list[str]) -> tuple[float, list[tuple[str, str]]]:
    job = job_with(df, args)
    started = time.process_time()
    out = [record for line in lines for record in old_prefix(job, line)]
    out.extend(job.flush_postings())
    return time.process_time() - started, out


def run_new(df: dict[str, int], args: list[str], lines: list[str]) -> tuple[float, list[tuple[str, str]]]:
    job = job_with(df, args)
    started = time.process_time()
    out = [record for line in lines for record in job.prefix(None, line)]
    out.extend(job.finish_postings())
    return time.process_time() - started, out


def padded(df: dict[str, int], extra: int) -> dict[str, int]:
    """``df`` with ``extra`` made-up immutables (no page holds them: they start with NUL),
    spread evenly between the real ones in insertion, hence memory, order."""
    out: dict[str, int] = {}
    per, made = extra / max(len(df), 1), 0.0
    for number, (word, n) in enumerate(df.items(), 1):
        while made < per * number:
            out[f"\0pad{int(made)}"] = 2
            made += 1
        out[word] = n
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work", type=Path, help="a spin stage's work/<snapshot> folder")
    ap.add_argument("--pages", type=int, nargs="+", default=[10_000, 50_000])
    ap.add_argument("--batch-pages", type=int, default=2000)
    ap.add_argument("--threshold", default="0.6")
    ap.add_argument("--max-pages", default="10000")
    ap.add_argument("--min-shared", default="3")
    ap.add_argument("--pad-dictionary", type=int, default=0, metavar="N",
                    help="add N made-up immutables, interleaved with the real ones")
    args = ap.parse_args()
    job_args = ["--threshold", args.threshold, "--max-pages", args.max_pages, "--min-shared", args.min_shared,
                "--batch-pages", str(args.batch_pages)]
    loader = MRCandidatePairs(job_args + ["--frequencies", str(args.work / "frequencies.tsv")])
    started = time.process_time()
    loader.load_frequencies()
    df = loader.df
    print(f"{len(df):,} immutables in frequencies.tsv, loaded in {time.process_time() - started:.2f} CPU s")
    if args.pad_dictionary:
        df = padded(df, args.pad_dictionary)
        print(f"padded to {len(df):,} immutables")
    with open(args.work / "immutables.tsv", encoding="utf-8") as fh:
        lines = [line.rstrip("\n") for line in itertools.islice(fh, max(args.pages))]
    for pages in args.pages:
        head = lines[:pages]
        for _ in range(2):
            old_s, old_out = run_old(df, job_args, head)
            new_s, new_out = run_new(df, job_args, head)
            print(f"{len(head):,} pages: page by page {old_s:.2f} CPU s, batches of {args.batch_pages} {new_s:.2f} CPU s "
                  f"(per 10,000 pages {old_s / len(head) * 1e4:.2f} / {new_s / len(head) * 1e4:.2f}; "
                  f"{old_s / new_s:.2f}x), {len(new_out):,} records, same records: {old_out == new_out}")
            del old_out, new_out


if __name__ == "__main__":
    main()
