"""When a detector "fires" (docs/fired.md) is what the detector declares: the first evidence
feature of its per-host table and its ``above``.  The ensemble's evidence and the report's
host table read that one declaration, so a third-party detector takes part by declaring it,
and the built-ins keep the rules they had (issue 39 item 7)."""

from __future__ import annotations

import math

from spamflow.per_host import HostFeature, PerHostTable
from spamflow.plugins import build_plugins
from spamflow.report.host_columns import HostColumns, declared_columns
from spamflow_ensemble.evidence import FIRED, declared_by_classes, fired_detectors, firing_rules


def _classes() -> dict:
    return {d.name: d.cls for d in build_plugins().detectors.infos()}


def test_the_built_in_detectors_declare_the_rules_the_ensemble_had():
    rules = firing_rules(declared_by_classes(_classes()))
    assert {k: v for k, v in rules.items() if k in FIRED} == FIRED
    # obvious, content, links: features only, never a firing
    assert not {"obvious", "content", "links"} & set(rules)


def test_the_reports_built_in_fired_rules_are_the_declared_ones():
    """The report's hooks that state a FiredRule state the declared one (column and threshold)."""
    plugins = build_plugins()
    rules = firing_rules(declared_by_classes(_classes()))
    for name in _classes():
        answers = [a for a in plugins.pm.hook.spamflow_report_host_columns(stage=name, record={}) if a]
        stated = [a.fired for a in answers if isinstance(a, HostColumns) and a.fired is not None]
        if stated:
            assert (stated[0].column, stated[0].above) == rules[name], name
        else:
            assert name not in rules, name


def test_a_third_party_detector_fires_by_its_declared_evidence_feature():
    """No dict to edit: a detector declaring ``HostFeature(..., evidence=True, above=4)`` fires in
    the ensemble's evidence and in the report's host table on a host whose value is above 4,
    and not at 4 (a hand-worked example)."""
    table = PerHostTable("hosts", (HostFeature("pages", "pages of the host"),
                                   HostFeature("doorways", "doorway pages", evidence=True, above=4)))
    declared = {"doorway": {table.output: table.to_json()}, "quilt": {}}
    rules = firing_rules(declared)
    assert rules == {"doorway": ("doorways", 4.0), "quilt": FIRED["quilt"]}  # an old quilt record: its built-in rule
    key = ("2026-01", "a.example")
    row = {"doorway.pages": 9.0, "doorway.doorways": 5.0, "quilt.quilted_pages": 0.0}
    assert fired_detectors(row, key, {}, rules) == {"doorway": {"pages": 9, "doorways": 5}}
    assert fired_detectors({**row, "doorway.doorways": 4.0}, key, {}, rules) == {}
    assert fired_detectors({**row, "doorway.doorways": math.nan}, key, {}, rules) == {}
    rule = declared_columns({"host_tables": declared["doorway"]}).fired  # the report's host table
    assert (rule.column, rule.above) == ("doorways", 4)
