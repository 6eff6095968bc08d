"""The ``quilt`` stage: shingle each snapshot, run jobs (a), (b), (c), then attach URLs,
attribution and per-host counts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from spamflow.detector import Detector, StageContext, StageResult
from spamflow.mr import run_job
from spamflow_quilt.mr_gram_df import MRGramDocumentFrequency
from spamflow_quilt.mr_patch_fraction import MRPatchFraction
from spamflow_quilt.mr_quilt_cover import MRQuiltCover
from spamflow_quilt.params import QuiltParams
from spamflow_quilt.shingle import write_shingles

HOST_SCHEMA = pa.schema([
    pa.field("snapshot", pa.string(), nullable=False),
    pa.field("host", pa.string(), nullable=False),
    pa.field("pages", pa.int64(), nullable=False),
    pa.field("quilted_pages", pa.int64(), nullable=False),
    pa.field("quilted_fraction", pa.float64(), nullable=False),
])


def find_quilts(shingles: Path, work: Path, params: QuiltParams, runner: str,
                runner_args: tuple[str, ...] = ()) -> list[tuple[int, dict]]:
    """Jobs (a), (b), (c) over one shingle file: [(doc_id, cover record)], by doc_id."""
    m = ["--m", str(params.m)]
    patch_grams = run_job(MRGramDocumentFrequency, [shingles], work / "patch_grams.tsv", runner=runner,
                          args=m, runner_args=runner_args)
    patchy = run_job(MRPatchFraction, [shingles, patch_grams], work / "patchy_pages.tsv", runner=runner,
                     args=[*m, "--theta", repr(params.theta)], runner_args=runner_args)
    cover_args = [*m, "--c", str(params.c), "--foreign", params.foreign]
    if params.phi is not None:
        cover_args += ["--phi", repr(params.phi)]
    covers = run_job(MRQuiltCover, [shingles, patch_grams, patchy], work / "covers.tsv", runner=runner,
                     args=cover_args, runner_args=runner_args)
    found = []
    with open(covers, encoding="utf-8") as fh:
        for line in fh:
            key, value = line.split("\t", 1)
            found.append((json.loads(key), json.loads(value)))
    return sorted(found)


class QuiltDetector(Detector):
    name = "quilt"
    version = "1"
    description = "Najork's (k, m, c, theta)-quilted pages and their source pages, as mrjob MapReduce jobs."
    Params = QuiltParams
    requires = ("parse",)
    uses_mapreduce = True

    def run(self, ctx: StageContext) -> StageResult:
        params = ctx.params
        assert isinstance(params, QuiltParams)
        pages_path = ctx.inputs["parse"]["pages"]
        pages = ds.dataset(pages_path, format="parquet")
        meta = pages.to_table(columns=["doc_id", "snapshot", "host", "url"])
        snapshots = sorted(set(meta["snapshot"].to_pylist()))
        counts: Counter[str] = Counter()
        quilts: list[dict] = []
        for snapshot in snapshots:
            work = ctx.outdir / "work" / snapshot
            work.mkdir(parents=True)
            shingles = work / "shingles.jsonl"
            counts.update(write_shingles(pages_path, shingles, params.k, snapshot=snapshot))
            for doc_id, cover in find_quilts(shingles, work, params, ctx.settings.runner, ctx.settings.runner_args):
                quilts.append({"doc_id": doc_id, "snapshot": snapshot, **cover})
        self._attach_pages(pages, quilts)
        with open(ctx.outdir / "quilts.jsonl", "w", encoding="utf-8") as fh:
            for quilt in quilts:
                fh.write(json.dumps(quilt) + "\n")
        hosts = _host_summary(meta, quilts)
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
            linked = {link["url"] for link in page["links"] or []}
            sources = [{"doc_id": s, "url": info[s]["url"], "grams": n} for s, n in quilt.pop("sources")]
            n_patch, n_grams = quilt.pop("n_patch_grams"), quilt.pop("n_grams")
            quilt.update(url=page["url"], host=page["host"], patchfrac=n_patch / n_grams, n_grams=n_grams,
                         n_patch_grams=n_patch, sources=sources,
                         linked_source_fraction=sum(s["url"] in linked for s in sources) / len(sources))


def _host_summary(meta: pa.Table, quilts: list[dict]) -> pa.Table:
    pages = Counter(zip(meta["snapshot"].to_pylist(), meta["host"].to_pylist()))
    quilted = Counter((q["snapshot"], q["host"]) for q in quilts)
    rows = [{"snapshot": s, "host": h, "pages": n, "quilted_pages": quilted[(s, h)],
             "quilted_fraction": quilted[(s, h)] / n} for (s, h), n in sorted(pages.items())]
    return pa.Table.from_pylist(rows, schema=HOST_SCHEMA)
