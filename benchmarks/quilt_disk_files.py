"""Which files make the quilt jobs' temporary peak: ``find_quilts`` on one shingle file, on
mrjob's local runner, with every file under the job's ``TMPDIR`` and work folder sampled
every 0.2 s and grouped by kind (digits and hex names folded: ``step/N/mapper/N/input``).

Run from the repository root, e.g. on a kept run's first snapshot::

    PYTHONPATH=$PWD:$PWD/plugins .venv/bin/python benchmarks/quilt_disk_files.py \\
        RUN/stages/quilt-*/work/2026-01/k5/shingles.tsv /tmp/quilt-files [--sort-buffer 64M]

With another version's ``spamflow_quilt`` first on ``PYTHONPATH`` it measures that code (a
shingle file of either version's packed encoding is read by the newer one, not the older).
Prints the peak, the files at that moment by kind, the work files at the end and a digest of
the covers (equal digests: equal quilts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path


def kind(relative: str) -> str:
    return re.sub(r"\d+", "N", re.sub(r"[0-9a-f]{8,}", "H", relative))


class FileSampler(threading.Thread):
    """The largest total of bytes under ``root`` seen, and its files by kind."""

    def __init__(self, root: Path) -> None:
        super().__init__(daemon=True)
        self.root, self.peak, self.peak_by = root, 0, {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.2):
            by: Counter[str] = Counter()
            for folder, _dirs, files in os.walk(self.root):
                for name in files:
                    path = os.path.join(folder, name)
                    try:
                        by[kind(os.path.relpath(path, self.root))] += os.lstat(path).st_size
                    except OSError:
                        pass
            if sum(by.values()) > self.peak:
                self.peak, self.peak_by = sum(by.values()), dict(by)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shingles", type=Path)
    ap.add_argument("out", type=Path, help="scratch folder (emptied first)")
    ap.add_argument("--sort-buffer", metavar="SIZE", help="GNU sort's buffer (default SORT_BUFFER), runs compressed")
    args = ap.parse_args(argv)
    shutil.rmtree(args.out, ignore_errors=True)
    (args.out / "tmp").mkdir(parents=True)
    (args.out / "work").mkdir()
    os.environ["TMPDIR"] = str(args.out / "tmp")
    tempfile.tempdir = None
    from spamflow_quilt.detector import find_quilts
    from spamflow_quilt.mr_gram_df import MRGramDocumentFrequency
    from spamflow_quilt.params import QuiltParams

    from spamflow.mr.driver import SORT_BUFFER, compressed_sort_bin

    shingles = args.out / "work" / "shingles.tsv"
    shutil.copyfile(args.shingles, shingles)
    runner_args: tuple[str, ...] = ()
    if args.sort_buffer:
        sort_bin = compressed_sort_bin(MRGramDocumentFrequency).replace(f"-S {SORT_BUFFER}", f"-S {args.sort_buffer}")
        runner_args = ("--sort-bin", sort_bin)
    sampler = FileSampler(args.out)
    sampler.start()
    started, before = time.time(), os.times()
    found = find_quilts(shingles, args.out / "work", QuiltParams(), "local", runner_args)
    after = os.times()
    sampler.done.set()
    sampler.join()
    cpu = sum(getattr(after, f) - getattr(before, f) for f in ("user", "system", "children_user", "children_system"))
    print(f"{len(found)} quilts, {time.time() - started:.1f} s, CPU {cpu:.1f} s, peak {sampler.peak / 2**20:,.0f} MiB "
          f"(shingles {shingles.stat().st_size / 2**20:,.0f} MiB); at the peak:")
    for name, size in sorted(sampler.peak_by.items(), key=lambda item: -item[1]):
        if size >= 2**20:
            print(f"  {size / 2**20:9,.1f} MiB  {name}")
    work = {str(p.relative_to(args.out / "work")): p.stat().st_size for p in (args.out / "work").rglob("*") if p.is_file()}
    print("work at the end:", json.dumps(work))
    print("covers digest", hashlib.sha256(json.dumps(found).encode()).hexdigest()[:16])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
