"""The ``quilt`` stage: shingle each snapshot, run jobs (a), (b), (c), then attach URLs,
attribution and per-host counts."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from spamflow.detector import Detector, StageContext, StageResult
from spamflow.mr import run_job_compact, use_mapreduce
from spamflow.parse.html_text import absolute_url
from spamflow.per_host import HostFeature, PerHostTable
from spamflow_quilt.direct import page_quilts
from spamflow_quilt.mr_gram_df import MRGramDocumentFrequency
from spamflow_quilt.mr_patch_fraction import MRPatchFraction
from spamflow_quilt.mr_quilt_cover import MRQuiltCover
from spamflow_quilt.mr_quilt_snapshot import MRQuiltSnapshot
from spamflow_quilt.params import QuiltParams
from spamflow_quilt.shingle import write_shingles

HOST_SCHEMA = pa.schema([
    pa.field("snapshot", pa.string(), nullable=False),
    pa.field("host", pa.string(), nullable=False),
    pa.field("pages", pa.int64(), nullable=False),
    pa.field("quilted_pages", pa.int64(), nullable=False),
    pa.field("quilted_fraction", pa.float64(), nullable=False),
])


BUCKET_BYTES = 4 << 20
"""Shingle bytes per bucket: a reducer holds about this much of the corpus's grams at once."""

COVER_BUCKET_BYTES = 16 << 20
"""Bytes of job (b)'s output per bucket of job (c)."""

def combiner_pays(runner: str) -> bool:
    """Whether job (a)'s combiner is worth running: on a cluster (Hadoop, EMR, Spark), where
    it shrinks the bytes a map task sends over the network, and not on mrjob's inline and
    local runners, where the shuffle is a local sort and the combiner only re-reads, re-sorts
    and re-writes every map output byte of a task that flushed more than once.  Measured on
    a 5 x 10^5-page snapshot's 2.4 GB of shingles (three flushes a task): job (a) took 192 CPU
    s with the combiner and 140 s without, with the same reducer time and the same output
    (docs/quilt.md, job (a))."""
    return runner not in ("inline", "local")


def bucket_count(shingles: Path, bucket_bytes: int = BUCKET_BYTES) -> int:
    """Buckets for a job's input: a power of two, at least 8, ~``bucket_bytes`` of it each, so
    that records stay large (few of them) and a reducer's memory stays small at any corpus size."""
    wanted = max(shingles.stat().st_size // bucket_bytes, 8)
    return 1 << (int(wanted) - 1).bit_length()


def find_quilts(shingles: Path, work: Path, params: QuiltParams, runner: str,
                runner_args: tuple[str, ...] = (), *, buckets: int | None = None,
                flush_rows: int | None = None, combiner: bool | None = None,
                one_job: bool = True) -> list[tuple[int, dict]]:
    """Jobs (a), (b), (c) over one shingle file: [(doc_id, cover record)], by doc_id.

    ``one_job``: the three as the four steps of one job (:mod:`~spamflow_quilt.mr_quilt_snapshot`:
    one Spark application instead of three), which leaves only the covers in ``work``.
    Otherwise each job's output lands under ``work`` in a folder named by the parameters it depends
    on (``m50/``, ``m50/theta0.5/``, ``m50/theta0.5/c4-domain-phiNone/``) and is reused when
    it is already there, so a parameter sweep redoes only what a changed parameter touches.
    ``buckets`` and ``flush_rows`` batch the jobs' records and do not change the result;
    nor does ``combiner`` (job (a)'s combiner on or off; default: :func:`combiner_pays`).
    """
    def batching(bucket_bytes: int, job_input: Path) -> list[str]:
        """``--m`` and how a job batches records: its buckets (from its input's size) and flushes."""
        args = ["--m", str(params.m), "--buckets", str(buckets or bucket_count(job_input, bucket_bytes))]
        return args + (["--flush-rows", str(flush_rows)] if flush_rows else [])

    df_dir = work / f"m{params.m}"
    patchy_dir = df_dir / f"theta{params.theta!r}"
    cover_dir = patchy_dir / f"c{params.c}-{params.foreign}-phi{params.phi!r}"
    cover_dir.mkdir(parents=True, exist_ok=True)

    def job(job_class: type, inputs: list[Path], output: Path, args: list[str]) -> Path:
        if output.exists():
            return output
        # compact: on the local runner each step's files go once read, sort's runs are compressed
        # (docs/quilt.md, "Temporary disk")
        return run_job_compact(job_class, inputs, output, runner=runner, args=args, runner_args=runner_args)

    m = batching(BUCKET_BYTES, shingles)  # job (b) keeps job (a)'s page buckets
    combine = combiner_pays(runner) if combiner is None else combiner
    cover_options = ["--c", str(params.c), "--foreign", params.foreign]
    if params.phi is not None:
        cover_options += ["--phi", repr(params.phi)]
    if one_job:
        # job (c)'s buckets from the shingles' size, which bounds job (b)'s output (not written here)
        cover_buckets = buckets or bucket_count(shingles, COVER_BUCKET_BYTES)
        covers = job(MRQuiltSnapshot, [shingles], cover_dir / "covers.tsv",
                     [*m, *([] if combine else ["--no-combiner"]), "--theta", repr(params.theta),
                      "--cover-buckets", str(cover_buckets), *cover_options])
        return _read_covers(covers)
    patch_grams = job(MRGramDocumentFrequency, [shingles], df_dir / "patch_grams.tsv",
                      [*m, *([] if combine else ["--no-combiner"])])
    patchy = job(MRPatchFraction, [patch_grams], patchy_dir / "patchy_pages.tsv",
                 [*m, "--theta", repr(params.theta)])
    # job (c) shuffles B x B records (each gram bucket's triples to each page bucket): its own,
    # smaller B keeps them large
    covers = job(MRQuiltCover, [patchy], cover_dir / "covers.tsv", [*batching(COVER_BUCKET_BYTES, patchy),
                                                                     *cover_options])
    return _read_covers(covers)


def _read_covers(covers: Path) -> list[tuple[int, dict]]:
    found = []
    with open(covers, encoding="utf-8") as fh:
        for line in fh:
            key, value = line.split("\t", 1)
            found.append((json.loads(key), json.loads(value)))
    return sorted(found)


def shingled(pages: Path, work: Path, k: int, snapshot: str, workers: int = 1) -> tuple[Path, dict[str, int]]:
    """The snapshot's shingle file for k under ``work/<snapshot>/k<k>/`` (reused if there),
    written by ``workers`` processes."""
    folder = work / snapshot / f"k{k}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "shingles.tsv"
    counts_path = folder / "shingle_counts.json"
    if path.exists() and counts_path.exists():
        return path, json.loads(counts_path.read_text())
    tmp = folder / f".shingles.tsv.tmp-{os.getpid()}"
    counts = write_shingles(pages, tmp, k, snapshot=snapshot, workers=workers)
    tmp.replace(path)
    counts_path.write_text(json.dumps(counts))
    return path, counts


class QuiltDetector(Detector):
    name = "quilt"
    version = "4"  # 2: job (c) collapses copies (rows gained the gram set); 3: a shingle line per gram set;
    # 4: jobs (a)-(c) of a snapshot are one job (mr_quilt_snapshot: one Spark application; the same quilts),
    #    so work/ holds the covers only, no patch_grams.tsv or patchy_pages.tsv
    description = ("Najork's (k, m, c, theta)-quilted pages and their source pages, as mrjob MapReduce jobs or "
                   "their arithmetic in this process.")
    Params = QuiltParams
    host_tables = (PerHostTable("hosts", (HostFeature("pages", "pages of the host"),
                                          HostFeature("quilted_pages", "quilted pages", evidence=True),
                                          HostFeature("quilted_fraction", "quilted_pages / pages"))),)
    requires = ("parse",)
    uses_mapreduce = True

    def run(self, ctx: StageContext) -> StageResult:
        params = ctx.params
        assert isinstance(params, QuiltParams)
        pages_path = ctx.inputs["parse"]["pages"]
        pages = ds.dataset(pages_path, format="parquet")
        per_host = pages.to_table(columns=["snapshot", "host"]).group_by(["snapshot", "host"]).aggregate(
            [("host", "count")])
        snapshots = sorted(set(per_host["snapshot"].to_pylist()))
        counts: Counter[str] = Counter()
        quilts: list[dict] = []
        for snapshot in snapshots:
            if use_mapreduce(params.engine, ctx.settings):
                shingles, shingle_counts = shingled(pages_path, ctx.outdir / "work", params.k, snapshot,
                                                    ctx.settings.workers)
                found = find_quilts(shingles, shingles.parent, params, ctx.settings.runner, ctx.settings.runner_args)
                counts["engine_mapreduce_snapshots"] += 1
            else:  # no shingle file: the grams go straight to the engine's bucket files
                found, shingle_counts = page_quilts(pages_path, snapshot, params,
                                                    ctx.outdir / "work" / snapshot / f"k{params.k}",
                                                    workers=ctx.settings.workers)
            counts.update(shingle_counts)
            for doc_id, cover in found:
                quilts.append({"doc_id": doc_id, "snapshot": snapshot, **cover})
        self._attach_pages(pages, quilts)
        with open(ctx.outdir / "quilts.jsonl", "w", encoding="utf-8") as fh:
            for quilt in quilts:
                fh.write(json.dumps(quilt) + "\n")
        hosts = _host_summary(per_host, quilts)
        pq.write_table(hosts, ctx.outdir / "hosts.parquet")
        counts["quilted_pages"] = len(quilts)
        counts["snapshots"] = len(snapshots)
        return StageResult(outputs={"quilts": "quilts.jsonl", "hosts": "hosts.parquet", "work": "work"},
                           counts=dict(counts))

    @staticmethod
    def _attach_pages(pages: ds.Dataset, quilts: list[dict]) -> None:
        """Add URLs, host and the attribution signal (the share of sources the quilt links to)."""
        needed = {q["doc_id"] for q in quilts} | {s for q in quilts for s, _ in q["sources"]}
        rows = pages.to_table(columns=["doc_id", "url", "host", "links"],
                              filter=pc.field("doc_id").isin(pa.array(sorted(needed), pa.int64())))
        info = {r["doc_id"]: r for r in rows.to_pylist()}
        for quilt in quilts:
            page = info[quilt["doc_id"]]
            linked = {link["url"] for link in page["links"] or []}  # normalised by parse, as below
            sources = [{"doc_id": s, "url": info[s]["url"], "grams": n} for s, n in quilt.pop("sources")]
            n_patch, n_grams = quilt.pop("n_patch_grams"), quilt.pop("n_grams")
            quilt.update(url=page["url"], host=page["host"], patchfrac=n_patch / n_grams, n_grams=n_grams,
                         n_patch_grams=n_patch, sources=sources,
                         linked_source_fraction=sum(normal_url(s["url"]) in linked for s in sources) / len(sources))


def normal_url(url: str) -> str:
    """A page's WARC-Target-URI normalised as parse normalises link URLs."""
    return absolute_url(url, url) or url


def _host_summary(per_host: pa.Table, quilts: list[dict]) -> pa.Table:
    """Pages and quilted pages per (snapshot, host), for the classifier."""
    pages = dict(zip(zip(per_host["snapshot"].to_pylist(), per_host["host"].to_pylist()),
                     per_host["host_count"].to_pylist()))
    quilted = Counter((q["snapshot"], q["host"]) for q in quilts)
    rows = [{"snapshot": s, "host": h, "pages": n, "quilted_pages": quilted[(s, h)],
             "quilted_fraction": quilted[(s, h)] / n} for (s, h), n in sorted(pages.items())]
    return pa.Table.from_pylist(rows, schema=HOST_SCHEMA)
