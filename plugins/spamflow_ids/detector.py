"""The ``ids`` stage: operator identifiers per page, networks of hosts on different
registered domains that share one, and per-host features (docs/ids.md)."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from spamflow.detector import Detector, StageContext, StageResult
from spamflow.mr import use_mapreduce
from spamflow.per_host import HostFeature, PerHostTable, host_schema
from spamflow_ids.networks import Occurrence, assemble, group_occurrences, page_occurrences
from spamflow_ids.params import IdsParams
from spamflow_ids.sources import part_page_ids, warc_html_ids

HOST_SCHEMA = host_schema(
    pa.field("pages", pa.int64(), nullable=False),
    pa.field("ids", pa.int64(), nullable=False),
    pa.field("ids_per_page", pa.float64(), nullable=False),
    pa.field("shared_ids", pa.int64(), nullable=False),
    pa.field("domains_sharing", pa.int64(), nullable=False),
    pa.field("network_hosts", pa.int64(), nullable=False),
    pa.field("network_domains", pa.int64(), nullable=False),
    pa.field("affiliate_network_domains", pa.int64(), nullable=False),
    pa.field("platform_ids", pa.int64(), nullable=False),
    pa.field("network", pa.string()),
)


def _parts(pages: Path) -> list[str]:
    return sorted(str(p) for p in ds.dataset(pages, format="parquet").files)


def _warc_files(pages: Path) -> list[str]:
    """The WARC files the page table's rows come from, in name order."""
    table = ds.dataset(pages, format="parquet").to_table(columns=["warc_file"])
    return sorted({f for f in table["warc_file"].to_pylist() if f})


def memory_records(parts: list[str], warcs: list[str], params: IdsParams, spool: Path
                   ) -> tuple[list[dict[str, Any]], dict[tuple[str, str], tuple[str, int]]]:
    """The identifier records and pages per (snapshot, host), in this process."""
    rules = params.rules()
    html: dict[int, set[str]] = {}
    for location in warcs:
        for doc_id, ids in warc_html_ids(location, list(rules.html_kinds), params.max_bytes or 5_000_000, spool):
            html.setdefault(doc_id, set()).update(ids)
    rows: dict[int, tuple[str, str, str, str, list[str]]] = {}
    for part in parts:
        for doc_id, snapshot, host, domain, url, ids in part_page_ids(part, rules):
            row = (snapshot, host, domain, url, ids)
            if doc_id not in rows or list(row) < list(rows[doc_id]):  # a doc_id twice: one row, as the job keeps
                rows[doc_id] = row
    host_pages: dict[tuple[str, str], tuple[str, int]] = {}
    pairs: list[tuple[tuple[str, str], Occurrence]] = []
    for doc_id, (snapshot, host, domain, url, ids) in rows.items():
        _, n = host_pages.get((snapshot, host), (domain, 0))
        host_pages[(snapshot, host)] = (domain, n + 1)
        pairs += page_occurrences(snapshot, host, domain, doc_id, url, sorted(set(ids) | html.get(doc_id, set())))
    records = group_occurrences(pairs, max_domains=params.max_domains, max_examples=params.max_evidence_pages)
    return records, host_pages


def mapreduce_records(parts: list[str], warcs: list[str], params: IdsParams, workdir: Path, runner: str,
                      runner_args: tuple[str, ...] | list[str] = ()
                      ) -> tuple[list[dict[str, Any]], dict[tuple[str, str], tuple[str, int]]]:
    """The same as :func:`memory_records`, by the two-step job ``MRIds``: one input file per
    part and per WARC file, so each is a map task."""
    from spamflow import storage
    from spamflow.mr import run_job
    from spamflow.mr.driver import package_zip
    from spamflow_ids.mr_ids import MRIds

    inputs = workdir / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    listed: list[Path] = []
    for i, part in enumerate(parts):
        listed.append(inputs / f"part-{i:05d}.txt")
        listed[-1].write_text(json.dumps({"part": storage.task_location(Path(part))}) + "\n")
    for i, warc in enumerate(warcs):
        listed.append(inputs / f"warc-{i:05d}.txt")
        listed[-1].write_text(json.dumps({"warc": warc}) + "\n")
    if not listed:
        return [], {}
    if runner != "inline":  # the mapper reads WARC files with spamflow's reader, parts with its open_input
        runner_args = (*runner_args, "--py-files", str(package_zip("spamflow")))
    rules = params.rules()
    out = run_job(MRIds, listed, workdir / "ids.jsonl", runner=runner, runner_args=runner_args,
                  args=["--rules", json.dumps(rules.to_dict()), "--max-domains", str(params.max_domains),
                        "--max-examples", str(params.max_evidence_pages),
                        "--max-bytes", str(params.max_bytes or 5_000_000)])
    records: list[dict[str, Any]] = []
    host_pages: dict[tuple[str, str], tuple[str, int]] = {}
    with open(out, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            item = json.loads(line)
            if item[0] == "pages":
                _, snapshot, host, domain, n = item
                host_pages[(snapshot, host)] = (domain, n)
            else:
                records.append(item[1])
    return records, host_pages


def _jsonl(path: Path, rows: Iterator[dict[str, Any]] | list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")


class IdsDetector(Detector):
    name = "ids"
    version = "2"  # 2: affiliate_network_domains, the firing rule
    description = ("Shared operator identifiers (affiliate ids, AdSense publishers, analytics and tag-manager ids, "
                   "shortlinks): networks of hosts on different registered domains that share one.")
    Params = IdsParams
    requires = ("parse",)
    uses_mapreduce = True  # engine: mapreduce, or auto on a cluster runner or above mapreduce_above_pages
    host_tables = (PerHostTable("hosts", (
        HostFeature("affiliate_network_domains", "registered domains in the host's network of shared link-borne "
                    "ids: affiliate tracking ids, affiliate paths, shortlinks (0: in none; fired: 2 or more)",
                    evidence=True, above=1.0),
        HostFeature("network_domains", "registered domains in the host's network of shared operator ids of any "
                    "kind, analytics and AdSense included (0: in none; a feature, not a firing)"),
        HostFeature("domains_sharing", "other registered domains sharing an operator id with the host"),
        HostFeature("shared_ids", "the host's operator ids also seen on another registered domain"),
        HostFeature("network_hosts", "hosts in the host's network (0: in none)"),
        HostFeature("ids", "distinct operator ids on the host's pages (platform ids left out)"),
        HostFeature("ids_per_page", "operator ids per page of the host (platform ids left out)"),
        HostFeature("platform_ids", "ids on the host that are on more than max_domains registered domains"),
        HostFeature("pages", "pages of the host"))),)

    def run(self, ctx: StageContext) -> StageResult:
        params = ctx.params
        assert isinstance(params, IdsParams)
        if params.max_bytes is None:
            params = params.model_copy(update={"max_bytes": int(ctx.inputs["parse"].params.get("max_bytes",
                                                                                               5_000_000))})
        pages = Path(ctx.inputs["parse"]["pages"])
        parts = _parts(pages)
        warcs = _warc_files(pages) if params.html_kinds else []
        n_pages = ds.dataset(pages, format="parquet").count_rows()
        with tempfile.TemporaryDirectory(prefix="work-", dir=ctx.outdir) as work:
            if use_mapreduce(params.engine, ctx.settings, size=n_pages, above=params.mapreduce_above_pages):
                records, host_pages = mapreduce_records(parts, warcs, params, Path(work), ctx.settings.runner,
                                                        ctx.settings.runner_args)
            else:
                records, host_pages = memory_records(parts, warcs, params, Path(work) / "spool")
        return write_outputs(ctx.outdir, records, host_pages, n_pages=n_pages, warc_files=len(warcs))


def write_outputs(outdir: Path, records: list[dict[str, Any]], host_pages: dict[tuple[str, str], tuple[str, int]],
                  *, n_pages: int, warc_files: int) -> StageResult:
    rows, networks, platform = assemble(records, host_pages)
    table = pa.Table.from_pylist(rows, schema=HOST_SCHEMA)
    pq.write_table(table, outdir / "hosts.parquet")
    _jsonl(outdir / "networks.jsonl", networks)
    _jsonl(outdir / "platform_ids.jsonl", platform)
    fired = sum(1 for r in rows if r["affiliate_network_domains"] >= 2)
    counts = {"pages": n_pages, "hosts": len(rows), "warc_files_scanned": warc_files,
              "ids": sum(1 for r in records if not r["platform"]),
              "shared_ids": sum(1 for r in records if not r["platform"] and r["domains"] >= 2),
              "platform_ids_dropped": len(platform), "networks": len(networks),
              "hosts_in_networks": sum(1 for r in rows if r["network_domains"] >= 2), "hosts_fired": fired}
    return StageResult(outputs={"hosts": "hosts.parquet", "networks": "networks.jsonl",
                                "platform_ids": "platform_ids.jsonl"}, counts=counts)
