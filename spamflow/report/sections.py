"""The report's sections, each built from the outputs one stage names in run.json.

Every piece of evidence (a quilt beside its sources, a cluster, a campaign) is an
:class:`Evidence` with a key; the report shows them under their section and the judging page
shows them one at a time, so both read the same files the same way."""

from __future__ import annotations

import csv
import heapq
import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from jinja2 import Environment, PackageLoader, select_autoescape

from spamflow.errors import SpamflowError
from spamflow.report.host_table import HostKey, HostTable
from spamflow.report.passages import runs, source_marks

MAX_TEXT_WORDS = 2000
"""Words of a page shown beside a quilt (the rest is cut, and the cut is said)."""
IMMUTABLES_SHOWN = 60


@dataclass
class Evidence:
    """One thing a person can judge: its key (``quilt:…``, ``cluster:…``, ``campaign:…``,
    ``host:…``), a title, an HTML fragment and the hosts it implicates."""

    key: str
    kind: str
    title: str
    html: str
    hosts: list[HostKey] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return "ev-" + re.sub(r"[^A-Za-z0-9_-]+", "-", self.key)


def environment() -> Environment:
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


def _macro(env: Environment, name: str) -> Any:
    return getattr(env.get_template("fragments.html.j2").module, name)


def _jsonl(path: str | Path, what: str) -> Iterator[dict[str, Any]]:
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


def quilt_evidence(stages: dict[str, dict[str, Any]], max_items: int, env: Environment) -> tuple[list[Evidence], int]:
    """The quilts with the highest patchfrac, each beside its sources, shared k-grams highlighted."""
    record = stages["quilt"]
    total = 0

    def counted(lines: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        nonlocal total
        for line in lines:
            total += 1
            yield line

    shown = heapq.nsmallest(max_items, counted(_jsonl(record["outputs"]["quilts"], "quilt")),
                            key=lambda q: (-q["patchfrac"], q["snapshot"], q["doc_id"]))
    ids = {q["doc_id"] for q in shown} | {s["doc_id"] for q in shown for s in q["sources"]}
    pages = pages_by_id(stages["parse"]["outputs"]["pages"], ids, ["words"])
    k = int(record["params"].get("k", 5))
    macro = _macro(env, "quilt")
    out = []
    for q in shown:
        words = list(pages.get(q["doc_id"], {}).get("words") or [])[:MAX_TEXT_WORDS]
        source_words = [list(pages.get(s["doc_id"], {}).get("words") or [])[:MAX_TEXT_WORDS] for s in q["sources"]]
        owner, marks = source_marks(words, source_words, k)
        sources = [{"url": s["url"], "grams": s["grams"], "index": i,
                    "runs": runs(sw, [i if m else -1 for m in mark])}
                   for i, (s, sw, mark) in enumerate(zip(q["sources"], source_words, marks))]
        html = str(macro(q, runs(words, owner), sources))
        out.append(Evidence(f"quilt:{q['snapshot']}:{q['doc_id']}", "quilt", f"quilt {q['url']} ({q['snapshot']})",
                            html, [(q["snapshot"], q["host"])]))
    return out, total - len(shown)


def cluster_evidence(stages: dict[str, dict[str, Any]], max_items: int,
                     env: Environment) -> tuple[list[dict[str, Any]], list[Evidence]]:
    """All clusters for Table 1, and the first ``max_items`` with their members."""
    record = stages["hss"]
    clusters = list(_jsonl(record["outputs"]["clusters"], "cluster"))
    shown = clusters[:max_items]
    wanted = {c["cluster_id"] for c in shown}
    table = pq.read_table(record["outputs"]["page_clusters"],
                          columns=["doc_id", "snapshot", "url", "host", "cluster_id", "similarity_to_centroid"])
    members: dict[int, list[dict[str, Any]]] = {}
    for row in table.filter(pc.is_in(table["cluster_id"], pa.array(sorted(wanted), type=table["cluster_id"].type))
                            ).to_pylist() if wanted else []:
        members.setdefault(row["cluster_id"], []).append(row)
    macro = _macro(env, "cluster")
    out = []
    for c in shown:
        rows = sorted(members.get(c["cluster_id"], []), key=lambda r: -(r["similarity_to_centroid"] or 0))
        html = str(macro(c, rows[:200], max(0, len(rows) - 200)))
        hosts = sorted({(r["snapshot"], r["host"]) for r in rows})
        out.append(Evidence(f"cluster:{c['cluster_id']}", "cluster",
                            f"HSS cluster {c['cluster_id'] + 1} ({c['snapshot']}, {c['size']} pages, "
                            f"{c['domains']} domains)", html, hosts))
    return clusters, out


def _immutables(work: Path, snapshot: str, wanted: set[int]) -> dict[int, list[str]]:
    path = work / snapshot.replace("/", "_") / "immutables.tsv"
    found: dict[int, list[str]] = {}
    if not path.is_file():
        return found
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            doc, _, words = line.rstrip("\n").partition("\t")
            if doc.isdigit() and int(doc) in wanted:
                found[int(doc)] = words.split()
    return found


def campaign_evidence(stages: dict[str, dict[str, Any]], max_items: int,
                      env: Environment) -> tuple[list[Evidence], int]:
    """Spin campaigns with their copies, promoted sites and the immutables every copy shares."""
    record = stages["spin"]
    campaigns = list(_jsonl(record["outputs"]["campaigns"], "campaign"))
    shown = campaigns[:max_items]
    work = Path(record["outputs"].get("work", ""))
    by_snapshot: dict[str, set[int]] = {}
    for c in shown:
        by_snapshot.setdefault(c["snapshot"], set()).update(p["doc_id"] for p in c["pages"])
    immutables: dict[int, list[str]] = {}
    for snapshot, ids in by_snapshot.items():
        immutables.update(_immutables(work, snapshot, ids))
    macro = _macro(env, "campaign")
    out = []
    for c in shown:
        lists = [immutables[p["doc_id"]] for p in c["pages"] if p["doc_id"] in immutables]
        common = set(lists[0]).intersection(*map(set, lists[1:])) if lists else set()
        ordered = [w for w in dict.fromkeys(lists[0])] if lists else []
        shared = [w for w in ordered if w in common]
        html = str(macro(c, shared[:IMMUTABLES_SHOWN], len(shared)))
        hosts = sorted({(c["snapshot"], p["host"]) for p in c["pages"]}
                       | {(c["snapshot"], p["host"]) for p in c["promoted_sites"]})
        out.append(Evidence(f"campaign:{c['campaign']}", "campaign",
                            f"spin campaign {c['campaign']} ({c['articles']} articles on {c['hosts']} hosts)",
                            html, hosts))
    return out, len(campaigns) - len(shown)


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
        html = "".join(str(macro(r, table.columns)) for r in rows)
        links = "".join(f'<li><a href="{href}">{text}</a></li>' for r in rows
                        for text, href in r.links)
        out.append(Evidence(f"host:{host}", "host", f"host {host}", html + (f"<ul>{links}</ul>" if links else ""),
                            [(r.snapshot, host) for r in rows]))
    return out


def copy_asset(src: str | Path, assets: Path, name: str) -> str | None:
    """Copy a figure another command wrote into the assets folder; its relative path."""
    if not Path(src).is_file():
        return None
    shutil.copyfile(src, assets / name)
    return f"assets/{name}"


def read_csv_rows(path: str | Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def rank_density_figures(path: str | Path, assets: Path) -> list[tuple[str, str]]:
    """One CheiRank-PageRank plane per snapshot of links' ``rank_density.npz``."""
    from spamflow.report.plots import rank_plane

    figures = []
    with np.load(path) as data:
        snapshots = sorted({k.rsplit("/", 1)[0] for k in data.files if k.endswith("/density")})
        for i, snapshot in enumerate(snapshots):
            name = f"rank_plane_{i}.png"
            rank_plane(data[f"{snapshot}/density"], data[f"{snapshot}/edges"], assets / name,
                       f"CheiRank-PageRank plane, {snapshot}")
            figures.append((snapshot, f"assets/{name}"))
    return figures
