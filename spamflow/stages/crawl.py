"""Stage ``crawl``: crawl the configured snapshots into WARC files that ``ingest`` reads.

A crawl is resumable: it runs in ``<workdir>/stages/.crawl-<signature>.work/`` (not in the
stage's temporary directory, which is new for every attempt), so a run killed mid-crawl
and started again continues where it stopped.  When every snapshot is done its WARC files
are hard-linked into the stage directory and the work directory is removed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from spamflow.detector import DetectorParams, Stage, StageContext, StageResult

if TYPE_CHECKING:
    from spamflow.crawl.loopback import LoopbackWeb
    from spamflow.crawl.settings import CrawlSettings


class CrawlParams(DetectorParams):
    crawls: tuple[dict[str, Any], ...] = ()
    """The validated ``input.crawl`` blocks, one per snapshot (defaults filled in)."""
    seeds: tuple[tuple[str, ...], ...] = ()
    """The seeds of each crawl, seed_file read, so a changed seed file makes a new crawl."""
    base_dir: str = ""
    """Directory of the config file (filter files are relative to it)."""
    from_demo: bool = False
    """Serve the ``demo`` stage's web on loopback (one address per simulated IP) and crawl each
    snapshot from every host's home page, with ``demo`` as the settings of every crawl."""
    demo: dict[str, Any] = {}
    """The settings of the demo crawls (``DEMO_CRAWL``), so changing them makes a new crawl."""


# The demo crawl: polite but quick (the demo web is local), every host's home page a seed.
DEMO_CRAWL: dict[str, Any] = {"scope": "any", "host_delay": 0.02, "ip_delay": 0.005, "concurrency": 16,
                              "max_depth": 10, "max_pages": 5000}


def work_directory(outdir: Path) -> Path:
    """``.crawl-<sig>.work`` next to the stage's ``.crawl-<sig>.tmp-<pid>`` directory."""
    return outdir.parent / (outdir.name.split(".tmp-")[0] + ".work")


class CrawlStage(Stage):
    name = "crawl"
    version = "1"
    description = "Crawl the seeds politely (BUbiNG-style) into WARC/1.1 files, one folder per snapshot."
    Params = CrawlParams
    requires = ()

    @classmethod
    def input_files(cls, params: BaseModel) -> dict[str, Path]:
        """Host lists named in filters (``ForbiddenHost(spam.txt)``): an edited list is a new crawl.
        Seed files need no entry: their seeds are read into ``seeds``.  A ``steer`` run's
        run.json and the evidence tables it reads, too: new scores are a new crawl."""
        from spamflow.crawl.filters import filter_files
        from spamflow.crawl.steer import SteerSettings, steer_files

        assert isinstance(params, CrawlParams)
        files: dict[str, Path] = {}
        for block in params.crawls:
            if block.get("filter"):
                where = f"input.crawl ({block['snapshot']}).filter"
                for i, path in enumerate(filter_files(block["filter"], Path(params.base_dir), where=where)):
                    files[f"{block['snapshot']}.filter.{i}"] = path
            if block.get("steer"):
                where = f"input.crawl ({block['snapshot']}).steer"
                steer = SteerSettings.model_validate(block["steer"])
                for key, path in steer_files(steer, Path(params.base_dir), where).items():
                    files[f"{block['snapshot']}.steer.{key}"] = path
        return files

    def run(self, ctx: StageContext) -> StageResult:
        from spamflow.crawl.crawler import crawl
        from spamflow.crawl.steer import STEER_COUNTS

        params = ctx.params
        assert isinstance(params, CrawlParams)
        work = work_directory(ctx.outdir)
        counts: dict[str, int] = {}
        outputs = {"warc": "warc", "errors": "errors"}
        for settings, web in self._crawls(ctx):
            if web is not None:
                with web:
                    settings = settings.model_copy(update={"resolve": web.pins})
                    summary = crawl(settings, work / settings.snapshot, Path(params.base_dir),
                                    progress=ctx.settings.progress)
            else:
                summary = crawl(settings, work / settings.snapshot, Path(params.base_dir),
                                progress=ctx.settings.progress)
            warc_dir = ctx.outdir / "warc" / settings.snapshot
            warc_dir.mkdir(parents=True)
            for path in summary.warc_files:
                try:
                    os.link(path, warc_dir / path.name)
                except OSError:  # a filesystem without hard links
                    shutil.copy2(path, warc_dir / path.name)
            errors = ctx.outdir / "errors"
            errors.mkdir(exist_ok=True)
            shutil.copyfile(summary.errors, errors / f"{settings.snapshot}.jsonl")
            if summary.steer is not None:
                (ctx.outdir / "steer").mkdir(exist_ok=True)
                shutil.copyfile(summary.steer, ctx.outdir / "steer" / f"{settings.snapshot}.jsonl")
                outputs["steer"] = "steer"
                for key in STEER_COUNTS:
                    counts[f"{settings.snapshot}_{key}"] = summary.counts.get(key, 0)
            for key in ("pages", "requests", "body_bytes", "hosts", "ips", "discovered_urls", "pending_at_end",
                        "near_duplicates", "urls_over_host_cap", "urls_filtered"):
                counts[f"{settings.snapshot}_{key}"] = summary.counts.get(key, 0)
            counts[f"{settings.snapshot}_errors"] = sum(v for k, v in summary.counts.items()
                                                        if k.startswith("errors_"))
            counts[f"{settings.snapshot}_warc_files"] = len(summary.warc_files)
        shutil.rmtree(work, ignore_errors=True)
        return StageResult(outputs=outputs, counts=counts)

    @staticmethod
    def _crawls(ctx: StageContext) -> Iterator[tuple[CrawlSettings, LoopbackWeb | None]]:
        """The crawls to run, each with the loopback web to serve during it (demo only)."""
        from spamflow.crawl.settings import CrawlSettings

        params = ctx.params
        assert isinstance(params, CrawlParams)
        if not params.from_demo:
            for block, seeds in zip(params.crawls, params.seeds):
                yield CrawlSettings.model_validate({**block, "seeds": list(seeds), "seed_file": None}), None
            return
        yield from demo_crawls(Path(ctx.inputs["demo"]["warc"]), params.demo)


def demo_crawls(warc_dir: Path, settings: dict[str, Any]) -> Iterator[tuple[CrawlSettings, LoopbackWeb]]:
    """Each snapshot folder of the demo's generated WARCs (in name order) as a crawl of
    ``DEMO_CRAWL`` updated by ``settings``, seeded with every host's home page, with the
    loopback web that serves it (revisits refer to the earlier snapshots' records)."""
    from spamflow.crawl.loopback import LoopbackWeb
    from spamflow.crawl.replay import WarcReplay
    from spamflow.crawl.settings import CrawlSettings

    earlier: list[Path] = []
    for snapshot_dir in sorted(p for p in warc_dir.iterdir() if p.is_dir()):
        files = sorted(snapshot_dir.glob("*.warc.gz"))
        replay = WarcReplay(files, earlier)
        earlier += files
        crawl = CrawlSettings.model_validate({**DEMO_CRAWL, **settings, "snapshot": snapshot_dir.name,
                                              "seeds": replay.home_pages()})
        yield crawl, LoopbackWeb(replay, replay.hosts)
