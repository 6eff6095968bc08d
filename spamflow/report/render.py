"""Write the report: ``index.html`` and an ``assets/`` folder (figures, CSS, the table script),
opening from file:// with nothing fetched from a network.

The frame knows no detector: it shows the run summary and the host table, and asks the plugins
(``spamflow_report_*`` hooks, :mod:`spamflow.hookspecs`) for each finished stage's evidence,
host-table columns and sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import spamflow
from spamflow.atomic import write_text_atomic
from spamflow.errors import SpamflowError
from spamflow.report.evidence import HOST_KIND, Evidence, EvidenceSet, evidence_kinds
from spamflow.report.host_columns import HostColumns, declared_columns
from spamflow.report.host_table import HostTable, build_host_table
from spamflow.report.section import ReportSection
from spamflow.report.sections import environment, host_evidence, host_links

STATIC_FILES = ("report.css", "report.js")


@dataclass
class Gathered:
    """Everything judgeable in a run, in report order."""

    hosts: HostTable
    sets: dict[str, EvidenceSet] = field(default_factory=dict)
    """Each stage's evidence, by stage, in the order of the kinds the plugins declare."""
    kinds: dict[str, str] = field(default_factory=dict)
    """Every kind of evidence the plugins declare, with its plural, in report order."""

    def evidence(self) -> list[Evidence]:
        """The stages' evidence (not the hosts'), in report order."""
        return [e for s in self.sets.values() for e in s.items]

    def items(self) -> list[Evidence]:
        return host_evidence(self.hosts, environment()) + self.evidence()


def _plugins(plugins: Any) -> Any:
    if plugins is None:
        from spamflow.plugins import get_plugins

        return get_plugins()
    return plugins


def answers(plugins: Any, hook: str, expected: type, **kwargs: Any) -> list[tuple[str, Any]]:
    """Each plugin's answer to the report ``hook`` other than None, as ``(plugin, answer)`` in
    pluggy's calling order (the last registered first).  An answer of another type is an error
    naming the plugin, the hook and the stage."""
    found = []
    for impl in reversed(getattr(plugins.pm.hook, hook).get_hookimpls()):
        answer = impl.function(**{name: kwargs[name] for name in impl.argnames})
        if answer is None:
            continue
        if not isinstance(answer, expected):
            raise SpamflowError(f"report: plugin {impl.plugin_name!r} returned a {type(answer).__name__} from {hook} "
                                f"for the stage {kwargs.get('stage')!r}; expected a {expected.__name__} or None")
        found.append((impl.plugin_name, answer))
    return found


def finished(stages: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The stages that completed and name their outputs."""
    return {name: s for name, s in stages.items() if s.get("complete", True) and "outputs" in s}


def gather(stages: dict[str, dict[str, Any]], max_items: int, max_hosts: int, plugins: Any = None) -> Gathered:
    """Every finished stage's evidence (the first ``max_items`` of each) and the host table."""
    plugins = _plugins(plugins)
    done = finished(stages)
    kinds = evidence_kinds(plugins)
    found: list[tuple[str, EvidenceSet]] = []
    declared: dict[str, HostColumns] = {}
    for name, record in done.items():
        results = answers(plugins, "spamflow_report_evidence", EvidenceSet, stage=name, record=record, stages=done,
                          max_items=max_items)
        if len(results) > 1:
            raise SpamflowError(f"report: plugins {sorted(p for p, _ in results)} all returned evidence for the "
                                f"stage {name!r}; spamflow_report_evidence must return None for a stage that is not "
                                "its plugin's")
        found += [(name, r) for _, r in results]
        columns = [c for _, c in answers(plugins, "spamflow_report_host_columns", HostColumns, stage=name,
                                         record=record)] or [c for c in (declared_columns(record),) if c]
        if columns:
            declared[name] = columns[0]
    order = list(kinds)
    found.sort(key=lambda item: order.index(item[1].kind) if item[1].kind in kinds else len(order))
    sets = dict(found)
    hosts = build_host_table(done, host_links([e for s in sets.values() for e in s.items]), max_hosts, declared)
    return Gathered(hosts, sets, kinds)


def build_sections(stages: dict[str, dict[str, Any]], assets: Path, gathered: Gathered,
                   plugins: Any = None) -> list[ReportSection]:
    """The host table (the findings lead), the run summary, then every plugin's sections by
    ``order`` (ties in run order)."""
    env = environment()
    frag = env.get_template("fragments.html.j2").module
    sections = [ReportSection("hosts", "Hosts", env.get_template("hosts.html.j2").render(table=gathered.hosts)),
                ReportSection("summary", "Run summary", str(frag.summary(stages, "")))]  # type: ignore[attr-defined]
    added: list[ReportSection] = []
    for name, record in finished(stages).items():
        added += [section for _, section in answers(_plugins(plugins), "spamflow_report_section", ReportSection,
                                                    stage=name, record=record, assets=assets,
                                                    evidence=gathered.sets.get(name))]
    sections += sorted(added, key=lambda s: s.order)
    anchors = [s.anchor for s in sections]
    duplicated = sorted({a for a in anchors if anchors.count(a) > 1})
    if duplicated:
        raise SpamflowError(f"report: two sections share the anchor(s) {duplicated}; a plugin's "
                            "spamflow_report_section must return a unique anchor")
    return sections


def write_report(stages: dict[str, dict[str, Any]], outdir: Path, *, title: str, max_items: int = 50,
                 max_hosts: int = 5000, plugins: Any = None) -> tuple[Path, dict[str, int]]:
    """Render the report of ``stages`` (run.json's ``stages``) into ``outdir``: the HTML file's
    path and counts of what it shows and what it leaves out.  ``plugins``: the plugin manager
    whose hooks build the sections (default: the CLI's, :func:`spamflow.plugins.get_plugins`)."""
    plugins = _plugins(plugins)
    assets = outdir / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    for name in STATIC_FILES:
        (assets / name).write_bytes((resources.files("spamflow.report") / "static" / name).read_bytes())
    gathered = gather(stages, max_items, max_hosts, plugins)
    sections = build_sections(stages, assets, gathered, plugins)
    html = environment().get_template("report.html.j2").render(
        sections=sections, title=title, version=spamflow.__version__,
        generated=datetime.now(UTC).isoformat(timespec="seconds"))
    path = outdir / "index.html"
    write_text_atomic(path, html)
    counts = {"sections": len(sections), "hosts_shown": len(gathered.hosts.rows),
              "hosts_not_shown": gathered.hosts.hidden}
    plurals = {**gathered.kinds, **{s.kind: s.kind + "s" for s in gathered.sets.values()
                                    if s.kind not in gathered.kinds}}
    plurals.pop(HOST_KIND)
    for kind, plural in plurals.items():
        counts[f"{plural}_shown"] = sum(len(s.items) for s in gathered.sets.values() if s.kind == kind)
    for s in gathered.sets.values():
        key = f"{plurals[s.kind]}_not_shown"
        counts[key] = counts.get(key, 0) + s.hidden
    return path, counts
