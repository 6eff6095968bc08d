"""The quilt detector's part of the run report: each quilted page beside its sources with the
shared passages highlighted (evidence and the "Quilted pages" section), the parameter sweep's
Table 1 and Figure 3, and its headline columns of the host table."""

# ruff: noqa: E501 - the fragments' long lines are HTML whose line breaks would show on the page

from __future__ import annotations

import heapq
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spamflow import hookimpl
from spamflow.report import Evidence, EvidenceSet, FiredRule, HostColumns, ReportSection

STAGE = "quilt"
SWEEP_STAGE = "quilt_sweep"
KIND = "quilt"
MAX_TEXT_WORDS = 2000
"""Words of a page shown beside a quilt (the rest is cut, and the cut is said)."""
SOURCE_CONTEXT = 12
"""Words shown on either side of what a source shares with the quilt; the rest of the source
is left out and counted (``passages.elide``), which keeps the demo's report under 1 MB."""

QUILT = """
{% macro quilt(q, page_runs, sources) -%}
<p><a href="{{ q.url }}">{{ q.url }}</a> ({{ q.snapshot }}) &middot; patchfrac <b>{{ "%.3f"|format(q.patchfrac) }}</b>
({{ q.n_patch_grams }} of {{ q.n_grams }} grams) &middot; {{ q.sources|length }} sources &middot;
linked source fraction {{ "%.2f"|format(q.linked_source_fraction) }}</p>
<div class="sidebyside">
<div class="col page"><h4>quilted page</h4><p class="text">{% for mark, text in page_runs %}{% if mark >= 0 %}<mark class="s{{ mark % 8 }}" title="source {{ mark + 1 }}">{{ text }}</mark>{% else %}{{ text }}{% endif %} {% endfor %}</p></div>
<div class="col sources">
{% for s in sources %}
<div class="source"><h4><span class="swatch s{{ loop.index0 % 8 }}">{{ loop.index }}</span> <a href="{{ s.url }}">{{ s.url }}</a>
<small>{{ s.grams }} new patch grams</small></h4>
<p class="text">{% for mark, text in s.runs %}{% if mark >= 0 %}<mark class="s{{ s.index % 8 }}">{{ text }}</mark>{% elif mark == -2 %}<span class="quilt-cut" title="{{ text }} words this source does not share with the page, left out">[… {{ text }} words …]</span>{% else %}{{ text }}{% endif %} {% endfor %}</p></div>
{% endfor %}
</div></div>
{%- endmacro %}
"""

CSV_TABLE = """
{% if rows %}<table class="grid small sortable"><thead><tr>{% for k in rows[0] %}<th>{{ k }}</th>{% endfor %}</tr>
</thead><tbody>{% for r in rows %}<tr>{% for v in r.values() %}<td class="num">{{ v }}</td>{% endfor %}</tr>
{% endfor %}</tbody></table>{% endif %}
{% if figure %}<figure><img src="{{ figure }}" alt="quilt sweep"><figcaption>Figure 3</figcaption></figure>{% endif %}
"""


def quilt_evidence(stages: dict[str, dict[str, Any]], max_items: int) -> EvidenceSet:
    """The quilts with the highest patchfrac, each beside its sources, shared k-grams highlighted."""
    from spamflow.report.sections import environment, jsonl, macros, pages_by_id
    from spamflow_quilt.passages import elide, runs, source_marks

    record = stages[STAGE]
    total = 0

    def counted(lines: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        nonlocal total
        for line in lines:
            total += 1
            yield line

    shown = heapq.nsmallest(max_items, counted(jsonl(record["outputs"]["quilts"], "quilt")),
                            key=lambda q: (-q["patchfrac"], q["snapshot"], q["doc_id"]))
    ids = {q["doc_id"] for q in shown} | {s["doc_id"] for q in shown for s in q["sources"]}
    pages = pages_by_id(stages["parse"]["outputs"]["pages"], ids, ["words"])
    k = int(record["params"].get("k", 5))
    macro = macros(environment(), QUILT).quilt
    out = []
    for q in shown:
        words = list(pages.get(q["doc_id"], {}).get("words") or [])[:MAX_TEXT_WORDS]
        source_words = [list(pages.get(s["doc_id"], {}).get("words") or [])[:MAX_TEXT_WORDS] for s in q["sources"]]
        owner, marks = source_marks(words, source_words, k)
        sources = [{"url": s["url"], "grams": s["grams"], "index": i,
                    "runs": elide(runs(sw, [i if m else -1 for m in mark]), SOURCE_CONTEXT)}
                   for i, (s, sw, mark) in enumerate(zip(q["sources"], source_words, marks))]
        html = str(macro(q, runs(words, owner), sources))
        out.append(Evidence(f"{KIND}:{q['snapshot']}:{q['doc_id']}", KIND, f"quilt {q['url']} ({q['snapshot']})",
                            html, [(q["snapshot"], q["host"])]))
    return EvidenceSet(KIND, out, total)


def quilt_section(record: dict[str, Any], evidence: EvidenceSet | None) -> ReportSection:
    from spamflow.report.sections import evidence_list

    items = evidence.items if evidence else []
    hidden = evidence.hidden if evidence else 0
    intro = (f"<p>{record.get('counts', {}).get('quilted_pages', len(items))} quilted pages, "
             "highest patchfrac first. Each word of the page is coloured by the first source (greedy order) "
             "sharing a k-gram that covers it; in each source, the words it shares with the page.</p>")
    return ReportSection("quilts", "Quilted pages", intro + evidence_list(items, hidden, "quilts"), order=20)


def sweep_section(record: dict[str, Any], assets: Path) -> ReportSection:
    from spamflow.report.sections import copy_asset, environment, read_csv_rows

    sweep = record["outputs"]
    figure = copy_asset(sweep.get("figure3", ""), assets, "quilt_sweep_figure3.png")
    rows = read_csv_rows(sweep["table1"]) if Path(sweep.get("table1", "")).is_file() else []
    return ReportSection("quilt-sweep", "Quilt parameter sweep (Table 1, Figure 3)",
                         environment().from_string(CSV_TABLE).render(rows=rows, figure=figure), order=60)


@hookimpl
def spamflow_report_evidence_kinds() -> dict[str, str]:
    return {KIND: "quilts"}


@hookimpl
def spamflow_report_evidence(stage: str, stages: dict[str, dict[str, Any]], max_items: int) -> EvidenceSet | None:
    if stage != STAGE or "parse" not in stages:
        return None
    return quilt_evidence(stages, max_items)


@hookimpl
def spamflow_report_host_columns(stage: str) -> HostColumns | None:
    if stage != STAGE:
        return None
    return HostColumns(("quilted_pages", "quilted_fraction"), FiredRule("quilted_pages", 0, "quilted pages"))


@hookimpl
def spamflow_report_section(stage: str, record: dict[str, Any], assets: Path,
                            evidence: EvidenceSet | None) -> ReportSection | None:
    if stage == STAGE:
        return quilt_section(record, evidence)
    if stage == SWEEP_STAGE:
        return sweep_section(record, assets)
    return None
