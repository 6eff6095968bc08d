"""What the obvious features shows in the run report: its headline columns of the host table."""

from __future__ import annotations

from spamflow import hookimpl
from spamflow.report import HostColumns

STAGE = "obvious"


@hookimpl
def spamflow_report_host_columns(stage: str) -> HostColumns | None:
    return HostColumns(("number_of_pages",)) if stage == STAGE else None
