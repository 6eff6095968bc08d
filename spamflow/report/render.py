"""Write the report: ``index.html`` and an ``assets/`` folder (figures, CSS, the table script),
opening from file:// with nothing fetched from a network."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

import spamflow
from spamflow.report.host_table import HostTable, build_host_table
from spamflow.report.section import ReportSection
from spamflow.report.sections import (
    Evidence,
    campaign_evidence,
    cluster_evidence,
    copy_asset,
    environment,
    host_evidence,
    host_links,
    quilt_evidence,
    rank_density_figures,
    read_csv_rows,
)

STATIC_FILES = ("report.css", "report.js")


@dataclass
class Gathered:
    """Everything judgeable in a run, in report order."""

    hosts: HostTable
    quilts: list[Evidence] = field(default_factory=list)
    clusters: list[Evidence] = field(default_factory=list)
    cluster_table: list[dict[str, Any]] = field(default_factory=list)
    campaigns: list[Evidence] = field(default_factory=list)
    hidden: dict[str, int] = field(default_factory=dict)

    def items(self) -> list[Evidence]:
        return host_evidence(self.hosts, environment()) + self.quilts + self.clusters + self.campaigns


def gather(stages: dict[str, dict[str, Any]], max_items: int, max_hosts: int) -> Gathered:
    """Read every known stage's evidence (the first ``max_items`` of each kind)."""
    env = environment()
    done = {name: s for name, s in stages.items() if s.get("complete", True) and "outputs" in s}
    quilts: list[Evidence] = []
    clusters: list[Evidence] = []
    table: list[dict[str, Any]] = []
    campaigns: list[Evidence] = []
    hidden: dict[str, int] = {}
    if "quilt" in done and "parse" in done:
        quilts, hidden["quilts"] = quilt_evidence(done, max_items, env)
    if "hss" in done:
        table, clusters = cluster_evidence(done, max_items, env)
        hidden["clusters"] = len(table) - len(clusters)
    if "spin" in done:
        campaigns, hidden["campaigns"] = campaign_evidence(done, max_items, env)
    hosts = build_host_table(done, host_links(quilts + clusters + campaigns), max_hosts)
    return Gathered(hosts, quilts, clusters, table, campaigns, hidden)


def _evidence_list(items: list[Evidence], hidden: int, what: str) -> str:
    body = "".join(f'<article class="evidence" id="{e.anchor}" data-key="{_escape(e.key)}"><h3>{_escape(e.title)}</h3>'
                   f"{e.html}</article>" for e in items)
    return body + (f'<p class="note">{hidden} more {what} not shown (report.max_items).</p>' if hidden else "")


def _escape(text: str) -> str:
    from markupsafe import escape

    return str(escape(text))


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


def _one_to_all(record: dict[str, Any], clusters: list[dict[str, Any]], assets: Path) -> list[tuple[str, str]]:
    """HSS's Figure 4 for the centroid of the best cluster of each snapshot (needs the hss plugin)."""
    try:
        import spamflow_hss  # noqa: F401 - the curve reads hss's fingerprints with hss's code
    except ImportError:
        return []
    from spamflow.report.plots import similarity_curve

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


def build_sections(stages: dict[str, dict[str, Any]], assets: Path, gathered: Gathered,
                   plugins: Any = None) -> list[ReportSection]:
    env = environment()
    frag = env.get_template("fragments.html.j2").module
    sections = [ReportSection("summary", "Run summary", str(frag.summary(stages, "")))]  # type: ignore[attr-defined]
    sections.append(ReportSection("hosts", "Hosts", env.get_template("hosts.html.j2").render(table=gathered.hosts)))
    done = {name: s for name, s in stages.items() if s.get("complete", True) and "outputs" in s}
    if "classify" in done:
        sections.append(_classify_section(done["classify"], assets, env))
    if "quilt" in done:
        intro = (f"<p>{done['quilt'].get('counts', {}).get('quilted_pages', len(gathered.quilts))} quilted pages, "
                 "highest patchfrac first. Each word of the page is coloured by the first source (greedy order) "
                 "sharing a k-gram that covers it; in each source, the words it shares with the page.</p>")
        sections.append(ReportSection("quilts", "Quilted pages", intro + _evidence_list(
            gathered.quilts, gathered.hidden.get("quilts", 0), "quilts")))
    if "hss" in done:
        curves = _one_to_all(done["hss"], gathered.cluster_table, assets)
        html = env.from_string(CLUSTER_TABLE).render(clusters=gathered.cluster_table[:200], curves=curves,
                                                     anchors={e.key: e.anchor for e in gathered.clusters},
                                                     total=len(gathered.cluster_table))
        sections.append(ReportSection("hss", "HSS clusters (Table 1)", html + _evidence_list(
            gathered.clusters, gathered.hidden.get("clusters", 0), "clusters")))
    if "spin" in done:
        sections.append(ReportSection("spin", "Spin campaigns", _evidence_list(
            gathered.campaigns, gathered.hidden.get("campaigns", 0), "campaigns") or "<p>No campaign found.</p>"))
    if "links" in done:
        sections.append(_links_section(done["links"], assets, env))
    if "quilt_sweep" in done:
        sweep = done["quilt_sweep"]["outputs"]
        figure = copy_asset(sweep.get("figure3", ""), assets, "quilt_sweep_figure3.png")
        rows = read_csv_rows(sweep["table1"]) if Path(sweep.get("table1", "")).is_file() else []
        sections.append(ReportSection("quilt-sweep", "Quilt parameter sweep (Table 1, Figure 3)",
                                      env.from_string(CSV_TABLE).render(rows=rows, figure=figure)))
    if "hss_similar" in done:
        figure = copy_asset(done["hss_similar"]["outputs"].get("figure4", ""), assets, "hss_similar_figure4.png")
        if figure:
            sections.append(ReportSection("hss-similar", "HSS one page against all (spamflow hss similar)",
                                          f'<img src="{figure}" alt="Sim_b against rank">'))
    if plugins is not None:
        for name, record in done.items():
            for extra in plugins.pm.hook.spamflow_report_section(stage=name, record=record, assets=assets):
                if extra is not None:
                    sections.append(extra)
    anchors = [s.anchor for s in sections]
    duplicated = sorted({a for a in anchors if anchors.count(a) > 1})
    if duplicated:
        from spamflow.errors import SpamflowError

        raise SpamflowError(f"report: two sections share the anchor(s) {duplicated}; a plugin's "
                            "spamflow_report_section must return a unique anchor")
    return sections


def _classify_section(record: dict[str, Any], assets: Path, env: Any) -> ReportSection:
    from spamflow.report.plots import roc_curve

    path = Path(record["outputs"].get("evaluation", ""))
    evaluation: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    figure = None
    roc = evaluation.get("roc")
    if roc and roc.get("fpr"):
        roc_curve(roc["fpr"], roc["tpr"], evaluation.get("auc"), assets / "roc.png")
        figure = "assets/roc.png"
    scores = Path(record["outputs"].get("scores", ""))
    labels: dict[str, int] = {}
    if scores.is_file():
        for value in pq.read_table(scores, columns=["label"]).column("label").to_pylist():
            labels[value] = labels.get(value, 0) + 1
    return ReportSection("classify", "Classifier", env.from_string(CLASSIFY).render(e=evaluation, figure=figure,
                                                                                     labels=labels))


def _links_section(record: dict[str, Any], assets: Path, env: Any) -> ReportSection:
    from spamflow.report.plots import scatter

    figures = []
    if Path(record["outputs"].get("rank_density", "")).is_file():
        figures += rank_density_figures(record["outputs"]["rank_density"], assets)
    temporal = Path(record["outputs"].get("temporal", ""))
    if temporal.is_file():
        table = pq.read_table(temporal, columns=["snapshot_t0", "snapshot_t1", "IDR", "IGR"]).to_pylist()
        pairs = sorted({(r["snapshot_t0"], r["snapshot_t1"]) for r in table})
        for i, (t0, t1) in enumerate(pairs):
            points = [(r["IDR"], r["IGR"]) for r in table if (r["snapshot_t0"], r["snapshot_t1"]) == (t0, t1)
                      and r["IDR"] is not None and r["IGR"] is not None]
            if points:
                xs, ys = zip(*points)
                name = f"temporal_{i}.png"
                scatter(xs, ys, assets / name, "IDR (in-degree ratio)", "IGR (in-growth ratio)",
                        f"in-link change {t0} to {t1}, {len(points)} hosts")
                figures.append((f"{t0} → {t1}", f"assets/{name}"))
    summary_path = Path(record["outputs"].get("summary", ""))
    summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.is_file() else {}
    return ReportSection("links", "Link and temporal features", env.from_string(LINKS).render(
        figures=figures, summary=summary))


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

CLASSIFY = """
<p>Threshold {{ e.get("threshold")|num }} &middot; AUC {{ e.get("auc")|num or "n/a (no test labels)" }}
&middot; baseline AUC {{ e.get("baseline_auc")|num or "n/a" }} &middot; predicted:
{% for k, v in labels|dictsort %}{{ k }} {{ v }}{{ ", " if not loop.last }}{% endfor %}</p>
{% if e.get("train") %}<p>Trained on {{ e.train.snapshot }} ({{ e.train.hosts }} hosts, {{ e.train.spam }} spam);
tested on {{ e.test.snapshot if e.get("test") else "-" }} ({{ e.test.hosts if e.get("test") else 0 }} hosts,
{{ e.test.spam if e.get("test") else 0 }} spam).</p>{% endif %}
{% if figure %}<figure><img src="{{ figure }}" alt="ROC curve"><figcaption>ROC curve on the test hosts</figcaption>
</figure>{% endif %}
<div class="tables">
{% for title, key, col in [("AUC by feature group", "auc_by_group", "feature group"),
                          ("AUC by spam family", "auc_by_family", "family")] %}
{% if e.get(key) %}<table class="grid small"><caption>{{ title }}</caption><thead><tr><th>{{ col }}</th><th>AUC</th>
</tr></thead><tbody>{% for k, v in e[key].items() %}<tr><td>{{ k }}</td><td class="num">{{ v|num }}</td></tr>
{% endfor %}</tbody></table>{% endif %}{% endfor %}
{% if e.get("ensemble") %}<table class="grid small"><caption>Ensemble</caption><thead><tr><th>model</th>
<th>weight</th></tr></thead><tbody>{% for m in e.ensemble %}<tr><td>{{ m.model }}</td><td class="num">
{{ m.weight|num }}</td></tr>{% endfor %}</tbody></table>{% endif %}
</div>
"""

LINKS = """
{% for title, src in figures %}<figure><img src="{{ src }}" alt="{{ title }}"><figcaption>{{ title }}</figcaption>
</figure>{% endfor %}
{% if summary %}<details><summary>host-graph summary (summary.json)</summary><pre>{{ summary|tojson(indent=1) }}</pre>
</details>{% endif %}
"""

CSV_TABLE = """
{% if rows %}<table class="grid small sortable"><thead><tr>{% for k in rows[0] %}<th>{{ k }}</th>{% endfor %}</tr>
</thead><tbody>{% for r in rows %}<tr>{% for v in r.values() %}<td class="num">{{ v }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table>{% endif %}
{% if figure %}<figure><img src="{{ figure }}" alt="quilt sweep"><figcaption>Figure 3</figcaption></figure>{% endif %}
"""


def write_report(stages: dict[str, dict[str, Any]], outdir: Path, *, title: str, max_items: int = 50,
                 max_hosts: int = 5000, plugins: Any = None) -> tuple[Path, dict[str, int]]:
    """Render the report of ``stages`` (run.json's ``stages``) into ``outdir``: the HTML file's
    path and counts of what it shows and what it leaves out."""
    assets = outdir / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    for name in STATIC_FILES:
        (assets / name).write_bytes((resources.files("spamflow.report") / "static" / name).read_bytes())
    gathered = gather(stages, max_items, max_hosts)
    sections = build_sections(stages, assets, gathered, plugins)
    html = environment().get_template("report.html.j2").render(
        sections=sections, title=title, version=spamflow.__version__,
        generated=datetime.now(UTC).isoformat(timespec="seconds"))
    path = outdir / "index.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(path)
    counts = {"sections": len(sections), "hosts_shown": len(gathered.hosts.rows),
              "hosts_not_shown": gathered.hosts.hidden, "quilts_shown": len(gathered.quilts),
              "clusters_shown": len(gathered.clusters), "campaigns_shown": len(gathered.campaigns)}
    counts.update({f"{k}_not_shown": v for k, v in gathered.hidden.items()})
    return path, counts
