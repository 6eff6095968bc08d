"""Content-feature benchmark: the 24 per-page measures, BM25 host vectors and the whole
``content`` stage on a synthetic corpus of H hosts × P pages (the issue's target: 10,000 × 50).

    python benchmarks/bench_content.py                       # 10,000 hosts × 50 pages
    python benchmarks/bench_content.py --hosts 1000          # 50,000 pages
    python benchmarks/bench_content.py --phases measures,bm25   # skip the whole-stage run
    python benchmarks/bench_content.py --help
    python benchmarks/bench_content.py --page-table RUN/stages/parse-*/pages --parts 2 --baseline 738d0bb
        # peak RSS of the whole stage on a parse stage's real page table (e.g. scale_web's),
        # here and in a checkout of commit 738d0bb, and their ratio

1. **Corpus.** Pages of ~250 words (normal, sd 60) drawn per host from a Zipf vocabulary of
   50,000 made-up words, a host's pages sharing a topic (1,000 words it favours); 5 % of
   hosts are keyword-stuffed (pages drawn from 30 words).  10 links per page to pages of the
   same host with 2-word anchors; html_bytes = 6 × visible bytes.  Written as the parse
   stage writes the page table (Parquet parts of ~2,000 pages, built column-wise), in a
   temporary directory.
2. **Phases**, each in a fresh process pinned to one CPU (peak RSS is that process's):
   ``measures`` (page_measures over all pages, given popular-word lists), ``bm25`` (term
   counting, stemming, vocabulary, weights of one snapshot), ``stage`` (the whole stage:
   page index and in-links, sampling, corpus words, measures, BM25, temporal, writing).
3. **Baseline**, in the measures process: the same 24 measures with plain Python per page
   (Counter, sets, the same zlib call) on the first 2,000 pages; ratio of pages/s.

**Memory against a commit** (``--baseline REV``): the ``stage`` phase on the same page table
(``--page-table``: a parse stage's ``pages`` folder, e.g. of ``bench_scale.py --keep``; its first
``--parts`` parts), once with this checkout and once with ``git archive REV`` of the repository's
``spamflow``, ``plugins`` and ``workflows`` first on the path, each in a fresh process pinned to
the same CPU, the two interleaved; prints both peak RSS and the ratio.

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
import shutil
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
    """Write the corpus in parts of about PART_PAGES pages, built column-wise with numpy/Arrow."""
    from spamflow.parse.pages import PAGE_SCHEMA

    rng = np.random.default_rng(seed)
    vocab = pa.array([f"w{i}x{(i * 7919) % 1000}" for i in range(VOCAB)], pa.string())
    zipf = 1.0 / (np.arange(1, VOCAB + 1) + 2.7) ** 1.1
    cdf = np.cumsum(zipf / zipf.sum())
    folder.mkdir(parents=True, exist_ok=True)
    hosts_per_part = max(1, PART_PAGES // pages)
    total = 0
    for part, first in enumerate(range(0, hosts, hosts_per_part)):
        n_hosts = min(hosts_per_part, hosts - first)
        n_pages = n_hosts * pages
        host_of_page = np.repeat(np.arange(n_hosts), pages)
        lengths = np.maximum(rng.normal(250, 60, size=n_pages).astype(np.int64), 5)
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        page_of_token = np.repeat(np.arange(n_pages), lengths)
        host_of_token = host_of_page[page_of_token]
        ids = np.minimum(np.searchsorted(cdf, rng.random(len(page_of_token))), VOCAB - 1)
        topics = rng.integers(0, VOCAB, size=(n_hosts, 1000))
        on_topic = rng.random(len(ids)) < 0.3
        ids = np.where(on_topic, topics[host_of_token, rng.integers(0, 1000, size=len(ids))], ids)
        stuffed = rng.random(n_hosts) < 0.05
        pools = rng.integers(0, VOCAB, size=(n_hosts, 30))
        ids = np.where(stuffed[host_of_token], pools[host_of_token, rng.integers(0, 30, size=len(ids))], ids)
        values = vocab.take(pa.array(ids))
        words = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values)
        names = [f"h{first + h}.example" for h in range(n_hosts)]
        page_no = np.tile(np.arange(pages), n_hosts)
        urls = [f"http://{names[h]}/" if p == 0 else f"http://{names[h]}/p{p}.html"
                for h, p in zip(host_of_page.tolist(), page_no.tolist())]
        targets = rng.integers(0, pages, size=(n_pages, 10))
        link_urls = [f"http://{names[h]}/" if t == 0 else f"http://{names[h]}/p{t}.html"
                     for h, row in zip(host_of_page.tolist(), targets.tolist()) for t in row]
        pick = (offsets[:-1, None] + targets % lengths[:, None]).ravel()
        pick2 = (offsets[:-1, None] + (targets + 1) % lengths[:, None]).ravel()
        anchors = pa.compute.binary_join_element_wise(values.take(pa.array(pick)), values.take(pa.array(pick2)), " ")
        links = pa.ListArray.from_arrays(
            pa.array(np.arange(0, 10 * n_pages + 1, 10), pa.int32()),
            pa.StructArray.from_arrays([pa.array(link_urls, pa.string()), anchors,
                                        pa.array(np.zeros(10 * n_pages, dtype=bool))],
                                       fields=list(PAGE_SCHEMA.field("links").type.value_type)))
        visible = np.bincount(page_of_token, weights=np.asarray(pa.compute.binary_length(values)),
                              minlength=n_pages) + lengths - 1
        doc_ids = ((first * pages + np.arange(n_pages)) * 2654435761) % (2**62)
        columns = {
            "doc_id": pa.array(doc_ids, pa.int64()),
            "record_id": pa.array([f"<urn:b:{d}>" for d in doc_ids.tolist()], pa.string()),
            "url": pa.array(urls, pa.string()),
            "host": pa.array([names[h] for h in host_of_page.tolist()], pa.string()),
            "snapshot": pa.array(["2026-01"] * n_pages, pa.string()),
            "title": pa.compute.binary_join(pa.compute.list_slice(words, 0, 6), " "),
            "words": words, "links": links,
            "html_bytes": pa.array((6 * visible).astype(np.int64), pa.int64()),
        }
        columns["domain"] = columns["host"]
        arrays = [columns[f.name] if f.name in columns else pa.nulls(n_pages, f.type) for f in PAGE_SCHEMA]
        pq.write_table(pa.Table.from_arrays(arrays, schema=PAGE_SCHEMA), folder / f"part-{part:05d}.parquet")
        total += n_pages
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
    def words():
        for batch in dataset.to_batches(columns=["words"], batch_size=2048):
            yield pa.compute.list_flatten(batch.column("words"))

    counter = WordCounter()
    for flat in words():
        counter.add(flat)
    popular = PopularTerms(counter.top(1000, again=words), load_query_terms(None))
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
    from spamflow_content.term_counts import Candidates, KeptTerms, PairCounter

    hosts: dict[str, int] = {}
    batches = []
    for batch in dataset.to_batches(columns=["host"], batch_size=2048):
        batches.append(np.array([hosts.setdefault(h, len(hosts)) for h in batch.column("host").to_pylist()]))
    candidates = Candidates(0.1, len(hosts), dataset.count_rows())
    for doc, batch in zip(batches, dataset.to_batches(columns=["words"], batch_size=2048)):
        candidates.add(batch.num_rows, *bm25.term_occurrences(batch.column("words"), doc))
    pairs = PairCounter(candidates.names(), len(hosts))
    pages = 0
    for doc, batch in zip(batches, dataset.to_batches(columns=["words"], batch_size=2048)):
        pairs.add(*bm25.term_occurrences(batch.column("words"), doc))
        pages += batch.num_rows
    counts = pairs.term_counts(KeptTerms(0.1, 0.5))
    tf = counts.tf
    vocab = bm25.choose_vocabulary(tf, counts.terms, 10_000, 0.1, 0.5)
    ids = np.array([counts.id_of(t) for t in vocab], dtype=np.int64)
    df = np.diff(tf[:, ids].tocsc().indptr)
    dl = counts.lengths
    weights = bm25.bm25_matrix(tf[:, ids], dl, bm25.rsj_idf(df, len(hosts)), float(dl.mean()), 1.2, 0.75)
    return {"pages": pages, "hosts": len(hosts), "wall": time.perf_counter() - start, "nnz": int(weights.nnz),
            "vocabulary": len(vocab), "cpu": time.process_time() - cpu}


def phase_stage(folder: Path) -> dict:
    from spamflow_content.detector import featurise
    from spamflow_content.params import ContentParams

    out = Path(tempfile.mkdtemp(prefix="bench-content-out-"))
    start, cpu = time.perf_counter(), time.process_time()
    result = featurise(ds.dataset(folder, format="parquet"), out, ContentParams(), None, Counter())
    shutil.rmtree(out)
    return {"pages": result.counts["pages"], "hosts": result.counts["hosts"], "wall": time.perf_counter() - start,
            "cpu": time.process_time() - cpu}


def run_phase(name: str, folder: Path, cpu: int, code_root: Path | None = None) -> dict:
    """One phase in a fresh process pinned to ``cpu``; ``code_root``: import spamflow from there."""
    env = dict(os.environ)
    if code_root is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(code_root / p) for p in ("", "plugins", "workflows"))
    code = subprocess.run([sys.executable, __file__, "--phase", name, "--corpus", str(folder)],
                          capture_output=True, text=True, env=env,
                          preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    if code.returncode:
        raise SystemExit(code.stderr)
    return json.loads(code.stdout.strip().splitlines()[-1])


def compare_memory(page_table: Path, parts: int | None, baseline: str, cpu: int) -> None:
    """Peak RSS of the whole stage here and at commit ``baseline``, on the same page table."""
    repo = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="bench-content-base-") as tmp:
        folder = Path(tmp) / "pages"
        folder.mkdir()
        files = sorted(page_table.glob("*.parquet"))[:parts]
        for f in files:
            (folder / f.name).symlink_to(f.resolve())
        old = Path(tmp) / "old"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(repo), "archive", baseline, "spamflow", "plugins", "workflows"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        pages = ds.dataset(folder, format="parquet").count_rows()
        print(f"page table: {len(files)} parts of {page_table}, {pages} pages; baseline {baseline}")
        before = run_phase("stage", folder, cpu, old)
        after = run_phase("stage", folder, cpu)
        for name, r in (("before", before), ("after", after)):
            print(f"  {name:6}: whole stage {r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU, {r['hosts']} hosts, "
                  f"peak RSS {r['peak_rss_mb']:.0f} MB")
        print(f"  peak RSS after / before = {after['peak_rss_mb'] / before['peak_rss_mb']:.2f}; "
              f"{after['peak_rss_mb'] * 1024 / pages:.1f} KB a page after, {before['peak_rss_mb'] * 1024 / pages:.1f} before")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=10_000)
    parser.add_argument("--pages", type=int, default=50, help="pages per host")
    parser.add_argument("--phases", default="measures,bm25,stage",
                        help="comma-separated phases to run (default: measures,bm25,stage)")
    parser.add_argument("--page-table", type=Path, help="a parse stage's pages folder: compare peak RSS of the "
                        "whole stage with --baseline on it instead of the synthetic phases")
    parser.add_argument("--parts", type=int, help="with --page-table: its first PARTS parts only")
    parser.add_argument("--baseline", default="738d0bb", help="with --page-table: the commit to compare with")
    parser.add_argument("--phase", choices=["measures", "bm25", "stage"], help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        result = {"measures": phase_measures, "bm25": phase_bm25, "stage": phase_stage}[args.phase](args.corpus)
        result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return
    cpu = min(os.sched_getaffinity(0))
    if args.page_table:
        compare_memory(args.page_table, args.parts, args.baseline, cpu)
        return
    print(f"python {platform.python_version()}, pyarrow {pa.__version__}, numpy {np.__version__}, cpu {cpu}")
    with tempfile.TemporaryDirectory(prefix="bench-content-") as tmp:
        start = time.perf_counter()
        n = make_corpus(Path(tmp) / "pages", args.hosts, args.pages)
        print(f"corpus: {args.hosts} hosts × {args.pages} pages = {n} pages in {time.perf_counter() - start:.0f} s")
        phases = set(args.phases.split(","))
        verdict = []
        if "measures" in phases:
            m = run_phase("measures", Path(tmp) / "pages", cpu)
            rate = m["pages"] / m["cpu"]
            print(f"measures: {m['pages'] / m['wall']:.0f} pages/s wall, {rate:.0f} pages/s per core (CPU time), "
                  f"{m['pages'] / args.pages / m['cpu']:.0f} hosts/s per core, peak RSS {m['peak_rss_mb']:.0f} MB; "
                  f"plain-Python baseline {m['baseline_pages_per_s']:.0f} pages/s, "
                  f"ratio {m['pages'] / m['wall'] / m['baseline_pages_per_s']:.1f}x")
            verdict.append(f"dense features {rate:.0f} pages/s per core ({'meets' if rate >= 500 else 'MISSES'} ≥ 500)")
        if "bm25" in phases:
            b = run_phase("bm25", Path(tmp) / "pages", cpu)
            print(f"bm25: {b['hosts']} hosts in {b['wall']:.1f} s wall, {b['cpu']:.1f} s CPU "
                  f"({b['hosts'] / b['cpu']:.0f} hosts/s, {b['pages'] / b['cpu']:.0f} pages/s per core), "
                  f"vocabulary {b['vocabulary']}, nnz {b['nnz']}, peak RSS {b['peak_rss_mb']:.0f} MB")
            bm25_10k = b["cpu"] * 10_000 / b["hosts"]
            verdict.append(f"BM25 for 10,000 hosts {'measured' if b['hosts'] == 10_000 else 'extrapolated linearly'}"
                           f" {bm25_10k:.0f} s of one core ({'meets' if bm25_10k < 120 else 'MISSES'} < 120 s)")
        if "stage" in phases:
            s = run_phase("stage", Path(tmp) / "pages", cpu)
            print(f"whole stage: {s['wall']:.1f} s wall, {s['cpu']:.1f} s CPU, {s['pages'] / s['cpu']:.0f} pages/s "
                  f"and {s['hosts'] / s['cpu']:.0f} hosts/s per core, peak RSS {s['peak_rss_mb']:.0f} MB")
        print("verdict: " + "; ".join(verdict))

if __name__ == "__main__":
    main()
