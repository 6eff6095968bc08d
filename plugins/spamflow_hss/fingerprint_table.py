"""Fingerprinting as a streaming map over the page table: each Parquet part of the pages
gives a Parquet part of fingerprints, in batches, so memory does not grow with the crawl."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from spamflow_hss.fingerprint import EMPTY, fingerprint_hashes, orderings
from spamflow_hss.markup_noise import page_noise
from spamflow_hss.noise_window import ngram_count, window_ngram_hashes

PAGE_COLUMNS = ["doc_id", "snapshot", "url", "host", "domain", "ip"]


def fingerprint_schema(m: int) -> pa.Schema:
    """The fingerprints table: the page's identity, its n-gram count and its m minima."""
    return pa.schema([
        pa.field("doc_id", pa.int64(), nullable=False),
        pa.field("snapshot", pa.string(), nullable=False),
        pa.field("url", pa.string(), nullable=False),
        pa.field("host", pa.string(), nullable=False),
        pa.field("domain", pa.string(), nullable=False),
        pa.field("ip", pa.string()),
        pa.field("ngrams", pa.int64(), nullable=False),
        pa.field("fingerprint", pa.list_(pa.uint64(), m), nullable=False),
    ])


def fingerprint_part(pages: Path, out: Path, n: int, m: int, seed: int, window: int = 0, batch_size: int = 512,
                     done: Callable[[int], None] | None = None, noise_mode: str = "paper") -> dict[str, int]:
    """Fingerprint every page of one Parquet part of the page table into ``out`` (its first
    and last ``window`` n-grams, all of them with 0; ``ngrams`` counts them all), of the noise
    ``noise_mode`` selects (markup_noise.py: ``paper``, all of it; ``markup``, inside tags;
    ``markup-urls``, inside tags with URL values cut to one mark).

    Counts: ``pages``; ``short_pages``, with fewer than n characters of noise (an all-empty
    fingerprint that never matches); ``sparse_pages``, with at least one empty dimension
    (fewer n-grams than it takes to fill m dimensions; section 3.3's small documents);
    ``noise_chars``."""
    order = orderings(m, seed)
    counts: Counter[str] = Counter()
    schema = fingerprint_schema(m)
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        for batch in pq.ParquetFile(pages).iter_batches(batch_size=batch_size, columns=[*PAGE_COLUMNS, "noise"]):
            noises = batch.column("noise").to_pylist()
            vectors = np.empty((len(noises), m), np.uint64)
            ngrams = np.zeros(len(noises), np.int64)
            for row, noise in enumerate(noises):
                text = page_noise(noise or "", noise_mode)
                ngrams[row] = ngram_count(text, n)
                vectors[row] = fingerprint_hashes(window_ngram_hashes(text, n, window), order)
                counts["noise_chars"] += len(noise or "")
            empty = vectors == EMPTY
            counts["pages"] += len(noises)
            counts["short_pages"] += int(np.count_nonzero(ngrams == 0))
            counts["sparse_pages"] += int(np.count_nonzero(empty.any(axis=1)))
            columns = [batch.column(name) for name in PAGE_COLUMNS]
            columns += [pa.array(ngrams), pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), m)]
            writer.write_table(pa.Table.from_arrays(columns, schema=schema))
            if done:
                done(len(noises))
    return dict(counts)


def _fingerprint_job(job: tuple[str, str, int, int, int, int, str]) -> dict[str, int]:
    pages, out, n, m, seed, window, noise_mode = job
    return fingerprint_part(Path(pages), Path(out), n, m, seed, window, noise_mode=noise_mode)


def fingerprint_pages(parts: list[Path], outdir: Path, n: int, m: int, seed: int, workers: int = 1,
                      done: Callable[[int], None] | None = None, window: int = 0,
                      noise_mode: str = "paper") -> dict[str, int]:
    """Fingerprint every part (in ``workers`` processes when more than one); one output
    part per input part, ``outdir/part-NNNNN.parquet``.  ``done(pages)`` after each batch
    (after each part with several workers)."""
    outdir.mkdir(parents=True, exist_ok=True)
    jobs = [(str(part), str(outdir / f"part-{i:05d}.parquet"), n, m, seed, window, noise_mode)
            for i, part in enumerate(parts)]
    counts: Counter[str] = Counter()
    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = pool.map(_fingerprint_job, jobs)
            for result in results:
                counts.update(result)
                if done:
                    done(result.get("pages", 0))
    else:
        for pages, out, *_ in jobs:
            counts.update(fingerprint_part(Path(pages), Path(out), n, m, seed, window, done=done,
                                           noise_mode=noise_mode))
    return dict(counts)


def read_fingerprints(table: pa.Table, m: int) -> npt.NDArray[np.uint64]:
    """The (rows, m) uint64 matrix of a fingerprints table."""
    column = table.column("fingerprint").combine_chunks()
    return np.asarray(column.flatten().to_numpy(zero_copy_only=False), np.uint64).reshape(-1, m)


def page_parts(pages: Path) -> list[Path]:
    """The Parquet parts of a page table folder (or the file itself), in order."""
    return sorted(pages.glob("*.parquet")) if pages.is_dir() else [pages]


def fingerprints_dataset(folder: Path, m: int) -> ds.Dataset:
    """The fingerprint parts of a folder (an empty table, not an error, when there are none)."""
    return ds.dataset(folder, format="parquet", schema=fingerprint_schema(m))


def fingerprint_pages_mapreduce(parts: list[Path], outdir: Path, work: Path, n: int, m: int, seed: int,
                                runner: str, runner_args: tuple[str, ...] = (), window: int = 0,
                                noise_mode: str = "paper") -> dict[str, int]:
    """The same fingerprint parts as :func:`fingerprint_pages`, computed by the map-only
    mrjob job ``mr_fingerprint`` on ``runner``: the noise goes out as ``doc_id<TAB>json``
    lines, the fingerprints come back by doc_id and are written beside the page columns."""
    from spamflow.mr import run_job
    from spamflow_hss.mr_fingerprint import MRFingerprint

    work.mkdir(parents=True, exist_ok=True)
    outdir.mkdir(parents=True, exist_ok=True)
    noise_lines = work / "noise.tsv"
    written = 0
    with open(noise_lines, "w", encoding="utf-8") as fh:
        for part in parts:
            for batch in pq.ParquetFile(part).iter_batches(batch_size=512, columns=["doc_id", "noise"]):
                for doc_id, noise in zip(batch.column("doc_id").to_pylist(), batch.column("noise").to_pylist()):
                    fh.write(f"{doc_id}\t{json.dumps(noise or '')}\n")
                    written += 1
    output = run_job(MRFingerprint, [noise_lines], work / "fingerprints.tsv", runner=runner,
                     args=["--n", str(n), "--m", str(m), "--seed", str(seed), "--window", str(window),
                           "--noise", noise_mode],
                     runner_args=runner_args)
    found: dict[int, tuple[int, bytes]] = {}
    with open(output, encoding="utf-8") as fh:
        for line in fh:
            key, count, hexed = line.rstrip("\n").split("\t")
            found[int(key)] = (int(count), bytes.fromhex(hexed))
    if len(found) != written:
        raise RuntimeError(f"{output}: the fingerprint job returned {len(found)} fingerprints for the {written} "
                           f"pages of {noise_lines} (duplicate doc_ids in the page table, or a failed task)")
    counts: Counter[str] = Counter()
    schema = fingerprint_schema(m)
    for i, part in enumerate(parts):
        table = pq.read_table(part, columns=[*PAGE_COLUMNS, "noise"])
        rows = [found[d] for d in table.column("doc_id").to_pylist()]
        vectors = np.frombuffer(b"".join(r[1] for r in rows), ">u8").astype(np.uint64).reshape(-1, m)
        ngrams = np.array([r[0] for r in rows], np.int64)
        counts["pages"] += len(rows)
        counts["short_pages"] += int(np.count_nonzero(ngrams == 0))
        counts["sparse_pages"] += int(np.count_nonzero((vectors == EMPTY).any(axis=1)))
        counts["noise_chars"] += int(pc.sum(pc.utf8_length(table.column("noise"))).as_py() or 0)
        columns = [table.column(name) for name in PAGE_COLUMNS]
        columns += [pa.array(ngrams), pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), m)]
        pq.write_table(pa.Table.from_arrays(columns, schema=schema), outdir / f"part-{i:05d}.parquet",
                       compression="zstd")
    return dict(counts)
