"""Where a page's time goes inside the parse stage, against the bare loop of ``bench_parse.py``:
CPU time of each step timed where it runs (``parse_warc_file`` with its functions wrapped
by ``time.process_time``), then the bare loop's two parts (FastWARC reading, the Lexbor
page work), each in a fresh process on one CPU::

    python benchmarks/parse_stage_split.py WARC [--rounds 3] [--cpu 1]

``WARC``: a gzip WARC of HTML pages, e.g. one ``bench_parse.py`` writes (``write_warc``).
The wrappers cost ~1 µs a call (~20 calls a page), so the stage's total here is ~0.02 ms a
page above an unwrapped run.  Best of ``--rounds`` fresh processes per figure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def stage_split(warc: str) -> dict[str, float]:
    """CPU seconds per step of ``parse_warc_file`` on ``warc``, and the number of pages."""
    import pyarrow.parquet as pq

    import spamflow.parse.pages as pages
    import spamflow.parse.warc_file as warc_file

    spent: dict[str, float] = defaultdict(float)
    clock = time.process_time

    def timed(owner: object, name: str, label: str) -> None:
        function = getattr(owner, name)

        def wrapper(*args: object, **kwargs: object) -> object:
            start = clock()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] += clock() - start

        setattr(owner, name, wrapper)

    read = warc_file.iter_records

    def timed_read(*args: object, **kwargs: object) -> Iterator[object]:
        records = read(*args, **kwargs)  # type: ignore[arg-type]
        while True:
            start = clock()
            item = next(records, None)
            spent["read: FastWARC fast path, warcio parse, record checks"] += clock() - start
            if item is None:
                return
            yield item

    warc_file.iter_records = timed_read  # type: ignore[assignment]
    timed(warc_file, "_note_date", "loop: WARC-Date check")
    timed(warc_file, "parse_record", "parse_record")
    timed(pages, "decode_html", "charset decision and decode")
    timed(pages, "extract_spaced", "extract: Lexbor, title, links, word text")
    timed(pages, "html_noise_utf8", "HTML noise")
    timed(pages.PageBatch, "append", "batch append")
    timed(pages.PageBatch, "to_table", "Arrow columns (to_table)")
    timed(pq.ParquetWriter, "write_table", "Parquet write (zstd)")
    with tempfile.TemporaryDirectory(prefix="spamflow-split-") as tmp:
        start = clock()
        result = warc_file.parse_warc_file(warc, "split", Path(tmp) / "part.parquet", max_bytes=5_000_000)
        total = clock() - start
    inner = sum(spent[k] for k in ("charset decision and decode", "extract: Lexbor, title, links, word text",
                                   "HTML noise"))
    spent["the rest of the row: ids, host, domain, date"] = spent.pop("parse_record") - inner
    spent["the loop: counts, checks, the rest"] = total - sum(spent.values())
    spent["total"] = total
    return {**spent, "pages": result.counts["pages"]}


def bare_split(warc: str) -> dict[str, float]:
    """CPU seconds of ``bench_parse.py``'s bare loop, reading and page work apart."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_parse import bare_page

    clock = time.process_time
    reading = working = 0.0
    pages = 0
    start_all = clock()
    with open(warc, "rb") as fh:
        records = iter(ArchiveIterator(fh, record_types=WarcRecordType.response, parse_http=True))
        while True:
            start = clock()
            rec = next(records, None)
            if rec is None:
                reading += clock() - start
                break
            body, url = rec.reader.read(), rec.headers.get("WARC-Target-URI") or ""
            middle = clock()
            reading += middle - start
            bare_page(body, url)
            working += clock() - middle
            pages += 1
    return {"read: FastWARC": reading, "Lexbor, title, links, words": working, "total": clock() - start_all,
            "pages": pages}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("warc")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpu", type=int, default=None, help="CPU to pin to (default: the first allowed one)")
    parser.add_argument("--child", choices=["stage", "bare"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps((stage_split if args.child == "stage" else bare_split)(args.warc)))
        return
    cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    best: dict[str, dict[str, float]] = {}
    for _ in range(args.rounds):
        for kind in ("bare", "stage"):
            out = subprocess.run([sys.executable, __file__, args.warc, "--child", kind], capture_output=True,
                                 text=True, check=True).stdout
            figures = json.loads(out.strip().splitlines()[-1])
            if kind not in best or figures["total"] < best[kind]["total"]:
                best[kind] = figures
    for kind, title in (("stage", "parse stage (parse_warc_file)"), ("bare", "bare loop (bench_parse.py)")):
        figures = best[kind]
        pages = figures.pop("pages")
        print(f"{title}, best of {args.rounds} runs, {pages:.0f} pages, CPU ms per page:")
        for step, seconds in figures.items():
            print(f"  {step:<50} {1e3 * seconds / pages:6.3f}")
    print(f"ratio bare / stage (CPU): {best['bare']['total'] / best['stage']['total']:.2f}")


if __name__ == "__main__":
    main()
