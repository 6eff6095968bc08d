"""What a stage adds to the report's host table, returned by ``spamflow_report_host_columns``:
which columns of its ``hosts`` output are its headline, when it "fired" on a host, and, for a
classifier, its verdict per host."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spamflow.report.evidence import HostKey


@dataclass(frozen=True)
class FiredRule:
    """The stage fired on a host when ``column`` of its ``hosts`` table is above ``above``;
    ``text`` says so in the table's introduction (``quilted pages``)."""

    column: str
    above: float
    text: str


@dataclass(frozen=True)
class HostScore:
    """A classifier's verdict on one host; ``fired`` (the detectors its evidence names) is
    merged into the row's fired list, None leaves the list as the detectors' rules made it."""

    score: float | None
    label: str | None
    true_label: str | None = None
    evidence: dict[str, Any] | None = None
    fired: list[str] | None = None


@dataclass(frozen=True)
class HostColumns:
    """One stage's part of the host table.

    ``headline``: columns of the stage's ``hosts`` Parquet output shown as ``<stage>.<column>``
    (those present; None shows its first three numeric columns).  ``fired``: when the stage
    fired on a host.  ``scores``: a classifier's verdicts; any stage giving them turns the
    table into a ranking by score."""

    headline: tuple[str, ...] | None = None
    fired: FiredRule | None = None
    scores: dict[HostKey, HostScore] | None = None
    names: dict[str, str] | None = None
    """Human names of headline columns for the table's header (``AVG_52``: ``anchor text
    fraction, mean over pages``); a column without one is named by its declared description
    (:func:`column_names`), else by itself."""


def column_names(record: dict[str, Any], declared: HostColumns | None) -> dict[str, str]:
    """What the host table calls each column of a stage's per-host table: the plugin's
    ``names``, else the description the stage declares for the feature (``host_tables``)."""
    spec = (record.get("host_tables") or {}).get(host_table_output(record)) or {}
    names = {name: str(f["description"]) for name, f in (spec.get("features") or {}).items()
             if f.get("description")}
    return names | dict((declared.names if declared else None) or {})


def host_table_output(record: dict[str, Any]) -> str:
    """The output the host table shows for a stage: its first declared per-host table keyed by
    ``snapshot`` (``host_tables`` of its record), else the one named ``hosts``."""
    for output, spec in (record.get("host_tables") or {}).items():
        if spec.get("key", ["snapshot"])[0] == "snapshot":
            return str(output)
    return "hosts"


def declared_columns(record: dict[str, Any]) -> HostColumns | None:
    """How a stage whose plugin answers no ``spamflow_report_host_columns`` appears, from its
    declared per-host table: its evidence features (else its first three declared features) as
    the headline, fired when the first evidence feature is above zero.  None if it declares none."""
    spec = (record.get("host_tables") or {}).get(host_table_output(record))
    if not spec or not spec.get("features"):
        return None
    features = spec["features"]
    evidence = [name for name, f in features.items() if f.get("evidence")]
    headline = tuple(evidence or list(features)[:3])
    first = features[evidence[0]] if evidence else None
    fired = FiredRule(evidence[0], first.get("above", 0), first["description"]) if first else None
    return HostColumns(headline, fired)
