"""Quilt-detector benchmark: shingling and the three mrjob jobs of ``spamflow_quilt`` on a
synthetic corpus, on mrjob's local runner and on Spark ``local[2]``.

Run from the repository root (any directory works)::

    /work/venv/bin/python benchmarks/bench_quilt.py                  # 10,000 and 100,000 pages
    /work/venv/bin/python benchmarks/bench_quilt.py --quick          # 2,000 and 10,000 pages
    /work/venv/bin/python benchmarks/bench_quilt.py --sizes 5000 --runners local
    /work/venv/bin/python benchmarks/bench_quilt.py --help

What it does (see benchmarks/README.md for the figures):

1. **Corpus.** Writes, per size N, a synthetic corpus of pages of ~400 words (normal, sd 40)
   drawn from a Zipf-Mandelbrot vocabulary of 50,000 made-up words: pages grouped in sites
   (geometric sizes, mean 20) whose pages share a header and a footer phrase (the site
   template: df = site size, so many template grams are patch grams and give up to
   m(m-1) triples each), 100 common phrases used by many pages (Zipf; the frequent ones are in
   more than m pages), 4 % near-duplicates (a page copied with 1 % of its words changed) and
   1.5 % quilted pages stitched from 40-120-word passages of 4-8 other pages, on spam sites.
   Pages go to Parquet as the parse stage writes them (doc_id, words, domain, ip, snapshot).
2. **Shingling.** ``batch_gram_hashes`` over every page (k = 5), timed alone, then the real
   ``write_shingles`` (Parquet read + shingling + tab-separated lines), timed.
3. **Quilt stages.** ``find_quilts`` with the pivot (k, m, c, theta) = (5, 50, 4, 0.5), each
   (size, runner) in a fresh process: wall time of each job, pages/s, pages/s per core, peak
   RSS of the process and of its children (``getrusage`` ``ru_maxrss``), the number of
   grams, patch grams, patchy pages, triples (sum over patch grams of df(df-1), what job (c)
   emits) and quilts (and how many of the planted quilts were found).  On the local runner it
   also splits the time into mrjob's phases (input split and reducer-input split in the
   parent, map+combine tasks, GNU sort, reduce tasks) and counts the task subprocesses.
   A (size, runner) whose predicted time exceeds ``--budget`` is measured on a smaller corpus
   and extrapolated linearly; the output says ``EXTRAPOLATED``.
4. **Reference.** ``tests/quilt_reference.reference_quilts`` (brute force, quadratic) on a
   corpus of the smallest size, or on the largest same-recipe corpus it finishes in
   ``--ref-budget`` seconds (estimated from a timed small run; the output says so), compared
   record by record with ``find_quilts`` on the same corpus.  Local and Spark results are
   compared with each other on every size.
5. **Profile.** ``find_quilts`` on the ``inline`` runner under cProfile (same protocols and
   job code, no subprocesses) with the time split into JSON encoding/decoding, mrjob's
   framework, sorting and our job code; the start-up time of a task subprocess.
6. **Verdict** against the target: shingling + all quilt stages >= 1,000 pages/s per core on
   the local runner at 100k pages, time linear in pages, no process above 2 GB.

Nothing is fetched; everything is generated in a temporary directory.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import platform
import pstats
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for _p in (REPO, REPO / "plugins", REPO / "tests"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))


PIVOT = {"k": 5, "m": 50, "c": 4, "theta": 0.5}
CORES = os.cpu_count() or 1
GB = 1024 ** 3


# ---------------------------------------------------------------------------------------------
# 1. corpus


SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"] + ["th", "an", "er", "in", "on", "st"]


def distinct_doc_ids(prng, n: int) -> list[int]:
    """``n`` distinct random 62-bit doc ids (a crawl's are hashes of record ids)."""
    ids: set[int] = set()
    out = []
    while len(out) < n:
        doc_id = prng.randrange(1, 2 ** 62)
        if doc_id not in ids:
            ids.add(doc_id)
            out.append(doc_id)
    return out

def make_vocab(n: int) -> list[str]:
    """n distinct made-up words; frequent (low-rank) words are short, as in real text."""
    base, out = len(SYLLABLES), []
    for i in range(n):
        parts, x = [], i
        while True:
            parts.append(SYLLABLES[x % base])
            x //= base
            if x == 0:
                break
        out.append("".join(parts))
    return out


def make_corpus(n: int, seed: int = 20261122, vocab_size: int = 50_000, words_per_page: int = 400,
                dup_rate: float = 0.04, quilt_rate: float = 0.015) -> tuple[list[dict], dict]:
    """Pages {doc_id, url, words, domain, ip, snapshot, links} and what was planted."""
    import numpy as np

    rng = np.random.default_rng(seed)
    prng = random.Random(seed)
    vocab = np.array(make_vocab(vocab_size), dtype=object)
    # Zipf-Mandelbrot ranks through a 2^22-slot quantile table (fast sampling of 40M words)
    weights = 1.0 / (np.arange(1, vocab_size + 1) + 2.7)
    cum = np.cumsum(weights)
    cum /= cum[-1]
    table = np.minimum(np.searchsorted(cum, (np.arange(1 << 22) + 0.5) / (1 << 22)), vocab_size - 1)

    def draw(count: int) -> list[str]:
        return vocab[table[rng.integers(0, 1 << 22, count)]].tolist()

    n_quilt = int(round(n * quilt_rate))
    n_dup = int(round(n * dup_rate))
    n_orig = n - n_quilt - n_dup
    common = [draw(prng.randint(4, 10)) for _ in range(100)]
    common_cum = np.cumsum(1.0 / np.arange(1, 101))
    common_cum /= common_cum[-1]

    sites: list[dict] = []

    def new_site(spam: bool = False) -> dict:
        s = len(sites)
        site = {"domain": f"{'spam' if spam else 'site'}{s}.example", "ip": f"10.{s // 65536 % 256}.{s // 256 % 256}.{s % 256}",
                "header": draw(prng.randint(6, 12)), "footer": draw(prng.randint(6, 12))}
        sites.append(site)
        return site

    pages: list[dict] = []
    bodies: list[tuple[int, int]] = []  # body span of each original page, in its words
    lengths = np.clip(rng.normal(words_per_page, 40, n_orig).round().astype(int), 250, 550)
    site, left = None, 0
    for i in range(n_orig):
        if left == 0:
            site, left = new_site(), min(int(rng.geometric(1 / 20)), 400)
        left -= 1
        body_len = int(lengths[i]) - len(site["header"]) - len(site["footer"])
        body = draw(body_len)
        for _ in range(prng.randint(0, 3)):  # common phrases at random places
            pos = prng.randrange(len(body))
            body[pos:pos] = common[int(np.searchsorted(common_cum, prng.random()))]
        words = site["header"] + body + site["footer"]
        bodies.append((len(site["header"]), len(site["header"]) + len(body)))
        pages.append({"words": words, "site": site, "kind": "page"})
    for _ in range(n_dup):  # near-duplicates: a copy with 1 % of its words changed
        src = pages[prng.randrange(n_orig)]
        words = list(src["words"])
        for pos in prng.sample(range(len(words)), max(1, len(words) // 100)):
            words[pos] = draw(1)[0]
        pages.append({"words": words, "site": sites[prng.randrange(len(sites))], "kind": "dup"})
    site, left = None, 0
    for _ in range(n_quilt):  # quilts: passages of 4-8 other pages, on spam sites
        if left == 0:
            site, left = new_site(spam=True), prng.randint(5, 30)
        left -= 1
        n_src = prng.randint(4, 8)
        budget = words_per_page - len(site["header"]) - len(site["footer"])
        body = []
        for j, src_i in enumerate(prng.sample(range(n_orig), n_src)):
            lo, hi = bodies[src_i]
            length = min(hi - lo, max(40, min(120, budget // (n_src - j))))
            start = prng.randint(lo, hi - length)
            body += pages[src_i]["words"][start:start + length]
            budget -= length
        pages.append({"words": site["header"] + body + site["footer"], "site": site, "kind": "quilt"})
    prng.shuffle(pages)
    out = []
    for i, (p, doc_id) in enumerate(zip(pages, distinct_doc_ids(prng, len(pages)))):
        out.append({"doc_id": doc_id, "url": f"http://{p['site']['domain']}/{i}", "words": p["words"],
                    "domain": p["site"]["domain"], "ip": p["site"]["ip"], "snapshot": "bench", "links": [],
                    "kind": p["kind"]})
    planted = {"quilts": sorted(p["doc_id"] for p in out if p["kind"] == "quilt"), "dups": n_dup,
               "sites": len(sites), "words": sum(len(p["words"]) for p in out)}
    return out, planted


PAN13 = REPO.parent / "shared" / "data" / "pan13-text-alignment-no-obfuscation-subset" / "pan13-02-subset.tar.gz"
"""Real text for the corpus with copies: PAN's 1,949 source and 153 suspicious documents (~1.75M words)."""


def real_texts() -> list[list[str]]:
    """The words (spamflow.words, as parse makes them) of each PAN document, read from the tarball."""
    import tarfile

    from spamflow.words import words

    if not PAN13.exists():
        raise SystemExit(f"the corpus with copies needs real text: {PAN13} is missing "
                         "(run with --no-copies to leave it out)")
    out = []
    with tarfile.open(PAN13) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if member.isfile() and member.name.split("/")[-2] in ("src", "susp"):
                out.append(words(tar.extractfile(member).read().decode("utf-8", "replace")))
    return out


def make_copies_corpus(n: int, seed: int = 20261122, copied_share: float = 1 / 3, max_copies: int = 10,
                       words_per_page: int = 200, quilt_rate: float = 0.015, min_copies: int = 1) -> tuple[list[dict], dict]:
    """A crawl full of copies, from real text: distinct texts are consecutive ~``words_per_page``-word
    passages of the PAN documents (their suspicious documents hold verbatim passages of the
    source documents: real partial reuse), 1.5 % of them quilts of 4-8 passages of other
    texts; ``copied_share`` of the pages belong to texts with ``min_copies``-``max_copies`` copies,
    each copy on another site (a mirror or syndication host: the site's name renamed), the
    rest are texts on one page.  Sites as in :func:`make_corpus` (mean 20 pages)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    prng = random.Random(seed)
    stream = [w for text in real_texts() for w in text]
    group_sizes: list[int] = []  # pages per copied text: 2 .. max_copies + 1
    while sum(group_sizes) < n * copied_share:
        group_sizes.append(prng.randint(min_copies + 1, max_copies + 1))
    n_single = n - sum(group_sizes)
    n_texts = n_single + len(group_sizes)
    n_quilt = int(round(n_texts * quilt_rate))
    words_per_page = min(words_per_page, len(stream) // n_texts)  # distinct passages while the text lasts
    lengths = np.clip(rng.normal(words_per_page, words_per_page * 0.15, n_texts).round().astype(int),
                      words_per_page // 2, words_per_page * 2)
    texts, at, wraps = [], 0, 0
    for length in lengths[:n_texts - n_quilt].tolist():  # consecutive passages of the real stream
        if at + length > len(stream):
            wraps += 1
            at = wraps * 37 % words_per_page  # past the end: again, shifted (near-copies of passages)
        texts.append(stream[at:at + length])
        at += length
    kinds = ["page"] * len(texts)
    for _ in range(n_quilt):  # quilts: passages of 4-8 other texts
        n_src = prng.randint(4, 8)
        body = []
        for src in prng.sample(range(len(kinds)), n_src):
            length = min(len(texts[src]), prng.randint(30, 60))
            start = prng.randint(0, len(texts[src]) - length)
            body += texts[src][start:start + length]
        texts.append(body)
        kinds.append("quilt")
    order = list(range(n_texts))
    prng.shuffle(order)
    copies = [1] * n_single + group_sizes  # pages of each text, in shuffled text order
    sites: list[dict] = []
    site, left = None, 0
    pages = []
    for t, count in zip(order, copies):
        for j in range(count):
            if j == 0:  # the text's first page: on the current site
                if left == 0:
                    s = len(sites)
                    site = {"host": f"site{s}.example", "ip": f"10.{s // 65536 % 256}.{s // 256 % 256}.{s % 256}"}
                    sites.append(site)
                    left = min(int(rng.geometric(1 / 20)), 400)
                left -= 1
                host, ip = site["host"], site["ip"]
            else:  # a copy: another site's host, renamed
                other = sites[prng.randrange(len(sites))]
                host, ip = f"mirror{j}.{other['host']}", other["ip"]
            pages.append({"words": texts[t], "host": host, "ip": ip, "kind": kinds[t] if j == 0 else "copy"})
    prng.shuffle(pages)
    out = []
    for i, (p, doc_id) in enumerate(zip(pages, distinct_doc_ids(prng, len(pages)))):
        domain = p["host"].split(".", 1)[1] if p["host"].startswith("mirror") else p["host"]
        out.append({"doc_id": doc_id, "url": f"http://{p['host']}/{i}", "words": p["words"], "domain": domain,
                    "ip": p["ip"], "snapshot": "bench", "links": [], "kind": p["kind"]})
    planted = {"quilts": sorted(p["doc_id"] for p in out if p["kind"] == "quilt"), "dups": n - n_texts,
               "sites": len(sites), "words": sum(len(p["words"]) for p in out), "texts": n_texts,
               "copied_pages": sum(group_sizes), "wraps": wraps}
    return out, planted


CORPORA = {"distinct": make_corpus, "copies": make_copies_corpus}


def write_pages_parquet(pages: list[dict], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"doc_id": pa.array([p["doc_id"] for p in pages], pa.int64()),
                      "words": pa.array([p["words"] for p in pages], pa.list_(pa.string())),
                      "domain": pa.array([p["domain"] for p in pages], pa.string()),
                      "ip": pa.array([p["ip"] for p in pages], pa.string()),
                      "snapshot": pa.array([p["snapshot"] for p in pages], pa.string())})
    pq.write_table(table, path, row_group_size=8192)


def shingle_lines(pages: list[dict], k: int, path: Path) -> Path:
    """tests/test_quilt.py::_shingles: the lines write_shingles writes (copies collapsed), from page dicts."""
    from spamflow_quilt.copies import CopyWindow
    from spamflow_quilt.shingle import add_page, gram_hashes

    with open(path, "wb") as fh:
        window = CopyWindow(fh, path.with_name(path.name + ".scratch"))
        for p in pages:
            add_page(window, p["doc_id"], gram_hashes(p["words"], k), p["domain"], p["ip"])
        window.close()
    return path


# ---------------------------------------------------------------------------------------------
# workers: each measurement runs in a fresh process, so that ru_maxrss is its own


def _rusage() -> dict:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"self_rss_kb": me.ru_maxrss, "children_rss_kb": kids.ru_maxrss,
            "self_cpu": me.ru_utime + me.ru_stime, "children_cpu": kids.ru_utime + kids.ru_stime}


def worker_gen(spec: dict) -> dict:
    """Corpus of spec['n'] pages -> Parquet -> batch_gram_hashes (timed alone) -> write_shingles."""
    import pyarrow.parquet as pq
    from spamflow_quilt.shingle import batch_gram_hashes, write_shingles

    out = Path(spec["dir"])
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    extra = {k: spec[k] for k in ("copied_share", "max_copies", "min_copies", "words_per_page") if k in spec}
    pages, planted = CORPORA[spec.get("corpus", "distinct")](spec["n"], seed=spec["seed"], **extra)
    t_gen = time.perf_counter() - t0
    t0 = time.perf_counter()
    write_pages_parquet(pages, out / "pages.parquet")
    t_parquet = time.perf_counter() - t0
    k = PIVOT["k"]
    del pages
    t0 = time.perf_counter()
    n_grams = 0
    for batch in pq.ParquetFile(out / "pages.parquet").iter_batches(batch_size=2048, columns=["words"]):
        n_grams += len(batch_gram_hashes(batch.column("words"), k)[0])
    t_hashes = time.perf_counter() - t0
    t0 = time.perf_counter()
    counts = write_shingles(out / "pages.parquet", out / "shingles.jsonl", k)
    t_shingles_1 = time.perf_counter() - t0
    assert counts["grams"] == n_grams
    t_shingles = t_shingles_1
    if spec["workers"] > 1:  # the stage shingles in `workers` processes
        t0 = time.perf_counter()
        counts = write_shingles(out / "pages.parquet", out / "shingles.jsonl", k, workers=spec["workers"])
        t_shingles = time.perf_counter() - t0
        assert counts["grams"] == n_grams
    (out / "planted.json").write_text(json.dumps(planted))
    return {"n": spec["n"], "t_gen": t_gen, "t_parquet": t_parquet, "t_gram_hashes": t_hashes,
            "t_write_shingles": t_shingles, "t_write_shingles_1": t_shingles_1, "workers": spec["workers"],
            "grams": n_grams, "words": planted["words"],
            "planted_quilts": len(planted["quilts"]), "sites": planted["sites"], "planted": planted,
            "shingle_mb": (out / "shingles.jsonl").stat().st_size / 1e6,
            "lines": sum(1 for _ in open(out / "shingles.jsonl", "rb")), **_rusage()}


class _Phases:
    """Wall time of the local runner's phases, summed per job, and task subprocesses started."""

    def __init__(self):
        self.job = "?"
        self.times: dict[str, dict[str, float]] = {}
        self.tasks: Counter = Counter()

    def install(self) -> None:
        from mrjob.local import LocalMRJobRunner
        from mrjob.sim import SimMRJobRunner

        for name, label in [("_split_mapper_input", "split map input (parent)"),
                            ("_run_mappers_and_combiners", "map+combine tasks"),
                            ("_sort_reducer_input", "sort reducer input (GNU sort)"),
                            ("_split_reducer_input", "split reducer input (parent)"),
                            ("_run_reducers", "reduce tasks")]:
            setattr(SimMRJobRunner, name, self._timed(getattr(SimMRJobRunner, name), label))
        orig = LocalMRJobRunner._invoke_task_func
        phases = self

        def invoke(runner, task_type, step_num, task_num):
            phases.tasks[task_type] += 1
            return orig(runner, task_type, step_num, task_num)

        LocalMRJobRunner._invoke_task_func = invoke

    def _timed(self, func, label):
        phases = self

        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                d = phases.times.setdefault(phases.job, {})
                d[label] = d.get(label, 0.0) + time.perf_counter() - t0
        return wrapper


def _read_covers(path: Path) -> list:
    found = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            key, value = line.split("\t", 1)
            found.append((json.loads(key), json.loads(value)))
    return sorted(found)


def _find_quilts(shingles: Path, work: Path, runner: str, runner_args: tuple) -> list:
    from spamflow_quilt import detector
    from spamflow_quilt.params import QuiltParams

    return detector.find_quilts(shingles, work, QuiltParams(**PIVOT), runner, runner_args)


def _job_counts(work: Path) -> dict:
    """Patch grams, triples (sum of df(df-1)) and patchy pages, read from jobs (a) and (b)."""
    from spamflow_quilt.mr_base import untagged

    def rows(path: Path, kind: bytes):
        with open(path, "rb") as fh:
            for line in fh:
                got, columns = untagged(line.rstrip(b"\n").split(b"\t", 1)[1])
                if got == kind:
                    yield columns

    counts = {}
    pg = next(work.rglob("patch_grams.tsv"), None)  # find_quilts may file outputs under parameter folders
    if pg is not None:
        n = triples = 0
        for _grams, df in rows(pg, b"P"):
            n += len(df)
            triples += int((df.astype("int64") * (df.astype("int64") - 1)).sum())
        counts.update(patch_grams=n, triples=triples)
    patchy = next(work.rglob("patchy_pages.tsv"), None)
    if patchy is not None:
        counts["patchy_pages"] = sum(len(columns[0]) for columns in rows(patchy, b"Q"))
        counts["unit_triples"] = _unit_triples(list(rows(patchy, b"L")), list(rows(patchy, b"R")))
    return counts


def _unit_triples(lines: list, pages: list) -> int:
    """The triples job (c) makes at the pivot under ``foreign: none`` (copies collapsed;
    c >= 2 skips copied units), from job (b)'s ``L`` records (or a baseline's ``R`` rows)."""
    import numpy as np
    from spamflow_quilt.triples import iter_unit_triples

    skip = PIVOT["c"] >= 2
    if lines:
        from spamflow_quilt.triples import line_units

        parts = [line_units(hg, hl, ln, docs, servers=docs, patchy=patchy, sets=sets, skip_copied=skip)
                 for hg, hl, ln, docs, _domains, _ips, patchy, sets in lines]
        grams, docs, _servers, patchy, sets = (np.concatenate([p[i] for p in parts]) for i in range(5))
    elif pages:
        grams, docs, _domains, _ips, patchy, sets = (np.concatenate([p[i] for p in pages]) for i in range(6))
    else:
        return 0
    return sum(len(chunk[0]) for chunk in iter_unit_triples(grams, docs, servers=docs, sets=sets,
                                                            patchy=patchy.astype(bool), skip_copied=skip))


def worker_quilt(spec: dict) -> dict:
    """find_quilts over one shingle file on one runner, timed per job."""
    from spamflow_quilt import detector

    work = Path(spec["work"])
    work.mkdir(parents=True, exist_ok=True)
    runner, runner_args = spec["runner"], tuple(spec.get("runner_args", ()))
    phases = _Phases()
    if runner == "local":
        phases.install()
    job_times: dict[str, float] = {}
    orig_run_job = detector.run_job

    def timed_run_job(job_class, *args, **kwargs):
        phases.job = job_class.__name__
        t0 = time.perf_counter()
        try:
            return orig_run_job(job_class, *args, **kwargs)
        finally:
            job_times[job_class.__name__] = time.perf_counter() - t0

    detector.run_job = timed_run_job
    t0 = time.perf_counter()
    found = _find_quilts(Path(spec["shingles"]), work, runner, runner_args)
    total = time.perf_counter() - t0
    planted = set(json.loads((Path(spec["shingles"]).parent / "planted.json").read_text())["quilts"]) \
        if (Path(spec["shingles"]).parent / "planted.json").exists() else set()
    usage = _rusage()  # the stage's, before the benchmark's own counting below reads the intermediates
    result = [[d, c["n_patch_grams"], c["n_grams"], c["sources"]] for d, c in found]
    (work / "found.json").write_text(json.dumps(result))
    return {"total": total, "jobs": job_times, "phases": phases.times, "tasks": dict(phases.tasks),
            "quilts": len(found), "planted_found": sum(d in planted for d, _ in found),
            "found_file": str(work / "found.json"), **_job_counts(work), **usage}


def worker_ref(spec: dict) -> dict:
    """Brute-force reference on the largest same-recipe corpus (<= spec['n']) it finishes in
    about spec['budget'] seconds, and find_quilts (inline runner: the jobs' code and protocols
    in process; tests/test_quilt.py checks inline = local) on the same corpus."""
    from spamflow_quilt import detector
    from spamflow_quilt.params import QuiltParams

    from quilt_reference import reference_quilts

    qp = QuiltParams(**PIVOT)
    out = Path(spec["dir"])
    out.mkdir(parents=True, exist_ok=True)

    def ref(n):
        pages, planted = CORPORA[spec.get("corpus", "distinct")](n, seed=spec["seed"])
        t0 = time.perf_counter()
        quilts = reference_quilts(pages, qp.k, qp.m, qp.c, qp.theta, qp.foreign, qp.phi)
        return pages, planted, quilts, time.perf_counter() - t0

    probe_n = min(spec["n"], 400)
    _, _, _, t_probe = ref(probe_n)
    est_full = t_probe * (spec["n"] / probe_n) ** 2  # quadratic: df scans every page per gram
    n_ref = spec["n"]
    if est_full > spec["budget"]:
        n_ref = max(probe_n, int((spec["budget"] / t_probe) ** 0.5 * probe_n) // 100 * 100)
    pages, planted, quilts, t_ref = ref(n_ref)
    shingles = shingle_lines(pages, qp.k, out / "shingles.jsonl")
    t0 = time.perf_counter()
    found = detector.find_quilts(shingles, out, qp, "inline")  # same job code as local, in process
    t_mr = time.perf_counter() - t0
    expected = [(q["doc_id"], q["n_patch_grams"], q["n_grams"], [[s["doc_id"], s["grams"]] for s in q["sources"]])
                for q in quilts]
    got = [(d, c["n_patch_grams"], c["n_grams"], c["sources"]) for d, c in found]
    return {"n_target": spec["n"], "probe_n": probe_n, "t_probe": t_probe, "est_full": est_full, "n_ref": n_ref,
            "t_ref": t_ref, "t_mr_local": t_mr, "ref_quilts": len(expected), "mr_quilts": len(got),
            "equal": expected == got, "planted": len(planted["quilts"]),
            "planted_found": len(set(planted["quilts"]) & {d for d, *_ in got}), **_rusage()}


def worker_profile(spec: dict) -> dict:
    """find_quilts on the inline runner under cProfile; own time split by where it is spent."""
    from spamflow_quilt import detector
    from spamflow_quilt.params import QuiltParams

    work = Path(spec["work"])
    work.mkdir(parents=True, exist_ok=True)
    shingles = work / "shingles.jsonl"
    with open(spec["shingles"], encoding="utf-8") as src, open(shingles, "w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            if i >= spec["n"]:
                break
            dst.write(line)
    (work / "plain").mkdir()
    t0 = time.perf_counter()
    detector.find_quilts(shingles, work / "plain", QuiltParams(**PIVOT), "inline")
    t_plain = time.perf_counter() - t0
    (work / "prof").mkdir()
    prof = cProfile.Profile()
    prof.enable()
    detector.find_quilts(shingles, work / "prof", QuiltParams(**PIVOT), "inline")
    prof.disable()
    stats = pstats.Stats(prof).stats
    cats: Counter = Counter()
    top: Counter = Counter()
    for (filename, _line, func), (_cc, _nc, tottime, _ct, _callers) in stats.items():
        name = f"{Path(filename).name}:{func}" if filename != "~" else func
        if "json" in filename or "json" in func or filename.endswith("mrjob/protocol.py"):
            cat = "JSON encode/decode (json + mrjob.protocol)"
        elif "sort" in func or filename.endswith(("heapq.py",)):
            cat = "sorting (in-memory sort of mrjob's inline runner)"
        elif "spamflow_quilt" in filename or "greedy_cover" in func:
            cat = "our job code (spamflow_quilt mappers/reducers/cover)"
        elif "mrjob" in filename:
            cat = "mrjob framework (read/group/write lines, splits, counters)"
        elif "write" in func or "read" in func or "readline" in func or "io" in filename:
            cat = "file I/O (read/write calls)"
        else:
            cat = "other (str ops, builtins called from the above)"
        cats[cat] += tottime
        top[name] += tottime
    total = sum(cats.values())
    # start-up of one task subprocess: the interpreter + importing a job module
    starts = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import spamflow_quilt.mr_quilt_cover"], check=True,
                       env={**os.environ, "PYTHONPATH": str(REPO / "plugins")})
        starts.append(time.perf_counter() - t0)
    return {"n": spec["n"], "t_inline": t_plain, "profiled_total": total, "categories": cats.most_common(),
            "top": top.most_common(12), "t_task_start": min(starts), **_rusage()}


def worker_shingle(spec: dict) -> dict:
    """write_shingles alone over a corpus worker_gen wrote (for --baseline: the other code's shingling)."""
    from spamflow_quilt.shingle import write_shingles

    out = Path(spec["out"])
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    write_shingles(Path(spec["pages"]), out, PIVOT["k"], workers=spec["workers"])
    return {"t_write_shingles": time.perf_counter() - t0, "shingle_mb": out.stat().st_size / 1e6,
            "lines": sum(1 for _ in open(out, "rb")), **_rusage()}


def worker_inline(spec: dict) -> dict:
    """write_shingles in this process and find_quilts on the inline runner (every job in this
    process too): the CPU seconds of the code itself, without the local runner's ~25 task
    processes starting Python, mrjob and NumPy (most of a 10,000-page run's CPU)."""
    from spamflow_quilt import detector
    from spamflow_quilt.params import QuiltParams
    from spamflow_quilt.shingle import write_shingles

    work = Path(spec["work"])
    work.mkdir(parents=True, exist_ok=True)
    cpu = {}
    t0 = time.process_time()
    write_shingles(Path(spec["pages"]), work / "shingles.tsv", PIVOT["k"])
    cpu["shingling"] = time.process_time() - t0
    orig_run_job = detector.run_job

    def timed_run_job(job_class, *args, **kwargs):
        t = time.process_time()
        try:
            return orig_run_job(job_class, *args, **kwargs)
        finally:
            cpu[job_class.__name__] = time.process_time() - t

    detector.run_job = timed_run_job
    found = detector.find_quilts(work / "shingles.tsv", work, QuiltParams(**PIVOT), "inline")
    return {"cpu": cpu, "quilts": len(found), "found": json.dumps(found), **_rusage()}


WORKERS = {"gen": worker_gen, "inline": worker_inline, "quilt": worker_quilt, "ref": worker_ref, "profile": worker_profile,
           "shingle": worker_shingle}


def run_worker(kind: str, spec: dict, timeout: float = 3600, code: str | None = None) -> dict:
    """One measurement in a fresh process; ``code``: a folder whose ``spamflow_quilt`` is
    imported instead of this checkout's (``--baseline``)."""
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONHASHSEED": "0"}
    if code:
        env["BENCH_QUILT_CODE"] = code
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", kind, json.dumps(spec)],
                          capture_output=True, text=True, env=env, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"worker {kind} {spec} failed:\n{proc.stderr[-4000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall"] = time.perf_counter() - t0
    return result


# ---------------------------------------------------------------------------------------------
# the corpus with copies


def run_copies(args, sizes: list[int], runners: list[str], runs: dict, gens: dict, tmp: Path,
               spark_args: list[str]) -> dict[str, dict[int, dict]]:
    """find_quilts on the real-text corpus with copies, per size and runner, with its ratio to
    the distinct-text corpus measured above in the same run; the reference on a small one."""
    share, most = args.copied_share, args.max_copies
    print(f"\n== corpus with copies (real text: PAN documents, ~200-word passages; {100 * share:.0f} % of the pages "
          f"hold texts with {args.min_copies}-{most} copies on other sites' renamed hosts; 1.5 % quilts) ==")
    out: dict[str, dict[int, dict]] = {r: {} for r in runners}
    for n in sizes:
        spec = {"n": n, "seed": args.seed, "dir": str(tmp / f"copies-{n}"), "workers": args.workers,
                "corpus": "copies", "copied_share": share, "max_copies": most, "min_copies": args.min_copies,
                "words_per_page": args.copies_words}
        g = run_worker("gen", spec)
        p = g["planted"]
        print(f"  {n:>7,} pages: {p['texts']:,} distinct texts, {p['copied_pages']:,} pages of copied texts, "
              f"{g['words'] / n:.0f} words/page; write_shingles {g['t_write_shingles']:.1f} s, {g['lines']:,} lines "
              f"({n / g['t_write_shingles']:,.0f} pages/s)")
        for runner in runners:
            r = run_worker("quilt", {"shingles": str(tmp / f"copies-{n}" / "shingles.jsonl"),
                                     "work": str(tmp / f"copies-{n}" / runner), "runner": runner,
                                     "runner_args": spark_args if runner == "spark" else []})
            r["t_write_shingles"] = g["t_write_shingles"]
            out[runner][n] = r
            total = g["t_write_shingles"] + r["total"]
            base = runs.get(runner, {}).get(n)
            ratio = ""
            if base and "extrapolated_from" not in base:
                base_rate = n / (gens[n]["t_write_shingles"] + base["total"]) / CORES
                ratio = f";  {n / total / CORES / base_rate:.2f}x the distinct-text corpus's {base_rate:,.0f} pages/s/core"
            print(f"    {runner:5}: shingles + jobs {total:6.1f} s = {n / total / CORES:7.1f} pages/s/core{ratio}")
            print("        jobs: " + ", ".join(f"{j} {t:.1f} s" for j, t in r["jobs"].items()))
            print(f"        patch grams {r.get('patch_grams', 0):,}, patchy pages {r.get('patchy_pages', 0):,}, "
                  f"page pairs (sum df(df-1)) {r.get('triples', 0):,}, triples made (copies collapsed) "
                  f"{r.get('unit_triples', 0):,}, quilts {r['quilts']:,} (planted {len(p['quilts']):,}, found "
                  f"{r['planted_found']:,})")
            print(f"        peak RSS: this process {_mib(r['self_rss_kb'])}, largest child {_mib(r['children_rss_kb'])}")
            if args.baseline:
                compare_baseline(args, n, runner, tmp / f"copies-{n}", g, r, spark_args)
            sys.stdout.flush()
    ref = run_worker("ref", {"n": min(sizes[0], 2000), "seed": args.seed, "budget": args.ref_budget,
                             "dir": str(tmp / "ref-copies"), "corpus": "copies"})
    print(f"  reference on {ref['n_ref']:,} pages with copies: {ref['ref_quilts']} quilts, find_quilts "
          f"{ref['mr_quilts']}: {'IDENTICAL (doc, patch grams, grams, sources)' if ref['equal'] else 'DIFFERENT'}")
    return out


def r_found(r: dict) -> str:
    """A local run's quilts as worker_inline reports them (JSON of find_quilts' list)."""
    return json.dumps([[d, {"n_patch_grams": p, "n_grams": g, "sources": s}]
                       for d, p, g, s in json.loads(Path(r["found_file"]).read_text())])


def compare_baseline(args, n: int, runner: str, folder: Path, g: dict, r: dict, spark_args: list[str]) -> dict:
    """The same corpus shingled and run with the --baseline code, right after this code's
    run: before/after ratios of pages/s per core (wall, and per CPU second, which a busy
    machine disturbs less) and of the largest process, and whether the quilts (doc, counts,
    sources) are identical.  Shingling is timed alone for both codes (``shingle`` worker)."""
    code = str(Path(args.baseline).resolve())
    a_sh = run_worker("shingle", {"pages": str(folder / "pages.parquet"), "out": str(folder / "again.tsv"),
                                  "workers": args.workers})
    shingles = folder / "baseline" / "shingles.tsv"
    b_sh = run_worker("shingle", {"pages": str(folder / "pages.parquet"), "out": str(shingles),
                                  "workers": args.workers}, code=code)
    b = run_worker("quilt", {"shingles": str(shingles), "work": str(folder / "baseline" / runner), "runner": runner,
                             "runner_args": spark_args if runner == "spark" else []}, code=code)

    def figures(sh: dict, q: dict) -> tuple[float, float, int]:
        cpu = sh["self_cpu"] + sh["children_cpu"] + q["self_cpu"] + q["children_cpu"]
        rss = max(sh["self_rss_kb"], sh["children_rss_kb"], q["self_rss_kb"], q["children_rss_kb"])
        return n / (sh["t_write_shingles"] + q["total"]) / CORES, n / cpu, rss

    (before, before_cpu, rss_before), (after, after_cpu, rss_after) = figures(b_sh, b), figures(a_sh, r)
    same = Path(b["found_file"]).read_text() == Path(r["found_file"]).read_text()
    print(f"    this code, shingling again alone: {a_sh['t_write_shingles']:.1f} s ({a_sh['lines']:,} lines, "
          f"{a_sh['shingle_mb']:.0f} MB); with the jobs above {after:7.1f} pages/s/core, {after_cpu:7.1f} pages/CPU-s; "
          f"largest process {_mib(rss_after)}")
    print(f"    baseline ({args.baseline}), same corpus, just after: shingling {b_sh['t_write_shingles']:.1f} s "
          f"({b_sh['lines']:,} lines, {b_sh['shingle_mb']:.0f} MB), jobs {b['total']:.1f} s: {before:7.1f} "
          f"pages/s/core, {before_cpu:7.1f} pages/CPU-s; largest process {_mib(rss_before)}")
    print("        jobs: " + ", ".join(f"{j} {t:.1f} s" for j, t in b["jobs"].items()))
    print(f"    after / before: {after / before:.2f}x pages/s/core, {after_cpu / before_cpu:.2f}x pages/CPU-s, "
          f"largest process {rss_after / rss_before:.2f}x; quilts {'IDENTICAL' if same else 'DIFFERENT'} "
          f"({r['quilts']:,} / {b['quilts']:,})")
    inline = {}
    for name, where in (("after", None), ("before", code), ("after again", None)):
        inline[name] = run_worker("inline", {"pages": str(folder / "pages.parquet"),
                                             "work": str(folder / f"inline-{name.replace(' ', '-')}")}, code=where)
        i = inline[name]
        print(f"    inline runner, {name:11}: CPU " + ", ".join(f"{k} {v:.2f} s" for k, v in i["cpu"].items())
              + f"; total {sum(i['cpu'].values()):.2f} s = {n / sum(i['cpu'].values()):,.0f} pages/CPU-s; "
              f"peak RSS {_mib(i['self_rss_kb'])}")
    best_after = min(sum(inline[k]["cpu"].values()) for k in ("after", "after again"))
    same_inline = inline["after"]["found"] == inline["before"]["found"] == r_found(r)
    print(f"    inline after / before: {sum(inline['before']['cpu'].values()) / best_after:.2f}x pages/CPU-s; quilts "
          f"{'IDENTICAL to each other and to the local runner' if same_inline else 'DIFFERENT'}")
    return {"before": before, "after": after, "same": same}


# ---------------------------------------------------------------------------------------------
# main


def _versions() -> str:
    out = []
    for dist in ("mrjob", "pyspark", "xxhash", "pyarrow", "numpy"):
        try:
            out.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            out.append(f"{dist} -")
    return ", ".join(out)


def _machine() -> str:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GB
    cpu = "?"
    with contextlib.suppress(OSError):
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{CORES} cores ({cpu}), {mem:.0f} GB RAM, Python {platform.python_version()} on "
            f"{platform.system()} {platform.release()}; load average at start {load:.1f}")


def _mib(kb: int) -> str:
    return f"{kb / 1024:,.0f} MiB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring and benchmarks/README.md for what is measured.")
    ap.add_argument("--sizes", default="10000,100000", help="corpus sizes in pages (default 10000,100000)")
    ap.add_argument("--quick", action="store_true", help="sizes 2000,10000 and a smaller profile")
    ap.add_argument("--runners", default="local,spark", help="mrjob runners: local, spark (local[2]) (default both)")
    ap.add_argument("--budget", type=float, default=330.0,
                    help="largest predicted seconds for one (size, runner) run; above it the size is "
                         "extrapolated linearly from the largest measured size (default 330)")
    ap.add_argument("--ref-budget", type=float, default=120.0,
                    help="seconds for the brute-force reference; it runs on a smaller corpus if needed (default 120)")
    ap.add_argument("--profile-size", type=int, default=1000, help="pages profiled on the inline runner (default 1000)")
    ap.add_argument("--no-profile", action="store_true", help="skip the cProfile run")
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="processes that shingle, as the stage's `workers` (default: the cores)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--no-copies", action="store_true", help="leave out the corpus with copies (real text)")
    ap.add_argument("--no-distinct", action="store_true",
                    help="leave out the synthetic corpus of distinct texts (measure only the corpus with copies)")
    ap.add_argument("--copied-share", type=float, default=1 / 3,
                    help="share of the copies corpus's pages whose text has copies (default 1/3)")
    ap.add_argument("--max-copies", type=int, default=10, help="copies of a copied text: at most N (default 10)")
    ap.add_argument("--min-copies", type=int, default=1, help="copies of a copied text: at least N (default 1)")
    ap.add_argument("--copies-words", type=int, default=200,
                    help="words per page of the copies corpus (default 200; less if the real text runs out)")
    ap.add_argument("--baseline", default=None, metavar="DIR",
                    help="also run the corpus with copies with the spamflow_quilt package found in DIR (another "
                         "version, e.g. `git archive <commit> plugins/spamflow_quilt | tar -x -C /tmp/old` and "
                         "DIR=/tmp/old/plugins), right after this code's run: before/after ratios")
    args = ap.parse_args()
    sizes = sorted({int(x) for x in ("2000,10000" if args.quick else args.sizes).split(",")})
    runners = [r.strip() for r in args.runners.split(",") if r.strip()]
    if args.quick:
        args.profile_size = min(args.profile_size, 500)
    small = max(1000, sizes[0] // 5)  # a second measured size when a big one is extrapolated
    started = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="bench-quilt-"))
    spark_args = ["--spark-master", "local[2]"]

    print("spamflow quilt benchmark")
    print(f"machine : {_machine()}")
    print(f"libs    : {_versions()}")
    print(f"run     : sizes {', '.join(f'{n:,}' for n in sizes)} pages; runners {', '.join(runners)}; "
          f"pivot (k, m, c, theta) = ({PIVOT['k']}, {PIVOT['m']}, {PIVOT['c']}, {PIVOT['theta']}); "
          f"budget {args.budget:.0f} s per (size, runner)")
    print("corpus  : ~400 words/page (sd 40) from a Zipf-Mandelbrot vocabulary of 50,000 words; sites of mean 20 pages")
    print("          sharing header+footer phrases; 100 common phrases; 4 % near-duplicates (1 % of words changed);")
    print("          1.5 % quilts of 40-120-word passages from 4-8 other pages")
    print(f"tmp     : {tmp}")
    sys.stdout.flush()

    gens: dict[int, dict] = {}

    def gen(n: int) -> dict:
        if n not in gens:
            gens[n] = run_worker("gen", {"n": n, "seed": args.seed, "dir": str(tmp / str(n)),
                                         "workers": args.workers})
        return gens[n]

    print(f"\n== corpus and shingling (write_shingles in 1 process, then in {args.workers}, as the stage with workers: {args.workers}) ==")
    for n in [] if args.no_distinct else sizes:
        g = gen(n)
        print(f"  {n:>7,} pages: corpus {g['t_gen']:.1f} s + Parquet {g['t_parquet']:.1f} s;  "
              f"batch_gram_hashes {g['t_gram_hashes']:.1f} s ({n / g['t_gram_hashes']:,.0f} pages/s);  "
              f"write_shingles 1 process {g['t_write_shingles_1']:.1f} s, {g['workers']} processes "
              f"{g['t_write_shingles']:.1f} s ({n / g['t_write_shingles']:,.0f} pages/s, "
              f"{g['shingle_mb']:.0f} MB shingle lines);  {g['grams']:,} grams ({g['grams'] / n:.0f}/page);  "
              f"peak RSS {_mib(g['self_rss_kb'])}")
        sys.stdout.flush()

    runs: dict[str, dict[int, dict]] = {r: {} for r in runners}
    print("\n== quilt stages: find_quilts, one fresh process per (size, runner) ==")
    for runner in runners:
        ra = spark_args if runner == "spark" else []
        todo = [] if args.no_distinct else list(sizes)
        measured: list[int] = []
        while todo:
            n = todo.pop(0)
            if measured:
                last = runs[runner][measured[-1]]
                pred = last["total"] * n / measured[-1]
                if pred > args.budget:
                    runs[runner][n] = {"extrapolated_from": measured[-1], "total": pred,
                                       "jobs": {j: t * n / measured[-1] for j, t in last["jobs"].items()}}
                    print(f"  {runner:5} {n:>7,} pages: predicted {pred:,.0f} s > budget {args.budget:.0f} s -> "
                          f"not run, EXTRAPOLATED linearly from {measured[-1]:,} pages")
                    if len(measured) < 2 and small not in measured and small < measured[0]:
                        todo.insert(0, small)  # a second measured size, for the linearity ratio
                        todo.sort()
                    continue
            g = gen(n)
            r = run_worker("quilt", {"shingles": str(tmp / str(n) / "shingles.jsonl"),
                                     "work": str(tmp / str(n) / runner), "runner": runner, "runner_args": ra})
            runs[runner][n] = r
            measured.append(n)
            measured.sort()
            cpu = r["self_cpu"] + r["children_cpu"]
            print(f"  {runner:5} {n:>7,} pages: {r['total']:7.1f} s wall  {n / r['total']:7.1f} pages/s  "
                  f"{n / r['total'] / CORES:6.1f} pages/s/core  CPU {cpu:6.1f} s ({n / cpu if cpu else 0:6.1f} pages/CPU-s, "
                  f"Spark JVM workers not counted)" if runner == "spark" else
                  f"  {runner:5} {n:>7,} pages: {r['total']:7.1f} s wall  {n / r['total']:7.1f} pages/s  "
                  f"{n / r['total'] / CORES:6.1f} pages/s/core  CPU {cpu:6.1f} s ({n / cpu:6.1f} pages/CPU-s)")
            print("        jobs: " + ", ".join(f"{j} {t:.1f} s" for j, t in r["jobs"].items()))
            print(f"        grams {g['grams']:,}, patch grams {r.get('patch_grams', 0):,}, patchy pages "
                  f"{r.get('patchy_pages', 0):,}, triples {r.get('triples', 0):,}, quilts {r['quilts']:,} "
                  f"(planted {g['planted_quilts']:,}, found {r['planted_found']:,})")
            print(f"        peak RSS: this process {_mib(r['self_rss_kb'])}, largest child {_mib(r['children_rss_kb'])}")
            if r.get("tasks"):
                print(f"        task subprocesses: {sum(r['tasks'].values())} "
                      f"({', '.join(f'{v} {k}' for k, v in sorted(r['tasks'].items()))}), run {CORES} at a time")
            for job, ph in r.get("phases", {}).items():
                print(f"        {job:26}" + ", ".join(f"{k} {v:.1f}" for k, v in ph.items()))
            if args.baseline:
                compare_baseline(args, n, runner, tmp / str(n), g, r, ra)
            sys.stdout.flush()

    copies: dict[str, dict[int, dict]] = {r: {} for r in runners}
    if not args.no_copies:
        copies = run_copies(args, sizes, runners, runs, gens, tmp, spark_args)

    # results agree across runners
    print("\n== agreement ==")
    for n in sorted({n for rr in runs.values() for n, r in rr.items() if "found_file" in r}):
        files = {runner: runs[runner][n]["found_file"] for runner in runners
                 if "found_file" in runs[runner].get(n, {})}
        if len(files) > 1:
            data = {k: Path(v).read_text() for k, v in files.items()}
            same = len(set(data.values())) == 1
            print(f"  {n:>7,} pages: {' = '.join(files)}: {'identical quilts and sources' if same else 'DIFFER'}")

    ref = None
    if runners and not args.no_distinct:
        ref = run_worker("ref", {"n": sizes[0], "seed": args.seed, "budget": args.ref_budget, "dir": str(tmp / "ref")})
        note = (f"on {ref['n_ref']:,} pages, NOT {sizes[0]:,}: estimated {ref['est_full']:,.0f} s there "
                f"(quadratic from {ref['t_probe']:.1f} s on {ref['probe_n']} pages) > {args.ref_budget:.0f} s budget"
                if ref["n_ref"] < sizes[0] else f"on {sizes[0]:,} pages")
        print(f"  reference (tests/quilt_reference.py, brute force) {note}: {ref['t_ref']:.1f} s "
              f"({ref['n_ref'] / ref['t_ref']:.1f} pages/s); find_quilts (inline runner) on the same corpus "
              f"{ref['t_mr_local']:.1f} s")
        print(f"  reference {ref['ref_quilts']} quilts, find_quilts {ref['mr_quilts']} quilts: "
              f"{'IDENTICAL (doc, patch grams, grams, sources)' if ref['equal'] else 'DIFFERENT'}; "
              f"planted {ref['planted']}, found {ref['planted_found']}")

    prof = None
    if not args.no_profile:
        prof = run_worker("profile", {"n": min(args.profile_size, sizes[0]),
                                      "shingles": str(tmp / str(sizes[0]) / "shingles.jsonl"),
                                      "work": str(tmp / "profile")})
        print(f"\n== where the time goes: find_quilts on the inline runner (in process), first {prof['n']:,} pages "
              f"of the {sizes[0]:,} corpus ==")
        print(f"  inline runner, no profiler: {prof['t_inline']:.1f} s ({prof['n'] / prof['t_inline']:.0f} pages/s on one core)")
        print(f"  under cProfile {prof['profiled_total']:.1f} s of own time, by where it is spent:")
        for cat, t in prof["categories"]:
            print(f"    {cat:62} {t:6.1f} s {100 * t / prof['profiled_total']:5.1f} %")
        print("  top functions (own time):")
        for name, t in prof["top"]:
            print(f"    {name[:70]:70} {t:6.2f} s")
        print(f"  one task subprocess start (python + import of a job module): {prof['t_task_start'] * 1000:.0f} ms")
        if "local" in runs:
            for n, r in sorted(runs["local"].items()):
                if "tasks" in r:
                    k = sum(r["tasks"].values())
                    print(f"  local runner at {n:,} pages: {k} task processes x {prof['t_task_start'] * 1000:.0f} ms = "
                          f"{k * prof['t_task_start']:.1f} s of start-up (CPU, {CORES} in parallel)")

    # summary table
    print("\n== summary (per size; pages/s of shingling + all quilt stages; * = extrapolated) ==")
    print(f"  {'runner':6} {'pages':>8} {'shingle s':>9} {'jobs s':>9} {'total s':>9} {'pages/s':>8} "
          f"{'/core':>7} {'peak RSS parent/child':>22}")
    for runner in runners:
        for n in sorted(runs[runner]):
            r = runs[runner][n]
            sh = gens[n]["t_write_shingles"] if n in gens else float("nan")
            tot = sh + r["total"]
            star = "*" if "extrapolated_from" in r else " "
            rss = (f"{_mib(r['self_rss_kb'])} / {_mib(r['children_rss_kb'])}" if "self_rss_kb" in r else "-")
            print(f"  {runner:6} {n:>8,} {sh:9.1f} {r['total']:8.1f}{star} {tot:8.1f}{star} {n / tot:8.1f} "
                  f"{n / tot / CORES:7.1f} {rss:>22}")
    for runner in runners:
        ms = sorted(n for n, r in runs[runner].items() if "extrapolated_from" not in r)
        if len(ms) >= 2:
            a, b = ms[0], ms[-1]
            print(f"  linearity, {runner}: time({b:,}) / time({a:,}) = {runs[runner][b]['total'] / runs[runner][a]['total']:.2f} "
                  f"for {b / a:.0f}x the pages (1 = all fixed cost, {b / a:.0f} = linear)")
    if len(sizes) >= 2 and not args.no_distinct:
        a, b = sizes[0], sizes[-1]
        print(f"  linearity, write_shingles: time({b:,}) / time({a:,}) = "
              f"{gens[b]['t_write_shingles'] / gens[a]['t_write_shingles']:.2f} for {b / a:.0f}x the pages")
        for runner in runners:
            if b in runs[runner] and a in runs[runner]:
                ra_, rb_ = runs[runner][a], runs[runner][b]
                star = " (EXTRAPOLATED, linear by construction)" if "extrapolated_from" in rb_ else ""
                print(f"  ratio {b:,}/{a:,}, {runner}: {rb_['total'] / ra_['total']:.2f}{star}")

    # verdict
    print("\n== verdict ==")
    big = sizes[-1]
    if "local" in runs and big in runs["local"]:
        r = runs["local"][big]
        tot = gens[big]["t_write_shingles"] + r["total"]
        per_core = big / tot / CORES
        print(f"  throughput: {per_core:.1f} pages/s per core at {big:,} pages on the local runner"
              f"{' (EXTRAPOLATED)' if 'extrapolated_from' in r else ''} -> "
              f"{'MEETS' if per_core >= 1000 else 'MISSES'} the >= 1,000 pages/s/core target "
              f"({100 * per_core / 1000:.1f} % of it; Najork's cluster ~9 pages/s/core)")
    peaks = [(f"{runner} {n:,} {kind}", r[key]) for runner in runners for n, r in runs[runner].items()
             for kind, key in (("parent", "self_rss_kb"), ("largest child", "children_rss_kb")) if key in r]
    peaks += [(f"shingling {n:,}", g["self_rss_kb"]) for n, g in gens.items()]
    for runner, rr in copies.items():
        for n, r in rr.items():
            per_core = n / (r["t_write_shingles"] + r["total"]) / CORES
            print(f"  copies    : {per_core:.1f} pages/s per core at {n:,} pages with copies on the {runner} runner "
                  f"-> {'MEETS' if per_core >= 1000 else 'MISSES'} the >= 1,000 pages/s/core target")
            peaks += [(f"copies {runner} {n:,} {kind}", r[key])
                      for kind, key in (("parent", "self_rss_kb"), ("largest child", "children_rss_kb"))]
    worst = max(peaks, key=lambda x: x[1])
    print(f"  memory    : largest process {_mib(worst[1])} ({worst[0]}) -> "
          f"{'MEETS' if worst[1] < 2 * 1024 * 1024 else 'MISSES'} no process above 2 GB (measured sizes only)")
    print(f"  (whole run {time.perf_counter() - started:.0f} s)")
    if args.keep:
        print(f"  kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)



if __name__ == "__main__" and sys.argv[1:2] == ["--worker"]:
    if os.environ.get("BENCH_QUILT_CODE"):  # --baseline: the other version's spamflow_quilt first
        sys.path.insert(0, os.environ["BENCH_QUILT_CODE"])
    print(json.dumps(WORKERS[sys.argv[2]](json.loads(sys.argv[3]))))
elif __name__ == "__main__":
    main()
