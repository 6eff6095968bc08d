"""Revisit resolution benchmark: what turning revisit records into pages adds to parse.

Run from the repository root::

    .venv/bin/python benchmarks/bench_revisits.py            # 20,000 and 80,000 pages
    .venv/bin/python benchmarks/bench_revisits.py --pages 5000

Builds a synthetic page table (``PAGE_SCHEMA``, 8 parts, ~300 words and 20 links a page) in
a temporary directory, makes 30 % of its pages revisited a month later (half found by
``WARC-Refers-To``, half by target URI + date, as ``spamflow.parse.revisits`` does), and times
``resolve_revisits`` against a baseline in the same process: reading the whole page table
once (what any detector does).  Then the same at 4x the pages, to show the cost is linear.
Prints seconds, pages/s, the ratio to the baseline, and peak Python memory (tracemalloc).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq

from spamflow.parse.pages import Page, PageBatch, doc_id_of
from spamflow.parse.revisits import Revisit, resolve_revisits

PARTS = 8
REVISITED = 0.3
WORDS = "the of and to in a is that for it as was with be by on not he this are or his from at which".split()


def build_table(root: Path, pages: int, seed: int = 0) -> tuple[list[Path], list[Revisit]]:
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    parts, revisits = [], []
    per_part = -(-pages // PARTS)
    n = 0
    for p in range(PARTS):
        batch = PageBatch()
        for _ in range(min(per_part, pages - n)):
            url = f"http://host{n % 997}.example.com/page{n}.html"
            record_id = f"<urn:uuid:bench-{n}>"
            when = start + timedelta(seconds=n)
            batch.append(Page(doc_id=doc_id_of(record_id), record_id=record_id, url=url, host=f"host{n % 997}.example.com",
                              domain="example.com", ip="127.0.0.1", snapshot="2026-01", fetch_time=when, status=200,
                              content_type="text/html", charset="utf-8", title=f"page {n}",
                              words=[rng.choice(WORDS) for _ in range(300)],
                              links=[{"url": f"http://host{rng.randrange(997)}.example.com/", "anchor": "a", "nofollow": False}
                                     for _ in range(20)],
                              noise="<>< =''></>" * 50, html_bytes=20_000, truncated=False, warc_file="x.warc.gz",
                              warc_offset=n * 1000))
            if rng.random() < REVISITED:
                by_id = rng.random() < 0.5
                revisits.append(Revisit(file="y.warc.gz", offset=n * 100, record_id=f"<urn:uuid:bench-r{n}>", url=url,
                                        ip="127.0.0.2", snapshot="2026-02", fetch_time=when + timedelta(days=31),
                                        status=304 if by_id else 200, content_type=None,
                                        refers_to=record_id if by_id else None,
                                        refers_to_url=None if by_id else url, refers_to_date=None if by_id else when))
            n += 1
        path = root / f"part-{p:05d}.parquet"
        pq.write_table(batch.to_table(), path, compression="zstd")
        parts.append(path)
    return parts, revisits


def measure(pages: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        parts, revisits = build_table(root, pages)
        t = time.perf_counter()
        rows = sum(pq.read_table(part).num_rows for part in parts)
        baseline = time.perf_counter() - t
        assert rows == pages
        t = time.perf_counter()
        resolution = resolve_revisits(revisits, parts, root / "part-revisits.parquet")
        seconds = time.perf_counter() - t
        tracemalloc.start()  # a second run for memory: tracemalloc slows Python down
        resolve_revisits(revisits, parts, root / "part-revisits-2.parquet")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert resolution.pages == len(revisits) and not resolution.unresolved
        return {"pages": pages, "revisits": len(revisits), "baseline_s": baseline, "resolve_s": seconds,
                "peak_mb": peak / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=20_000)
    args = parser.parse_args()
    results = [measure(args.pages), measure(4 * args.pages)]
    print(f"{'pages':>8} {'revisits':>9} {'read table s':>13} {'resolve s':>10} {'vs read':>8} "
          f"{'revisits/s':>11} {'peak py MB':>11}")
    for r in results:
        print(f"{r['pages']:>8} {r['revisits']:>9} {r['baseline_s']:>13.2f} {r['resolve_s']:>10.2f} "
              f"{r['resolve_s'] / r['baseline_s']:>7.2f}x {r['revisits'] / r['resolve_s']:>11.0f} {r['peak_mb']:>11.1f}")
    small, big = results
    print(f"4x the pages: resolve time x{big['resolve_s'] / small['resolve_s']:.2f}, "
          f"peak Python memory x{big['peak_mb'] / small['peak_mb']:.2f} (linear: ~4)")


if __name__ == "__main__":
    main()
