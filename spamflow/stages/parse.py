"""Stage ``parse``: every HTML response of the input WARC files becomes a row of the
``pages`` Parquet dataset (one part file per WARC file), in parallel over files."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from spamflow.detector import DetectorParams, Stage, StageContext, StageResult
from spamflow.errors import BadInputError
from spamflow.inputs import RemoteInputError, local_copy
from spamflow.parse.revisits import Revisit, non_html_originals, resolve_revisits
from spamflow.parse.warc_file import FileParse, parse_warc_file
from spamflow.progress import progress_bar
from spamflow.stages.ingest import read_warc_list


class ParseParams(DetectorParams):
    max_bytes: int = 5_000_000


def _parse_one(args: tuple[str, str, str, int, bool]) -> FileParse:
    path, snapshot, out, max_bytes, strict = args
    return parse_location(path, snapshot, out, max_bytes=max_bytes, strict=strict)


def parse_location(location: str, snapshot: str, out: str, *, max_bytes: int, strict: bool,
                   progress: Callable[[int], None] | None = None) -> FileParse:
    """``parse_warc_file`` of a local path, or of a remote file downloaded to a spool file
    beside ``out`` (deleted after); a download that fails is a counted bad input."""
    try:
        with local_copy(location, Path(out).parent / "spool") as path:
            return parse_warc_file(path, snapshot, out, max_bytes=max_bytes, strict=strict,
                                   progress=progress, name=location)
    except RemoteInputError as exc:
        reason = f"cannot download: {exc}"
        if strict:
            raise BadInputError(f"{location} at offset 0: download: {reason} (drop --strict to count and go on)") \
                from None
        result = FileParse(location)
        result.counts["bad_download"] += 1
        result.bad_records.append({"file": location, "offset": 0, "kind": "download", "reason": reason})
        return result


class ParseStage(Stage):
    name = "parse"
    version = "4"  # 2: HTML noise keeps non-ASCII non-alphanumerics (HSS section 3.1); 3: revisits are pages;
    # 4: trec_id and payload_digest columns, ClueWeb09 dates repaired, revisits by payload digest, ARC and
    # one-stream gzip input, br/zstd bodies, wrong Content-Length records cut at their real end, undeclared
    # Western pages windows-1252
    description = "WARC HTML responses to a Parquet page table (words, links, hosts, domains, IPs)."
    Params = ParseParams
    requires = ("ingest",)

    def run(self, ctx: StageContext) -> StageResult:
        params = ctx.params
        assert isinstance(params, ParseParams)
        warcs = read_warc_list(ctx.inputs["ingest"]["warcs"])
        pages_dir = ctx.outdir / "pages"
        pages_dir.mkdir()
        jobs = [(str(w["path"]), str(w["snapshot"]), str(pages_dir / f"part-{i:05d}.parquet"),
                 params.max_bytes, ctx.settings.strict) for i, w in enumerate(warcs)]
        sizes = [int(w["bytes"]) for w in warcs]  # type: ignore[call-overload]
        total_bytes = sum(sizes)
        results: list[FileParse] = []
        bar = progress_bar(total=total_bytes, unit="B", unit_scale=True, desc="parse",
                           setting=ctx.settings.progress)
        with bar:
            if ctx.settings.workers > 1 and len(jobs) > 1:
                with ProcessPoolExecutor(max_workers=ctx.settings.workers) as pool:
                    for size, result in zip(sizes, pool.map(_parse_one, jobs)):
                        results.append(result)
                        bar.update(size)
            else:
                for (path, snapshot, out, max_bytes, strict), size in zip(jobs, sizes):
                    done = bar.n

                    def progress(offset: int, base: int = done) -> None:
                        bar.update(base + offset - bar.n)

                    results.append(parse_location(path, snapshot, out, max_bytes=max_bytes,
                                                  strict=strict, progress=progress))
                    bar.update(done + size - bar.n)
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
                                      _local_files([job[0] for job in jobs], pages_dir / "spool"),
                                      counts, ctx.settings.strict))
        if (pages_dir / "spool").exists():
            (pages_dir / "spool").rmdir()
        with open(ctx.outdir / "bad_records.jsonl", "w", encoding="utf-8") as fh:
            for entry in bad:
                fh.write(json.dumps(entry) + "\n")
        counts["files"] = len(jobs)
        return StageResult(outputs={"pages": "pages", "bad_records": "bad_records.jsonl"},
                           counts=dict(counts), bad_records=bad)


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
