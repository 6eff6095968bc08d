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
