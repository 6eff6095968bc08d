"""Content-feature benchmark: the 24 per-page measures, BM25 host vectors and the whole
``content`` stage on a synthetic corpus of H hosts × P pages (the issue's target: 10,000 × 50).

    python benchmarks/bench_content.py                       # 10,000 hosts × 50 pages
    python benchmarks/bench_content.py --hosts 1000          # 50,000 pages, ~2 min
    python benchmarks/bench_content.py --help

1. **Corpus.** Pages of ~250 words (normal, sd 60) drawn per host from a Zipf vocabulary of
   50,000 made-up words, a host's pages sharing a topic (1,000 words it favours); 5 % of
   hosts are keyword-stuffed (pages drawn from 30 words).  10 links per page to pages of the
   same host with 2-word anchors; html_bytes = 6 × visible bytes.  Written as the parse
   stage writes the page table (Parquet parts of 2,000 pages), streamed, in a temporary dir.
2. **Phases**, each in a fresh process pinned to one CPU (peak RSS is that process's):
   ``measures`` (page_measures over all pages, given popular-word lists), ``bm25`` (term
   counting, stemming, vocabulary, weights of one snapshot), ``stage`` (the whole stage:
   page index and in-links, sampling, corpus words, measures, BM25, temporal, writing).
3. **Baseline**, in the measures process: the same 24 measures with plain Python per page
   (Counter, sets, the same zlib call) on the first 2,000 pages; ratio of pages/s.

Prints pages/s and hosts/s per phase, peak RSS, and the verdict against the targets:
dense features ≥ 500 pages/s per core, BM25 for 10,000 hosts < 2 minutes.  "Per core" figures
use the process's CPU time (each phase is pinned to one CPU), so they do not depend on how
busy a shared machine is; wall times are printed beside them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

VOCAB = 50_000
PART_PAGES = 2_000


def make_corpus(folder: Path, hosts: int, pages: int, seed: int = 0) -> int:
    from spamflow.pages import PAGE_SCHEMA

    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}x{(i * 7919) % 1000}" for i in range(VOCAB)], dtype=object)
    ranks = np.arange(1, VOCAB + 1)
    zipf = 1.0 / (ranks + 2.7) ** 1.1
    zipf /= zipf.sum()
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    part = 0
    total = 0
    for h in range(hosts):
        host = f"h{h}.example"
        stuffed = rng.random() < 0.05
        topic = rng.choice(VOCAB, size=1000, replace=False)
        pool = rng.choice(VOCAB, size=30, replace=False) if stuffed else None
        for p in range(pages):
            n = max(int(rng.normal(250, 60)), 5)
            if stuffed:
                ids = rng.choice(pool, size=n)
            else:
                general = rng.choice(VOCAB, size=n, p=zipf)
                ids = np.where(rng.random(n) < 0.3, rng.choice(topic, size=n), general)
            words = vocab[ids].tolist()
            url = f"http://{host}/" if p == 0 else f"http://{host}/p{p}.html"
            targets = rng.integers(0, pages, size=10)
            links = [{"url": f"http://{host}/" if t == 0 else f"http://{host}/p{t}.html",
                      "anchor": f"{words[int(t) % n]} {words[(int(t) + 1) % n]}", "nofollow": False} for t in targets]
            visible = sum(len(w) for w in words) + n - 1
            rows.append({"doc_id": (h * pages + p) * 2654435761 % (2**62), "record_id": f"<urn:b:{h}:{p}>", "url": url,
                         "host": host, "domain": host, "ip": None, "snapshot": "2026-01", "fetch_time": None,
                         "status": 200, "content_type": "text/html", "charset": "utf-8",
                         "title": " ".join(words[:6]), "words": words, "links": links, "noise": "",
                         "html_bytes": 6 * visible, "truncated": False, "warc_file": "bench", "warc_offset": 0})
            if len(rows) == PART_PAGES:
                pq.write_table(pa.Table.from_pylist(rows, schema=PAGE_SCHEMA), folder / f"part-{part:05d}.parquet")
                part += 1
                total += len(rows)
                rows = []
    if rows:
        pq.write_table(pa.Table.from_pylist(rows, schema=PAGE_SCHEMA), folder / f"part-{part:05d}.parquet")
        total += len(rows)
    return total


def _python_measures(title: str, words: list[str], anchors: list[str], html_bytes: int,
                     corpus: list[str], query: list[str]) -> list[float]:
    """The 24 measures by plain Python per page: the baseline."""
    from spamflow.words import words as split
    from spamflow_content.text import STOP_WORDS

    n = len(words)
    out = [n, len(split(title)), sum(map(len, words)) / n if n else 0,
           sum(len(split(a)) for a in anchors) / n if n else 0]
    text = " ".join(words).encode()
    out.append((len(text)) / html_bytes if html_bytes else 0)
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)
    out.append(len(text) / len(packer.compress(text) + packer.flush()) if text else 0)
    content = [w for w in words if w not in STOP_WORDS]
    present = set(words)
    for ranked in (corpus, query):
        for k in (100, 200, 500, 1000):
            top = set(ranked[:k])
            out.append(sum(w in top for w in content) / len(content) if content else 0)
        for k in (100, 200, 500, 1000):
            out.append(len(present & set(ranked[:k])) / k)
    grams = Counter(zip(words, words[1:], words[2:]))
    t = n - 2
    out.append(-sum(c / t * math.log(c / t) for c in grams.values()) if t > 0 else 0)
    out.append(-sum(math.log(c / t) for c in grams.values()) / t if t > 0 else 0)
    return out


def phase_measures(folder: Path) -> dict:
    from spamflow_content.corpus import WordCounter
    from spamflow_content.measures import PAGE_COLUMNS, PopularTerms, page_measures
    from spamflow_content.text import load_query_terms

    dataset = ds.dataset(folder, format="parquet")
    counter = WordCounter()
    for batch in dataset.to_batches(columns=["words"], batch_size=2048):
        counter.add(pa.compute.list_flatten(batch.column("words")))
    popular = PopularTerms(counter.top(1000), load_query_terms(None))
    start = time.perf_counter()
    cpu = time.process_time()
    pages = 0
    for batch in dataset.to_batches(columns=list(PAGE_COLUMNS), batch_size=2048):
        page_measures(pa.Table.from_batches([batch]), popular)
        pages += batch.num_rows
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    first = dataset.head(2000, columns=list(PAGE_COLUMNS)).to_pylist()
    start = time.perf_counter()
    for row in first:
        _python_measures(row["title"], row["words"], [lk["anchor"] for lk in row["links"]], row["html_bytes"],
                         popular.corpus, popular.query)
    base = time.perf_counter() - start
    return {"pages": pages, "wall": wall, "cpu": cpu, "baseline_pages_per_s": len(first) / base}


def phase_bm25(folder: Path) -> dict:
    from spamflow_content import bm25

    dataset = ds.dataset(folder, format="parquet")
    start, cpu = time.perf_counter(), time.process_time()
    index = bm25.TermIndex()
    hosts: dict[str, int] = {}
    pieces = []
    pages = 0
    for batch in dataset.to_batches(columns=["host", "words"], batch_size=2048):
        names = batch.column("host").to_pylist()
        doc = np.array([hosts.setdefault(h, len(hosts)) for h in names], dtype=np.int64)
        pieces.append(bm25.count_terms(batch.column("words"), doc, index))
        pages += batch.num_rows
    tf = bm25.doc_term_matrix(pieces, len(hosts), len(index.terms))
    vocab = bm25.choose_vocabulary(tf, index.terms, 10_000, 0.1, 0.5)
    ids = np.array([index.id_of(t) for t in vocab], dtype=np.int64)
    df = np.diff(tf[:, ids].tocsc().indptr)
    dl = np.asarray(tf.sum(axis=1)).ravel()
    weights = bm25.bm25_matrix(tf[:, ids], dl, bm25.rsj_idf(df, len(hosts)), float(dl.mean()), 1.2, 0.75)
    return {"pages": pages, "hosts": len(hosts), "wall": time.perf_counter() - start, "nnz": int(weights.nnz),
            "vocabulary": len(vocab), "cpu": time.process_time() - cpu}


def phase_stage(folder: Path) -> dict:
    from spamflow_content.detector import featurise
    from spamflow_content.params import ContentParams

    out = Path(tempfile.mkdtemp(prefix="bench-content-out-"))
    start, cpu = time.perf_counter(), time.process_time()
    result = featurise(ds.dataset(folder, format="parquet"), out, ContentParams(), None, Counter())
    return {"pages": result.counts["pages"], "hosts": result.counts["hosts"], "wall": time.perf_counter() - start,
            "cpu": time.process_time() - cpu}


def run_phase(name: str, folder: Path, cpu: int) -> dict:
    code = subprocess.run([sys.executable, __file__, "--phase", name, "--corpus", str(folder)],
                          capture_output=True, text=True,
                          preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    if code.returncode:
        raise SystemExit(code.stderr)
    return json.loads(code.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=10_000)
    parser.add_argument("--pages", type=int, default=50, help="pages per host")
    parser.add_argument("--phase", choices=["measures", "bm25", "stage"], help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        result = {"measures": phase_measures, "bm25": phase_bm25, "stage": phase_stage}[args.phase](args.corpus)
        result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return
    cpu = min(os.sched_getaffinity(0))
    print(f"python {platform.python_version()}, pyarrow {pa.__version__}, numpy {np.__version__}, cpu {cpu}")
    with tempfile.TemporaryDirectory(prefix="bench-content-") as tmp:
        start = time.perf_counter()
        n = make_corpus(Path(tmp) / "pages", args.hosts, args.pages)
        print(f"corpus: {args.hosts} hosts × {args.pages} pages = {n} pages in {time.perf_counter() - start:.0f} s")
        m = run_phase("measures", Path(tmp) / "pages", cpu)
        rate = m["pages"] / m["cpu"]
        print(f"measures: {m['pages'] / m['wall']:.0f} pages/s wall, {rate:.0f} pages/s per core (CPU time), "
              f"{m['pages'] / args.pages / m['cpu']:.0f} hosts/s per core, peak RSS {m['peak_rss_mb']:.0f} MB; "
              f"plain-Python baseline {m['baseline_pages_per_s']:.0f} pages/s, "
              f"ratio {m['pages'] / m['wall'] / m['baseline_pages_per_s']:.1f}x")
        b = run_phase("bm25", Path(tmp) / "pages", cpu)
        print(f"bm25: {b['hosts']} hosts in {b['wall']:.1f} s wall, {b['cpu']:.1f} s CPU "
              f"({b['hosts'] / b['cpu']:.0f} hosts/s, {b['pages'] / b['cpu']:.0f} pages/s per core), "
              f"vocabulary {b['vocabulary']}, nnz {b['nnz']}, peak RSS {b['peak_rss_mb']:.0f} MB")
        s = run_phase("stage", Path(tmp) / "pages", cpu)
        print(f"whole stage: {s['wall']:.1f} s wall, {s['cpu']:.1f} s CPU, {s['pages'] / s['cpu']:.0f} pages/s "
              f"and {s['hosts'] / s['cpu']:.0f} hosts/s per core, peak RSS {s['peak_rss_mb']:.0f} MB")
        bm25_10k = b["cpu"] * 10_000 / b["hosts"]
        print(f"verdict: dense features {rate:.0f} pages/s per core "
              f"({'meets' if rate >= 500 else 'MISSES'} ≥ 500); BM25 for 10,000 hosts "
              f"{'measured' if b['hosts'] == 10_000 else 'extrapolated linearly'} {bm25_10k:.0f} s of one core "
              f"({'meets' if bm25_10k < 120 else 'MISSES'} < 120 s)")


if __name__ == "__main__":
    main()
