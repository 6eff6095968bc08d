"""Fingerprinting as a streaming map over the page table: each Parquet part of the pages
gives a Parquet part of fingerprints, in batches, so memory does not grow with the crawl."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from spamflow_hss.fingerprint import EMPTY, fingerprint_hashes, orderings
from spamflow_hss.ngram_hash import ngram_hashes

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


def fingerprint_part(pages: Path, out: Path, n: int, m: int, seed: int, batch_size: int = 512) -> dict[str, int]:
    """Fingerprint every page of one Parquet part of the page table into ``out``.

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
                hashes = ngram_hashes(noise or "", n)
                ngrams[row] = len(hashes)
                vectors[row] = fingerprint_hashes(hashes, order)
                counts["noise_chars"] += len(noise or "")
            empty = vectors == EMPTY
            counts["pages"] += len(noises)
            counts["short_pages"] += int(np.count_nonzero(ngrams == 0))
            counts["sparse_pages"] += int(np.count_nonzero(empty.any(axis=1)))
            columns = [batch.column(name) for name in PAGE_COLUMNS]
            columns += [pa.array(ngrams), pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), m)]
            writer.write_table(pa.Table.from_arrays(columns, schema=schema))
    return dict(counts)


def _fingerprint_job(job: tuple[str, str, int, int, int]) -> dict[str, int]:
    pages, out, n, m, seed = job
    return fingerprint_part(Path(pages), Path(out), n, m, seed)


def fingerprint_pages(parts: list[Path], outdir: Path, n: int, m: int, seed: int, workers: int = 1,
                      done: Callable[[int], None] | None = None) -> dict[str, int]:
    """Fingerprint every part (in ``workers`` processes when more than one); one output
    part per input part, ``outdir/part-NNNNN.parquet``.  ``done(pages)`` after each part."""
    outdir.mkdir(parents=True, exist_ok=True)
    jobs = [(str(part), str(outdir / f"part-{i:05d}.parquet"), n, m, seed) for i, part in enumerate(parts)]
    counts: Counter[str] = Counter()
    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = pool.map(_fingerprint_job, jobs)
            for result in results:
                counts.update(result)
                if done:
                    done(result.get("pages", 0))
    else:
        for job in jobs:
            result = _fingerprint_job(job)
            counts.update(result)
            if done:
                done(result.get("pages", 0))
    return dict(counts)


def read_fingerprints(table: pa.Table, m: int) -> npt.NDArray[np.uint64]:
    """The (rows, m) uint64 matrix of a fingerprints table."""
    column = table.column("fingerprint").combine_chunks()
    return np.asarray(column.flatten().to_numpy(zero_copy_only=False), np.uint64).reshape(-1, m)


def page_parts(pages: Path) -> list[Path]:
    """The Parquet parts of a page table folder (or the file itself), in order."""
    return sorted(pages.glob("*.parquet")) if pages.is_dir() else [pages]


def fingerprints_dataset(folder: Path) -> ds.Dataset:
    return ds.dataset(folder, format="parquet")
