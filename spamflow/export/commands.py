"""``spamflow export -c FILE --to DIR --format parquet|jsonl|dolma``: run what the config needs
(finished stages are not redone), then write the run's host and URL rows for data-set pipelines."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from spamflow.export.writers import FORMATS


def add_commands(sub: argparse._SubParsersAction) -> None:
    from spamflow.workdir_guard import add_force_option

    p = sub.add_parser("export", help="write a run's per-host and per-URL scores for data-set pipelines", description=(
        "Run the config's DAG (finished stages are not redone), then write every (snapshot, host) and every parsed "
        "page with the classifier's score, the detectors that fired and each detector's evidence columns, in a "
        "versioned schema described in DIR/export.json (docs/pipelines.md).  parquet and jsonl: hosts.* and urls.*; "
        "dolma: attributes/spamflow/<snapshot>/<warc>.jsonl.gz, one line per page in record order."))
    p.add_argument("-c", "--config", required=True, help="YAML config file")
    p.add_argument("--workdir", help="override the config's workdir")
    p.add_argument("--to", required=True, metavar="DIR", help="folder to write (created; files in it are replaced)")
    p.add_argument("--format", choices=FORMATS, default="parquet", help="parquet (default), jsonl or dolma")
    p.add_argument("--dolma-id", choices=("record_id", "url"), default="record_id",
                   help="what a dolma line's id is: the WARC-Record-ID (default; datatrove's WarcReader uses it too) "
                        "or the URL")
    add_force_option(p)
    p.set_defaults(handler=run_export)


def export_run(manifest: dict[str, Any], out: Path, fmt: str, *, plugins: Any, dolma_id: str = "record_id"
               ) -> dict[str, Any]:
    """Write the export of the run ``manifest`` (run.json's contents) into ``out``; its counts."""
    from spamflow.errors import SpamflowError
    from spamflow.export.rows import has_pages, host_rows, url_batches
    from spamflow.export.writers import write_description, write_dolma, write_jsonl, write_parquet

    out.mkdir(parents=True, exist_ok=True)
    hosts = host_rows(manifest, plugins)
    if not has_pages(manifest) and fmt == "dolma":
        raise SpamflowError("export --format dolma: the run has no page table (a host-graph run?): dolma attributes "
                            "are per document; use parquet or jsonl for its host rows")
    urls = url_batches(manifest, hosts.table) if has_pages(manifest) else None  # a host-graph run: hosts only
    if fmt == "parquet":
        counts = write_parquet(hosts, urls, out)
    elif fmt == "jsonl":
        counts = write_jsonl(hosts, urls, out)
    else:
        assert urls is not None
        counts = write_dolma(hosts, urls, out, dolma_id)
    write_description(hosts, out, fmt, counts, {"dolma_id": dolma_id} if fmt == "dolma" else {})
    return counts


def record_export(workdir: str, out: Path, fmt: str, counts: dict[str, Any]) -> None:
    """The export's entry in run.json (``exports``): what was written where, from which run."""
    import json
    from datetime import UTC, datetime

    from spamflow.manifest import add_export

    described = json.loads((out / "export.json").read_text(encoding="utf-8"))
    add_export(workdir, {"format": fmt, "destination": str(out.resolve()),
                         "schema_version": described["schema_version"], "rows": counts,
                         "run_id": described["run"]["run_id"],
                         "description": str((out / "export.json").resolve()),
                         "exported_at": datetime.now(UTC).isoformat(timespec="seconds")})


def run_export(args: argparse.Namespace) -> int:
    from spamflow.config import load_config
    from spamflow.plan import plan_run
    from spamflow.plugins import get_plugins

    plugins = get_plugins()
    config = load_config(args.config, plugins, workdir=args.workdir).with_force(args.force)
    _settings, manifest = args.run_stages("export", config, plugins, set(plan_run(config, plugins)))
    if manifest is None:
        return 1
    started = time.perf_counter()
    out = Path(args.to)
    counts = export_run(manifest, out, args.format, plugins=plugins, dolma_id=args.dolma_id)
    record_export(config.workdir_location, out, args.format, counts)
    print(", ".join(f"{k}={v}" for k, v in counts.items()) + f" in {time.perf_counter() - started:.1f} s",
          file=sys.stderr)
    print(f"export ({args.format}): {out} (schema: {out / 'export.json'})")
    return 0
