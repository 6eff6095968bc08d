"""What the report's frame and the plugins' report modules share: the template environment,
readers of stage outputs, the host items of the judging page and the HTML of an evidence list.

Every piece of evidence is an :class:`Evidence` with a key; the report shows it under its
section and the judging page shows it alone, so both read the same files the same way.  The
evidence of each detector is built by its own plugin (``spamflow_report_evidence``)."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import escape

from spamflow.errors import SpamflowError
from spamflow.report.evidence import Evidence, HostKey
from spamflow.report.host_table import HostTable

__all__ = ["Evidence", "copy_asset", "environment", "evidence_list", "host_evidence", "host_links", "jsonl",
           "macros", "pages_by_id", "read_csv_rows"]


def environment() -> Environment:
    """The report's Jinja environment: autoescaping, and the ``num`` filter (4 significant
    digits, empty for a missing value)."""
    env = Environment(loader=PackageLoader("spamflow.report", "templates"), autoescape=select_autoescape(["j2"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _num
    return env


def _num(value: Any) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def macros(env: Environment, source: str) -> Any:
    """The macros of a template held as a string (a plugin's own fragments), autoescaped like
    the report's templates: ``macros(env, TEXT).quilt(...)``."""
    return env.from_string(source).module


def _macro(env: Environment, name: str) -> Any:
    return getattr(env.get_template("fragments.html.j2").module, name)


def jsonl(path: str | Path, what: str) -> Iterator[dict[str, Any]]:
    """The records of a JSON-lines output; a bad line is an error naming the file and line."""
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError as exc:
                    raise SpamflowError(f"report: {path} line {number}: not a JSON {what}: {exc}") from exc


def pages_by_id(pages: str | Path, ids: set[int], columns: list[str]) -> dict[int, dict[str, Any]]:
    """The page-table rows of the given doc_ids (one filtered scan of the Parquet dataset)."""
    if not ids:
        return {}
    dataset = ds.dataset(pages, format="parquet")
    id_type = dataset.schema.field("doc_id").type
    table = dataset.to_table(columns=["doc_id", *columns],
                             filter=pc.field("doc_id").isin(pa.array(sorted(ids), type=id_type)))
    return {r["doc_id"]: r for r in table.to_pylist()}


def host_links(evidence: list[Evidence]) -> dict[HostKey, list[tuple[str, str]]]:
    links: dict[HostKey, list[tuple[str, str]]] = {}
    for ev in evidence:
        for key in ev.hosts:
            links.setdefault(key, []).append((ev.kind, "#" + ev.anchor))
    return links


def host_evidence(table: HostTable, env: Environment) -> list[Evidence]:
    """One judging item per host (labels are per host): its rows of every snapshot."""
    macro = _macro(env, "host")
    by_host: dict[str, list[Any]] = {}
    for row in table.rows:
        by_host.setdefault(row.host, []).append(row)
    out = []
    for host, rows in by_host.items():
        html = "".join(str(macro(r, table.columns, table.names)) for r in rows)
        links = "".join(f'<li><a href="{href}">{text}</a></li>' for r in rows
                        for text, href in r.links)
        out.append(Evidence(f"host:{host}", "host", f"host {host}", html + (f"<ul>{links}</ul>" if links else ""),
                            [(r.snapshot, host) for r in rows]))
    return out


COLLAPSE_ABOVE = 3
"""A section's evidence list longer than this is collapsed behind its count (``<details>``):
fifty quilts side by side with their sources made the page very long; a link from the host
table opens the list at its item (report.js)."""


def evidence_list(items: list[Evidence], hidden: int, what: str) -> str:
    """The evidence of a section, each an ``<article>`` at its anchor, and how many more were
    found than shown (``what``: the kind's plural); more than ``COLLAPSE_ABOVE`` are collapsed
    under a summary that counts them."""
    body = "".join(f'<article class="evidence" id="{e.anchor}" data-key="{escape(e.key)}"><h3>{escape(e.title)}</h3>'
                   f"{e.html}</article>" for e in items)
    if len(items) > COLLAPSE_ABOVE:
        body = (f'<details class="evidence-list"><summary>{len(items)} {what}'
                + (f" ({hidden} more not shown)" if hidden else "") + f"</summary>{body}</details>")
    return body + (f'<p class="note">{hidden} more {what} not shown (report.max_items).</p>' if hidden else "")


def copy_asset(src: str | Path, assets: Path, name: str) -> str | None:
    """Copy a figure another command wrote into the assets folder; its relative path."""
    if not Path(src).is_file():
        return None
    shutil.copyfile(src, assets / name)
    return f"assets/{name}"


def read_csv_rows(path: str | Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))
