"""The whole spin stage on real-text pages: peak RSS of every process and wall time, per size
(``bench_spin.py --stage``; this module holds the corpus builder and the measured child).

1. **Pages.** The trafilatura evaluation pages of ``bench_parse.real_pages`` whose mean HTML
   size is ~145 KB (the issue's corpus), run through the parse stage's ``extract`` (visible
   words, links).  Page i takes the word count and links of real page ``i mod R``, its host
   and link hosts renamed (``bench_parse.copy_of``: ``c<copy>.<host>``), and is filled with
   runs of 20 consecutive words drawn at random from all real pages, each link's anchor
   words put back in order (the parse stage keeps anchors in ``words``).  Words outside the
   pool's 5,000 most frequent get the page's number as a suffix (``name`` -> ``name~i``):
   in a real crawl new pages bring new rare words (names, numbers); drawn as they are, the
   ~80,000 runs would be reused by every 8th page at 10,000 pages and the pages would share
   rare words by chance, ever more as N grows (88k candidate pairs among 2,000 pages; 38k with
   the top 20,000 words kept).  1 % of the pages are campaign bases, each followed by 9
   copies spun at TBS's "every 3rd word" with the Moby-derived spinner of ``spinning.py``
   (heads: the pool's 5,000 most frequent words), the detector's dictionary too.  Written as
   a Parquet page table in batches of 500 pages (the builder never holds the corpus).
2. **Stage.** ``SpinDetector.run`` in a fresh child process (this file run as a script), as Luigi runs
   it: the child prints its wall time, its own peak RSS and the largest peak RSS among the
   processes it starts (mrjob's task processes and ``sort`` on the local runner), and the
   stage's counts.  Peak RSS is ``VmHWM`` of ``/proc/PID/status``, read for every descendant
   every 0.1 s by a thread (``getrusage``'s ``ru_maxrss`` would not do: Linux carries it
   across ``exec``, so a child forked from a big parent reports the parent's peak).
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SCHEMA = pa.schema([("doc_id", pa.int64()), ("url", pa.string()), ("host", pa.string()), ("domain", pa.string()),
                    ("snapshot", pa.string()), ("words", pa.list_(pa.string())),
                    ("links", pa.list_(pa.struct([("url", pa.string()), ("anchor", pa.string())])))])
RUN = 20  # words per drawn run


def real_texts(mean_bytes: int = 145 * 1024) -> tuple[list[tuple[str, int, list[tuple[str, str]]]], list[list[str]], str]:
    """([(url, word count, [(link url, anchor)])] of the real pages, runs of RUN words, a note)."""
    from bench_parse import real_pages

    from spamflow.parse.html_text import extract
    from spamflow.words import words

    pages, note = real_pages(mean_bytes)
    shapes, runs = [], []
    for url, body in pages:
        text = extract(body.decode("utf-8", errors="replace"), url)
        if len(text.words) < 2 * RUN:
            continue
        shapes.append((url, len(text.words), [(link.url, link.anchor) for link in text.links
                                              if words(link.anchor)]))
        runs += [text.words[i:i + RUN] for i in range(0, len(text.words) - RUN + 1, RUN)]
    return shapes, runs, note


def build_pages(n: int, folder: Path, shapes, runs, spinner, common: set[str], seed: int = 0) -> dict[str, float]:
    """Write n pages (see the module docstring) as a Parquet page table in ``folder``."""
    from bench_parse import copy_of
    from spinning import spin_words

    from spamflow.domains import host_of, registered_domain
    from spamflow.words import words

    rng = random.Random(seed)
    folder.mkdir(parents=True)
    writer = pq.ParquetWriter(folder / "part-00000.parquet", SCHEMA)
    rows: list[dict] = []
    total_words = 0
    base: list[str] = []
    for i in range(n):
        url, size, links = shapes[i % len(shapes)]
        copy = i // len(shapes)
        url = copy_of(url, b"", copy)[0]
        host = host_of(url)
        if i % 100 < 10 and i % 100 and base:  # 9 spun copies of the campaign base before them
            text = spin_words(base, spinner, 3, rng)
        else:
            text = [w if w in common else f"{w}~{i}" for _ in range(max(1, size // RUN)) for w in rng.choice(runs)]
            if i % 100 == 0:
                base = text
        out: list[str] = []
        step = max(1, len(text) // (len(links) + 1))
        link_rows = []
        for k, (link_url, anchor) in enumerate(links):
            out += text[k * step:(k + 1) * step] + words(anchor)
            link_rows.append({"url": copy_of(link_url, b"", copy)[0], "anchor": anchor})
        out += text[len(links) * step:]
        total_words += len(out)
        rows.append({"doc_id": i, "url": url, "host": host, "domain": registered_domain(host), "snapshot": "2026-11",
                     "words": out, "links": link_rows})
        if len(rows) == 500:
            writer.write_table(pa.Table.from_pylist(rows, schema=SCHEMA))
            rows = []
    if rows:
        writer.write_table(pa.Table.from_pylist(rows, schema=SCHEMA))
    writer.close()
    return {"words_per_page": total_words / n}


def _hwm(pid: int | str) -> int:
    """Peak RSS in bytes of a live process (0 if it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class DescendantPeaks(threading.Thread):
    """Every ``every`` seconds, the peak RSS of each process below this one (by parent links)."""

    def __init__(self, every: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.every, self.peaks, self.stop = every, {}, threading.Event()

    def run(self) -> None:
        me = os.getpid()
        while not self.stop.wait(self.every):
            parents = {}
            for entry in os.listdir("/proc"):
                if entry.isdigit():
                    try:
                        stat = Path(f"/proc/{entry}/stat").read_text()
                    except OSError:
                        continue
                    parents[int(entry)] = int(stat.rpartition(")")[2].split()[1])
            for pid in parents:
                up = parents.get(pid)
                while up and up != me:
                    up = parents.get(up)
                if up == me:
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace") \
                        if Path(f"/proc/{pid}/cmdline").exists() else "?"
                    self.peaks[pid] = max(self.peaks.get(pid, (0, ""))[0], _hwm(pid)), cmd.strip()[-90:]


def run_stage_child(pages: Path, outdir: Path, dictionary: Path, engine: str, runner: str) -> None:
    """The measured child: the stage once, then one JSON line on stdout."""
    from spamflow.detector import RunSettings, StageContext, StageOutputs
    from spamflow_spin.detector import SpinDetector
    from spamflow_spin.params import SpinParams

    t0 = time.time()
    outdir.mkdir(parents=True)
    params = SpinParams.model_validate({"dictionary": [str(dictionary)], "engine": engine})
    runner_args = ("--num-cores", "2") if runner == "local" else ()
    settings = RunSettings(runner=runner, runner_args=runner_args, progress=False)
    parse = StageOutputs("parse", pages.parent, {"pages": pages}, {})
    peaks = DescendantPeaks()
    peaks.start()
    result = SpinDetector().run(StageContext(params, {"parse": parse}, outdir, settings))
    wall = time.time() - t0
    peaks.stop.set()
    peaks.join()
    largest = max(peaks.peaks.values(), default=(0, ""))
    print(json.dumps({"wall": wall, "rss_stage": _hwm("self"), "rss_largest_child": largest[0],
                      "largest_child": largest[1], "children_seen": len(peaks.peaks), "counts": result.counts}))


def measure(n: int, tmp: Path, shapes, runs, spinner, dictionary: Path, engine: str, runner: str) -> dict:
    """Build n pages, run the stage in a child, return its figures."""
    t0 = time.time()
    common = {w for w, _ in Counter(w for r in runs for w in r).most_common(5000)}
    shape = build_pages(n, tmp / f"pages{n}", shapes, runs, spinner, common)
    built = time.time() - t0
    cmd = [sys.executable, __file__, str(tmp / f"pages{n}"),
           str(tmp / f"out{n}-{engine}-{runner}"), str(dictionary), engine, runner]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        raise SystemExit(f"stage failed at {n} pages:\n{out.stderr[-3000:]}")
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    figures.update(shape, pages=n, build=built,
                   cpu=(after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime))
    return figures


def report(figures: list[dict], engine: str, runner: str) -> None:
    gb = 1 << 30
    print(f"\n| pages | words/page | stage wall | s per 1,000 pages | CPU s (all processes) | CPU s per 1,000 pages "
          f"| peak RSS stage | largest child | spun pairs | duplicate pairs |  (engine {engine}, -r {runner})")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for f in figures:
        c = Counter(f["counts"])
        print(f"| {f['pages']:,} | {f['words_per_page']:,.0f} | {f['wall']:.1f} s | {1000 * f['wall'] / f['pages']:.2f} | "
              f"{f['cpu']:.1f} | {1000 * f['cpu'] / f['pages']:.2f} | "
              f"{f['rss_stage'] / gb:.2f} GB | {f['rss_largest_child'] / gb:.2f} GB | {c['spun_pairs']:,} | "
              f"{c['duplicate_pairs']:,} |")
    if len(figures) >= 2:
        a, b = figures[0], figures[-1]
        ratio = (b["wall"] / b["pages"]) / (a["wall"] / a["pages"])
        print(f"time per page at {b['pages']:,} over time per page at {a['pages']:,}: {ratio:.2f}x")
        cpu_ratio = (b["cpu"] / b["pages"]) / (a["cpu"] / a["pages"])
        print(f"CPU time per page at {b['pages']:,} over CPU time per page at {a['pages']:,}: {cpu_ratio:.2f}x "
              "(the stage and every process it started; steadier than wall time on a shared machine)")
    worst = max(max(f["rss_stage"], f["rss_largest_child"]) for f in figures)
    for f in figures:
        print(f"{f['pages']:,} pages: largest of {f['children_seen']} processes seen below the stage: "
              f"{f['largest_child']}")
    print(f"largest process: {worst / gb:.2f} GB (target <= 2 GB: {'MET' if worst <= 2 * gb else 'NOT MET'})")


if __name__ == "__main__":
    pages_dir, out_dir, dictionary_file, engine_name, runner_name = sys.argv[1:6]
    run_stage_child(Path(pages_dir), Path(out_dir), Path(dictionary_file), engine_name, runner_name)
