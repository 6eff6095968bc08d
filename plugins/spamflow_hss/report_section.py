"""The HSS detector's part of the run report: its clusters (Table 1, the one-to-all curve of
Figure 4 for each snapshot's best cluster, each cluster's members as evidence), the figure of
``spamflow hss similar``, and its headline columns of the host table."""

# ruff: noqa: E501 - the fragments' long lines are HTML whose line breaks would show on the page

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spamflow import hookimpl
from spamflow.report import Evidence, EvidenceSet, FiredRule, HostColumns, ReportSection

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

STAGE = "hss"
SIMILAR_STAGE = "hss_similar"
KIND = "cluster"

CLUSTER = """
{% macro cluster(c, members, hidden) -%}
<p>rank {{ c.cluster_id + 1 }} &middot; {{ c.snapshot }} &middot; {{ c.size }} pages on {{ c.domains }} domains,
{{ c.hosts }} hosts, {{ c.ips }} IPs &middot; mean similarity {{ "%.3f"|format(c.mean_similarity) }} &middot;
score {{ "%.3f"|format(c.score) }} &middot; centroid <a href="{{ c.centroid.url }}">{{ c.centroid.url }}</a></p>
<table class="grid small"><thead><tr><th>member</th><th>host</th><th>similarity to centroid</th></tr></thead><tbody>
{% for m in members %}<tr><td><a href="{{ m.url }}">{{ m.url }}</a></td><td>{{ m.host }}</td>
<td class="num">{{ "%.3f"|format(m.similarity_to_centroid) if m.similarity_to_centroid is not none else "" }}</td></tr>{% endfor %}
</tbody></table>
{% if hidden %}<p class="note">{{ hidden }} more members not shown.</p>{% endif %}
{%- endmacro %}
"""

CLUSTER_TABLE = """
<p>{{ total }} clusters, best first (score = mean similarity × domains, the paper's Table 1).</p>
<table class="grid sortable"><thead><tr><th>rank</th><th>snapshot</th><th>size</th><th>domains</th><th>hosts</th>
<th>IPs</th><th>mean similarity</th><th>score</th><th>centroid</th></tr></thead><tbody>
{% for c in clusters %}<tr><td class="num">{% set a = anchors.get("cluster:" ~ c.cluster_id) %}
{% if a %}<a href="#{{ a }}">{{ c.cluster_id + 1 }}</a>{% else %}{{ c.cluster_id + 1 }}{% endif %}</td>
<td>{{ c.snapshot }}</td><td class="num">{{ c.size }}</td><td class="num">{{ c.domains }}</td>
<td class="num">{{ c.hosts }}</td><td class="num">{{ c.ips }}</td><td class="num">{{ c.mean_similarity|num }}</td>
<td class="num">{{ c.score|num }}</td><td><a href="{{ c.centroid.url }}">{{ c.centroid.url }}</a></td></tr>
{% endfor %}</tbody></table>
{% for title, src in curves %}<figure><img src="{{ src }}" alt="one-to-all curve"><figcaption>One page against all
(Figure 4): {{ title }}</figcaption></figure>{% endfor %}
"""


def cluster_evidence(record: dict[str, Any], max_items: int) -> EvidenceSet:
    """The first ``max_items`` clusters with their members; ``data`` holds every cluster, for
    Table 1."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from spamflow.report.sections import environment, jsonl, macros

    clusters = list(jsonl(record["outputs"]["clusters"], "cluster"))
    shown = clusters[:max_items]
    wanted = {c["cluster_id"] for c in shown}
    table = pq.read_table(record["outputs"]["page_clusters"],
                          columns=["doc_id", "snapshot", "url", "host", "cluster_id", "similarity_to_centroid"])
    members: dict[int, list[dict[str, Any]]] = {}
    for row in table.filter(pc.is_in(table["cluster_id"], pa.array(sorted(wanted), type=table["cluster_id"].type))
                            ).to_pylist() if wanted else []:
        members.setdefault(row["cluster_id"], []).append(row)
    macro = macros(environment(), CLUSTER).cluster
    out = []
    for c in shown:
        rows = sorted(members.get(c["cluster_id"], []), key=lambda r: -(r["similarity_to_centroid"] or 0))
        html = str(macro(c, rows[:200], max(0, len(rows) - 200)))
        hosts = sorted({(r["snapshot"], r["host"]) for r in rows})
        out.append(Evidence(f"{KIND}:{c['cluster_id']}", KIND,
                            f"HSS cluster {c['cluster_id'] + 1} ({c['snapshot']}, {c['size']} pages, "
                            f"{c['domains']} domains)", html, hosts))
    return EvidenceSet(KIND, out, len(clusters), data=clusters)


def similarities_to(fingerprints: Path, m: int, snapshot: str, doc_id: int) -> Any:
    """Sim_b of every page of ``snapshot`` to the page ``doc_id``, best first (HSS section 4.1),
    streaming the fingerprints in batches: memory holds one float per page.  None if the page
    is not in the snapshot."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from spamflow_hss.fingerprint import matched_dimensions
    from spamflow_hss.fingerprint_table import fingerprints_dataset, read_fingerprints

    dataset = fingerprints_dataset(fingerprints, m)
    in_snapshot = pc.field("snapshot") == snapshot
    reference = dataset.to_table(columns=["fingerprint"], filter=in_snapshot & (pc.field("doc_id") == doc_id))
    if reference.num_rows == 0:
        return None
    ref = read_fingerprints(reference, m)[0]
    parts = []
    for batch in dataset.to_batches(columns=["doc_id", "fingerprint"], filter=in_snapshot):
        table = pa.Table.from_batches([batch])
        sim = matched_dimensions(read_fingerprints(table, m), ref) / m
        sim[table.column("doc_id").to_numpy() == doc_id] = 1.0  # the page itself, as hss similar ranks it
        parts.append(sim)
    return np.sort(np.concatenate(parts))[::-1]


def similarity_curve(similarity: npt.NDArray[np.float64], path: Path, title: str) -> None:
    """Sim_b against rank, best first (HSS Figure 4; the steps are the gaps between templates)."""
    import numpy as np

    from spamflow.report.plots import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.4))
    ax.step(np.arange(1, len(similarity) + 1), similarity, where="post")
    ax.set_xlabel("pages, by decreasing HS-similarity")
    ax.set_ylabel("Sim_b to the reference page")
    ax.set_ylim(0, 1.02)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def one_to_all(record: dict[str, Any], clusters: list[dict[str, Any]], assets: Path) -> list[tuple[str, str]]:
    """HSS's Figure 4 for the centroid of the best cluster of each snapshot."""
    best: dict[str, dict[str, Any]] = {}
    for c in clusters:
        best.setdefault(c["snapshot"], c)
    figures: list[tuple[str, str]] = []
    for snapshot, c in sorted(best.items()):
        sims = similarities_to(Path(record["outputs"]["fingerprints"]), int(record["params"]["m"]), snapshot,
                               c["centroid"]["doc_id"])
        if sims is None:
            continue
        name = f"one_to_all_{len(figures)}.png"
        similarity_curve(sims, assets / name, f"Sim_b to {c['centroid']['url']} ({snapshot})")
        figures.append((f"centroid of cluster {c['cluster_id'] + 1} ({snapshot})", f"assets/{name}"))
    return figures


THRESHOLD = """
<p>Check threshold <strong>t = {{ th.t }}</strong> of {{ m }} dimensions, chosen by <code>t: auto</code>:
{% if th.reason == "rate" %}the smallest t in [{{ th.t_min }}, {{ th.t_max }}] whose expected false edges per page
(P(Sim_b &gt; t/m) between pages of different registered domains &times; {{ "%.1f"|format(th.candidates_per_page) }}
cross-domain candidate pairs per page) stay under the rate {{ th.false_edge_rate }}: {{ "%.3g"|format(th.expected_false_edges) }}.
{% elif th.reason == "ceiling" %}no t in [{{ th.t_min }}, {{ th.t_max }}] keeps the expected false edges per page under the
rate {{ th.false_edge_rate }} (at t = {{ th.t }}: {{ "%.3g"|format(th.expected_false_edges) }}, with
{{ "%.1f"|format(th.candidates_per_page) }} cross-domain candidate pairs per page), so t is the ceiling.
{% else %}the crawl has no pair of pages of different registered domains, so no null: t is the ceiling.{% endif %}
Null: {{ th.pairs }} sampled cross-domain pairs (asked {{ th.sample_pairs }}; {{ th.cross_domain_pairs }} in the crawl).</p>
{% if th.pairs %}<table class="grid small"><thead><tr><th>matched dimensions</th>{% for s, c in bins %}<th>{{ s }}</th>{% endfor %}</tr></thead>
<tbody><tr><td>null pairs</td>{% for s, c in bins %}<td class="num">{{ c }}</td>{% endfor %}</tr></tbody></table>{% endif %}
"""


def threshold_html(record: dict[str, Any]) -> str:
    """What ``t: auto`` chose and its null histogram (from stage.json's details), or nothing."""
    from spamflow.report.sections import environment

    threshold = (record.get("details") or {}).get("threshold")
    summary = Path(record.get("outputs", {}).get("summary", ""))
    if not threshold and summary.suffix == ".json" and summary.is_file():  # a run.json written before details
        threshold = json.loads(summary.read_text(encoding="utf-8")).get("threshold")
    if not threshold:
        return ""
    bins = sorted(((int(s), c) for s, c in threshold["histogram"].items()))
    return environment().from_string(THRESHOLD).render(th=threshold, bins=bins, m=record["params"].get("m", 128))


def error_pages_html(record: dict[str, Any]) -> str:
    """A line on the error pages kept out of the clusters (stage counts ``error_pages_*``), if any."""
    counts = record.get("counts") or {}
    http, soft = counts.get("error_pages_http_error", 0), counts.get("error_pages_soft_404", 0)
    if not http and not soft:
        return ""
    return (f"<p>Kept out of every cluster (<code>exclude_error_pages</code>): {http} page(s) with HTTP status "
            f"400 or more and {soft} soft 404(s).</p>")


def clusters_section(record: dict[str, Any], assets: Path, evidence: EvidenceSet | None) -> ReportSection:
    from spamflow.report.sections import environment, evidence_list

    items = evidence.items if evidence else []
    table = evidence.data if evidence else []
    curves = one_to_all(record, table, assets)
    html = threshold_html(record) + error_pages_html(record) + environment().from_string(CLUSTER_TABLE).render(
        clusters=table[:200], curves=curves, anchors={e.key: e.anchor for e in items}, total=len(table))
    return ReportSection("hss", "HSS clusters (Table 1)",
                         html + evidence_list(items, evidence.hidden if evidence else 0, "clusters"), order=30)


def similar_section(record: dict[str, Any], assets: Path) -> ReportSection | None:
    from spamflow.report.sections import copy_asset

    figure = copy_asset(record["outputs"].get("figure4", ""), assets, "hss_similar_figure4.png")
    if not figure:
        return None
    return ReportSection("hss-similar", "HSS one page against all (spamflow hss similar)",
                         f'<img src="{figure}" alt="Sim_b against rank">', order=70)


@hookimpl
def spamflow_report_evidence_kinds() -> dict[str, str]:
    return {KIND: "clusters"}


@hookimpl
def spamflow_report_evidence(stage: str, record: dict[str, Any], max_items: int) -> EvidenceSet | None:
    return cluster_evidence(record, max_items) if stage == STAGE else None


@hookimpl
def spamflow_report_host_columns(stage: str) -> HostColumns | None:
    if stage != STAGE:
        return None
    # as the ensemble's evidence (spamflow_ensemble.evidence.FIRED): a template shared by 3+
    # domains that link mostly to each other, not a theme shared by unrelated sites; docs/fired.md
    return HostColumns(("linked_cluster_domains", "largest_cluster_domains", "multi_domain_fraction"),
                       FiredRule("linked_cluster_domains", 2, "a template network: 3+ domains of one cluster "
                                 "linking mostly to each other"))


@hookimpl
def spamflow_report_section(stage: str, record: dict[str, Any], assets: Path,
                            evidence: EvidenceSet | None) -> ReportSection | None:
    if stage == STAGE:
        return clusters_section(record, assets, evidence)
    if stage == SIMILAR_STAGE:
        return similar_section(record, assets)
    return None
