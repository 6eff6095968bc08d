"""The spin detector's part of the run report: each campaign with its copies, promoted sites
and the immutables every copy shares (evidence and the "Spin campaigns" section), and its
headline columns of the host table.  The immutables come from spin's own work folder."""

# ruff: noqa: E501 - the fragments' long lines are HTML whose line breaks would show on the page

from __future__ import annotations

from pathlib import Path
from typing import Any

from spamflow import hookimpl
from spamflow.report import Evidence, EvidenceSet, FiredRule, HostColumns, ReportSection

STAGE = "spin"
KIND = "campaign"
IMMUTABLES_SHOWN = 60

CAMPAIGN = """
{% macro campaign(c, immutables, shared_total) -%}
<p>{{ c.snapshot }} &middot; {{ c.articles }} articles ({{ c.spun_articles }} spun) on {{ c.hosts }} hosts,
{{ c.domains }} domains</p>
{% if c.promoted_sites %}<p>Promoted sites: {% for p in c.promoted_sites %}<b>{{ p.host }}</b> ({{ p.pages }} pages){{ ", " if not loop.last }}{% endfor %}</p>
{% else %}<p>Promoted sites: none found.</p>{% endif %}
<p>Immutables shared by every copy ({{ shared_total }}{% if shared_total > immutables|length %}, first {{ immutables|length }} shown{% endif %}):
<span class="immutables">{% for w in immutables %}<code>{{ w }}</code> {% endfor %}</span></p>
<table class="grid small"><thead><tr><th>copy</th><th>host</th></tr></thead><tbody>
{% for p in c.pages %}<tr><td><a href="{{ p.url }}">{{ p.url }}</a></td><td>{{ p.host }}</td></tr>{% endfor %}
</tbody></table>
{%- endmacro %}
"""


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


def campaign_evidence(record: dict[str, Any], max_items: int) -> EvidenceSet:
    """Spin campaigns with their copies, promoted sites and the immutables every copy shares."""
    from spamflow.report.sections import environment, jsonl, macros

    campaigns = list(jsonl(record["outputs"]["campaigns"], "campaign"))
    shown = campaigns[:max_items]
    work = Path(record["outputs"].get("work", ""))
    by_snapshot: dict[str, set[int]] = {}
    for c in shown:
        by_snapshot.setdefault(c["snapshot"], set()).update(p["doc_id"] for p in c["pages"])
    immutables: dict[int, list[str]] = {}
    for snapshot, ids in by_snapshot.items():
        immutables.update(_immutables(work, snapshot, ids))
    macro = macros(environment(), CAMPAIGN).campaign
    out = []
    for c in shown:
        lists = [immutables[p["doc_id"]] for p in c["pages"] if p["doc_id"] in immutables]
        common = set(lists[0]).intersection(*map(set, lists[1:])) if lists else set()
        ordered = [w for w in dict.fromkeys(lists[0])] if lists else []
        shared = [w for w in ordered if w in common]
        html = str(macro(c, shared[:IMMUTABLES_SHOWN], len(shared)))
        hosts = sorted({(c["snapshot"], p["host"]) for p in c["pages"]}
                       | {(c["snapshot"], p["host"]) for p in c["promoted_sites"]})
        out.append(Evidence(f"{KIND}:{c['campaign']}", KIND,
                            f"spin campaign {c['campaign']} ({c['articles']} articles on {c['hosts']} hosts)",
                            html, hosts))
    return EvidenceSet(KIND, out, len(campaigns), data=record.get("counts") or {})


def not_campaigns(counts: dict[str, Any]) -> str:
    """The line saying what was kept out of campaigns (docs/spin.md, "Campaigns are not the
    mundane"), empty when the stage's counts predate the rules or nothing was."""
    dropped = counts.get("clusters_dropped_few_domains", 0)
    excluded = {reason: counts.get(f"paired_pages_excluded_{reason}", 0)
                for reason in ("http_error", "soft_404", "boilerplate")}
    if not dropped and not any(excluded.values()):
        return ""
    pages = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in excluded.items() if n)
    return (f"<p>Not campaigns: {dropped} cluster{'s' * (dropped != 1)} of copies on one registered domain "
            f"(<code>dropped_clusters</code>){f'; paired pages kept out as error or boilerplate pages: {pages} (<code>excluded_pages</code>)' if pages else ''}.</p>")


@hookimpl
def spamflow_report_evidence_kinds() -> dict[str, str]:
    return {KIND: "campaigns"}


@hookimpl
def spamflow_report_evidence(stage: str, record: dict[str, Any], max_items: int) -> EvidenceSet | None:
    return campaign_evidence(record, max_items) if stage == STAGE else None


@hookimpl
def spamflow_report_host_columns(stage: str) -> HostColumns | None:
    if stage != STAGE:
        return None
    return HostColumns(("campaign_pages", "max_campaign_hosts", "is_promoted"),
                       FiredRule("campaign_pages", 0, "campaign pages"))


@hookimpl
def spamflow_report_section(stage: str, evidence: EvidenceSet | None) -> ReportSection | None:
    if stage != STAGE:
        return None
    from spamflow.report.sections import evidence_list

    html = evidence_list(evidence.items, evidence.hidden, "campaigns") if evidence else ""
    note = not_campaigns(evidence.data) if evidence and isinstance(evidence.data, dict) else ""
    return ReportSection("spin", "Spin campaigns", (html or "<p>No campaign found.</p>") + note, order=40)
