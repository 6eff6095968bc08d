"""Stage ``parse``: every HTML response of the input WARC files becomes a row of the
``pages`` Parquet dataset (one part file per WARC file), in parallel over files: in this
process (``workers`` processes) or as the map-only mrjob job ``spamflow.parse.mr_parse``
(``parse.engine``).  Revisits are then resolved here, across files, either way.

Under a remote workdir the job's tasks upload their parts to a staging prefix beside the
stage's remote folder (``_staging_url``), never to this machine's disk, so they may run on
any cluster; the stage then takes them into its local folder and is published as every
stage is (``stage.json`` last)."""

from __future__ import annotations

import dataclasses
import json
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import ClassVar

from spamflow import storage
from spamflow.detector import DetectorParams, RunSettings, Stage, StageContext, StageResult
from spamflow.errors import BadInputError, SpamflowError
from spamflow.inputs import RemoteInputError, local_copy
from spamflow.mr import Engine, run_job, use_mapreduce
from spamflow.parse.file_job import FileJob, parse_location, part_name, read_result_line, run_file_job
from spamflow.parse.html_depth import DEFAULT_MAX_DEPTH
from spamflow.parse.mr_parse import MRParse
from spamflow.parse.revisits import Revisit, non_html_originals, resolve_revisits
from spamflow.parse.warc_file import FileParse
from spamflow.progress import progress_bar
from spamflow.stages.ingest import read_warc_list

__all__ = ["ParseParams", "ParseStage", "parse_location"]  # parse_location: its old home

LISTING_FILES = 256
"""At most this many input files for the MapReduce job (``_write_listing``)."""


class ParseParams(DetectorParams):
    max_bytes: int = 5_000_000
    max_depth: int = DEFAULT_MAX_DEPTH
    engine: Engine = "auto"
    """``auto``: the MapReduce job when the runner is a cluster one whose tasks can write the
    stage's output (Spark ``local[N]``, or any cluster under a remote workdir), else this
    process (docs/parse.md)."""
    execution_keys: ClassVar[frozenset[str]] = frozenset({"engine"})


class ParseStage(Stage):
    name = "parse"
    version = "5"  # 2: HTML noise keeps non-ASCII non-alphanumerics (HSS section 3.1); 3: revisits are pages;
    # 4: trec_id and payload_digest columns, ClueWeb09 dates repaired, revisits by payload digest, ARC and
    # one-stream gzip input, br/zstd bodies, wrong Content-Length records cut at their real end, undeclared
    # Western pages windows-1252; 5: pages nested deeper than max_depth cut there (too_deep)
    description = "WARC HTML responses to a Parquet page table (words, links, hosts, domains, IPs)."
    Params = ParseParams
    requires = ("ingest",)

    def run(self, ctx: StageContext) -> StageResult:
        params = ctx.params
        assert isinstance(params, ParseParams)
        warcs = read_warc_list(ctx.inputs["ingest"]["warcs"])
        pages_dir = ctx.outdir / "pages"
        pages_dir.mkdir()
        jobs = [FileJob(str(w["path"]), str(w["snapshot"]), i, str(pages_dir), params.max_bytes,
                        ctx.settings.strict, params.max_depth) for i, w in enumerate(warcs)]
        sizes = [int(w["bytes"]) for w in warcs]  # type: ignore[call-overload]
        staging = _staging_url(ctx.outdir)
        if _use_job(params.engine, ctx.settings, pages_dir, remote=staging is not None):
            results = _parse_with_job(jobs, ctx.settings, pages_dir, staging)
        else:
            results = _parse_here(jobs, sizes, ctx.settings)
        counts: Counter[str] = Counter()
        bad: list[dict[str, object]] = []
        revisits: list[Revisit] = []
        for result in results:
            counts.update(result.counts)
            bad.extend(result.bad_records)
            revisits.extend(result.revisits)
        if revisits:
            bad.extend(_revisit_pages(revisits, sorted(pages_dir.glob("part-*.parquet")),
                                      pages_dir / "part-revisits.parquet",
                                      _local_files([job.location for job in jobs], pages_dir / "spool"),
                                      counts, ctx.settings.strict))
        if (pages_dir / "spool").exists():
            (pages_dir / "spool").rmdir()
        with open(ctx.outdir / "bad_records.jsonl", "w", encoding="utf-8") as fh:
            for entry in bad:
                fh.write(json.dumps(entry) + "\n")
        counts["files"] = len(jobs)
        return StageResult(outputs={"pages": "pages", "bad_records": "bad_records.jsonl"},
                           counts=dict(counts), bad_records=bad)


def _parse_here(jobs: list[FileJob], sizes: list[int], settings: RunSettings) -> list[FileParse]:
    """Each file in this process, or in ``workers`` processes; the results in input order."""
    results: list[FileParse] = []
    bar = progress_bar(total=sum(sizes), unit="B", unit_scale=True, desc="parse", setting=settings.progress)
    with bar:
        if settings.workers > 1 and len(jobs) > 1:
            with ProcessPoolExecutor(max_workers=settings.workers) as pool:
                for size, result in zip(sizes, pool.map(run_file_job, jobs)):
                    results.append(result)
                    bar.update(size)
        else:
            for job, size in zip(jobs, sizes):
                done = bar.n

                def progress(offset: int, base: int = done) -> None:
                    bar.update(base + offset - bar.n)

                results.append(run_file_job(job, progress=progress))
                bar.update(done + size - bar.n)
    return results


def _tasks_share_this_disk(settings: RunSettings) -> bool:
    """The runner's tasks run on this machine (inline, local, Spark ``local[N]``), so they can
    write the stage's local folder; Hadoop's, EMR's and a Spark cluster's cannot."""
    if settings.runner in ("hadoop", "emr"):
        return False
    if settings.runner == "spark":
        args = list(settings.runner_args)
        master = args[args.index("--spark-master") + 1] if "--spark-master" in args[:-1] else "local"
        return master.startswith("local")
    return True


def _staging_url(outdir: Path) -> str | None:
    """Under a remote workdir, where the job's tasks put the parts: a prefix beside the stage's
    remote folder named after this attempt's local one (``.parse-<signature>.tmp-<pid>``) and
    a random suffix, so it is never the stage's own folder nor another attempt's; None under a
    local workdir."""
    url = storage.published_url(outdir)
    return None if url is None else storage.join(f"{url}-{uuid.uuid4().hex[:12]}", "pages")


def _use_job(engine: Engine, settings: RunSettings, pages_dir: Path, *, remote: bool = False) -> bool:
    """Whether to run the MapReduce job.  ``auto`` stays in this process when the job's tasks
    could write neither the local page table nor a remote workdir; ``mapreduce`` then fails,
    saying why."""
    if not use_mapreduce(engine, settings):
        return False
    if remote or _tasks_share_this_disk(settings):
        return True
    if engine == "auto":
        return False
    raise SpamflowError(f"parse.engine: mapreduce on the {settings.runner!r} runner: its tasks run on other "
                        f"machines and cannot write the page table into the local folder {pages_dir}; the "
                        "stage's output must be on storage they share: give workdir as a URL (s3://, gs://, "
                        "hdfs://), or use parse.engine auto or memory, or runner local, or spark with a "
                        "local[N] master")


def _parse_with_job(jobs: list[FileJob], settings: RunSettings, pages_dir: Path,
                    staging: str | None = None) -> list[FileParse]:
    """Each file by a map task of ``MRParse``; the results in input order, as ``_parse_here``
    gives them.  Under ``--strict`` the first file (in input order) that stopped at a bad
    record raises its error, as the in-process loop does.  With ``staging`` (a remote
    workdir) the tasks upload their parts there; they are then taken into ``pages_dir`` and
    the staging prefix deleted, whatever happened."""
    if not jobs:
        return []
    if staging is not None:
        jobs = [dataclasses.replace(job, out_dir=staging) for job in jobs]
    try:
        with tempfile.TemporaryDirectory(prefix="spamflow-parse-") as tmp:
            out = run_job(MRParse, _write_listing(jobs, Path(tmp)), Path(tmp) / "results.jsonl",
                          runner=settings.runner, runner_args=settings.runner_args)
            results = _results_in_input_order(jobs, out.read_text(encoding="utf-8").splitlines())
        if staging is not None:
            _take_staged_parts(jobs, results, staging, pages_dir)
    finally:
        if staging is not None:
            storage.remove_tree(staging.rsplit("/", 1)[0])
    return results


def _results_in_input_order(jobs: list[FileJob], lines: list[str]) -> list[FileParse]:
    """The job's result lines as ``FileParse`` s in input order; the first strict error (in
    input order) raised, a file without a result an error."""
    results: dict[int, FileParse] = {}
    errors: dict[int, str] = {}
    for line in lines:
        part, outcome = read_result_line(line)
        if isinstance(outcome, str):
            errors[part] = outcome
        else:
            results[part] = outcome
    if errors:
        raise BadInputError(errors[min(errors)])
    missing = [job.location for job in jobs if job.part not in results]
    if missing:
        raise SpamflowError(f"MapReduce job MRParse returned no result for {len(missing)} of {len(jobs)} "
                            f"input files, the first {missing[0]}")
    return [results[job.part] for job in jobs]


def _take_staged_parts(jobs: list[FileJob], results: list[FileParse], staging: str, pages_dir: Path) -> None:
    """Download the parts the tasks uploaded to ``staging`` into ``pages_dir``; every file
    that was parsed (all but failed downloads) must have left its part there."""
    got = set(storage.download_folder(staging, pages_dir))
    lost = [job for job, result in zip(jobs, results)
            if not result.counts.get("bad_download") and part_name(job.part) not in got]
    if lost:
        raise SpamflowError(f"MapReduce job MRParse reported {lost[0].location} parsed but its part "
                            f"{lost[0].out_path} is not there ({len(lost)} of {len(jobs)} parts missing)")


def _write_listing(jobs: list[FileJob], folder: Path) -> list[Path]:
    """The job's input: one JSON line per WARC file, spread over up to ``LISTING_FILES``
    files, because Spark splits a small text file into only two partitions (two tasks) but
    gives every input file at least one; Hadoop reads each line as its own task anyway."""
    per_file = -(-len(jobs) // LISTING_FILES)  # ceiling
    paths = []
    for k, start in enumerate(range(0, len(jobs), per_file)):
        path = folder / f"files-{k:05d}.jsonl"
        path.write_text("".join(job.to_json() + "\n" for job in jobs[start:start + per_file]), encoding="utf-8")
        paths.append(path)
    return paths


def _local_files(locations: list[str], spool_dir: Path) -> Iterator[Path]:
    """Each input as a local file, a remote one spooled while it is read; one that cannot be
    downloaded is skipped (it was reported as a ``download`` bad record when parsed)."""
    for location in locations:
        try:
            with local_copy(location, spool_dir) as path:
                yield path
        except RemoteInputError:
            continue


def _revisit_pages(revisits: list[Revisit], parts: list[Path], out: Path, files: Iterable[str | Path],
                   counts: Counter[str], strict: bool) -> list[dict[str, object]]:
    """Add the revisits whose original is a page to the table (``out``); count the rest and
    report those whose original is not in the input as ``unresolved_revisit``."""
    resolution = resolve_revisits(revisits, parts, out)
    counts["pages"] += resolution.pages
    counts["revisit_pages"] = resolution.pages
    left = [r for r, _ in resolution.unresolved]
    non_html = non_html_originals(left, files) if left else set()
    counts["skipped_revisit_non_html"] += len(non_html)
    bad: list[dict[str, object]] = []
    for i, (revisit, reason) in enumerate(resolution.unresolved):
        if i in non_html:
            continue
        detail = f"{revisit.where()}: {reason} (refers to {revisit.refers()})"
        if strict:
            raise BadInputError(f"{revisit.file} at offset {revisit.offset}: unresolved_revisit: {detail} "
                                "(drop --strict to count and go on)")
        counts["bad_unresolved_revisit"] += 1
        bad.append({"file": revisit.file, "offset": revisit.offset, "kind": "unresolved_revisit", "reason": detail})
    return bad
