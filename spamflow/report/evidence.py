"""What a person can judge: one piece of evidence (a host's row, a quilt beside its sources, a
cluster, a campaign ...), and the set of them one stage contributes through
``spamflow_report_evidence``.  The report shows each under its stage's section and links it
from the host table; the judging page shows them one at a time."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

HostKey = tuple[str, str]
"""(snapshot, host)."""
HOST_KIND = "host"
"""The report frame's own kind of evidence: one item per host, from the host table."""


@dataclass
class Evidence:
    """One thing a person can judge: its key (``<kind>:…``, unique in the report), its kind, a
    title, an HTML fragment (escape your own data) and the hosts it implicates (the host table
    links each of them to it)."""

    key: str
    kind: str
    title: str
    html: str
    hosts: list[HostKey] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return "ev-" + re.sub(r"[^A-Za-z0-9_-]+", "-", self.key)


@dataclass
class EvidenceSet:
    """The evidence one stage contributes: the ``items`` shown (the first ``max_items``) out of
    ``total`` found; ``data`` is the plugin's own, handed back to its ``spamflow_report_section``
    (e.g. a table read once for both)."""

    kind: str
    items: list[Evidence]
    total: int
    data: Any = None

    @property
    def hidden(self) -> int:
        """Found but not shown (counted in the report, never silently dropped)."""
        return max(0, self.total - len(self.items))


def evidence_kinds(plugins: Any) -> dict[str, str]:
    """Every kind of evidence, with its plural: hosts first, then the kinds the plugins declare
    (``spamflow_report_evidence_kinds``) in the order the plugins were loaded (built-ins first).
    ``plugins``: a plugin manager (:class:`spamflow.plugins.SpamflowPlugins`)."""
    kinds = {HOST_KIND: "hosts"}
    for declared in reversed(plugins.pm.hook.spamflow_report_evidence_kinds()):  # pluggy calls the last first
        for kind, plural in (declared or {}).items():
            kinds.setdefault(kind, plural)
    return kinds
