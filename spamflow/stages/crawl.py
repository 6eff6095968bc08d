"""Stage ``crawl``: crawl the configured snapshots into WARC files that ``ingest`` reads.

A crawl is resumable: it runs in ``<workdir>/stages/.crawl-<signature>.work/`` (not in the
stage's temporary directory, which is new for every attempt), so a run killed mid-crawl
and started again continues where it stopped.  When every snapshot is done its WARC files
are hard-linked into the stage directory and the work directory is removed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from spamflow.detector import DetectorParams, Stage, StageContext, StageResult


class CrawlParams(DetectorParams):
    crawls: tuple[dict[str, Any], ...]
    """The validated ``input.crawl`` blocks, one per snapshot (defaults filled in)."""
    seeds: tuple[tuple[str, ...], ...]
    """The seeds of each crawl, seed_file read, so a changed seed file makes a new crawl."""
    base_dir: str
    """Directory of the config file (filter files are relative to it)."""


def work_directory(outdir: Path) -> Path:
    """``.crawl-<sig>.work`` next to the stage's ``.crawl-<sig>.tmp-<pid>`` directory."""
    return outdir.parent / (outdir.name.split(".tmp-")[0] + ".work")


class CrawlStage(Stage):
    name = "crawl"
    version = "1"
    description = "Crawl the seeds politely (BUbiNG-style) into WARC/1.1 files, one folder per snapshot."
    Params = CrawlParams
    requires = ()

    def run(self, ctx: StageContext) -> StageResult:
        from spamflow.crawl.crawler import crawl
        from spamflow.crawl.settings import CrawlSettings

        params = ctx.params
        assert isinstance(params, CrawlParams)
        work = work_directory(ctx.outdir)
        counts: dict[str, int] = {}
        for block, seeds in zip(params.crawls, params.seeds):
            settings = CrawlSettings.model_validate({**block, "seeds": list(seeds), "seed_file": None})
            summary = crawl(settings, work / settings.snapshot, Path(params.base_dir), progress=ctx.settings.progress)
            warc_dir = ctx.outdir / "warc" / settings.snapshot
            warc_dir.mkdir(parents=True)
            for path in summary.warc_files:
                os.link(path, warc_dir / path.name)
            errors = ctx.outdir / "errors"
            errors.mkdir(exist_ok=True)
            shutil.copyfile(summary.errors, errors / f"{settings.snapshot}.jsonl")
            for key in ("pages", "requests", "body_bytes", "hosts", "ips", "discovered_urls", "pending_at_end",
                        "near_duplicates", "urls_over_host_cap", "urls_filtered"):
                counts[f"{settings.snapshot}_{key}"] = summary.counts.get(key, 0)
            counts[f"{settings.snapshot}_errors"] = sum(v for k, v in summary.counts.items()
                                                        if k.startswith("errors_"))
            counts[f"{settings.snapshot}_warc_files"] = len(summary.warc_files)
        shutil.rmtree(work, ignore_errors=True)
        return StageResult(outputs={"warc": "warc", "errors": "errors"}, counts=counts)
