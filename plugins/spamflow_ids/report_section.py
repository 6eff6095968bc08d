"""The ids detector's part of the run report: each network with the identifiers that join it
and, for each identifier, the pages of each host that carry it (evidence and the "Shared
operator identifiers" section), the platform identifiers dropped, and its host-table columns."""

# ruff: noqa: E501 - the fragments' long lines are HTML whose line breaks would show on the page

from __future__ import annotations

from typing import Any

from spamflow import hookimpl
from spamflow.report import Evidence, EvidenceSet, FiredRule, HostColumns, ReportSection

STAGE = "ids"
KIND = "network"
PLATFORM_SHOWN = 20

NETWORK = """
{% macro network(n) -%}
<p>{{ n.snapshot }} &middot; {{ n.hosts|length }} hosts on {{ n.domains|length }} registered domains
({{ n.pages|num }} pages), joined by {{ n.ids|length }} shared identifier{{ "s" if n.ids|length != 1 }}</p>
<table class="grid small"><thead><tr><th>identifier</th><th>host</th><th>pages with it</th><th>e.g.</th></tr></thead><tbody>
{% for ident in n.ids %}{% for host, e in n.evidence[ident].items() %}<tr><td>{% if loop.first %}<code>{{ ident }}</code>{% endif %}</td>
<td>{{ host }}</td><td>{{ e.pages|num }}</td><td>{% for doc, url in e.examples %}<a href="{{ url }}">{{ url }}</a>{{ "<br>"|safe if not loop.last }}{% endfor %}</td></tr>
{% endfor %}{% endfor %}</tbody></table>
{%- endmacro %}
"""

PLATFORM = """
{% macro platform(rows, total, max_domains) -%}
<p>{{ total|num }} identifier{{ "s" if total != 1 }} seen on more than {{ max_domains }} registered domains {{ "were" if total != 1 else "was" }}
taken for a platform's (a theme's, a widget's, a public shortlink's) and dropped{% if total > rows|length %}; the {{ rows|length }} on most domains{% endif %}:</p>
<table class="grid small"><thead><tr><th>identifier</th><th>snapshot</th><th>domains</th><th>hosts</th></tr></thead><tbody>
{% for r in rows %}<tr><td><code>{{ r.id }}</code></td><td>{{ r.snapshot }}</td><td>{{ r.domains|num }}</td><td>{{ r.hosts|num }}</td></tr>{% endfor %}
</tbody></table>
{%- endmacro %}
"""


def network_evidence(record: dict[str, Any], max_items: int) -> EvidenceSet:
    """The networks, largest first, each with its identifiers and the pages that carry them."""
    from spamflow.report.sections import environment, jsonl, macros

    networks = list(jsonl(record["outputs"]["networks"], "network"))
    macro = macros(environment(), NETWORK).network
    items = [Evidence(f"{KIND}:{n['network']}", KIND,
                      f"network {n['network']} ({len(n['hosts'])} hosts, {len(n['domains'])} domains, "
                      f"{len(n['ids'])} shared ids)",
                      str(macro(n)), [(n["snapshot"], h) for h in n["hosts"]])
             for n in networks[:max_items]]
    return EvidenceSet(KIND, items, len(networks))


@hookimpl
def spamflow_report_evidence_kinds() -> dict[str, str]:
    return {KIND: "networks"}


@hookimpl
def spamflow_report_evidence(stage: str, record: dict[str, Any], max_items: int) -> EvidenceSet | None:
    return network_evidence(record, max_items) if stage == STAGE else None


@hookimpl
def spamflow_report_host_columns(stage: str) -> HostColumns | None:
    if stage != STAGE:
        return None
    return HostColumns(("affiliate_network_domains", "network_domains", "domains_sharing"),
                       FiredRule("affiliate_network_domains", 1,
                                 "in a network of 2+ registered domains sharing an affiliate id or shortlink"))


@hookimpl
def spamflow_report_section(stage: str, record: dict[str, Any], evidence: EvidenceSet | None) -> ReportSection | None:
    if stage != STAGE:
        return None
    from markupsafe import escape

    from spamflow.report.sections import environment, evidence_list, jsonl, macros

    counts = record.get("counts", {})
    intro = (f"<p>{counts.get('ids', 0)} operator identifiers on {counts.get('pages', 0)} pages, "
             f"{counts.get('shared_ids', 0)} of them on two or more registered domains; "
             f"{counts.get('networks', 0)} networks ({counts.get('hosts_in_networks', 0)} hosts); "
             f"{counts.get('hosts_fired', 0)} hosts fired (a network joined by affiliate ids or shortlinks, not "
             "by analytics or AdSense ids alone).</p>")
    html = evidence_list(evidence.items, evidence.hidden, "networks") if evidence and evidence.items else \
        "<p>No network found.</p>"
    platform_path = record["outputs"].get("platform_ids")
    if platform_path:
        rows = sorted(jsonl(platform_path, "platform id"), key=lambda r: (-r["domains"], r["snapshot"], r["id"]))
        if rows:
            max_domains = escape(str(record.get("params", {}).get("max_domains", "max_domains")))
            html += str(macros(environment(), PLATFORM).platform(rows[:PLATFORM_SHOWN], len(rows), max_domains))
    return ReportSection("ids", "Shared operator identifiers", intro + html, order=45)
