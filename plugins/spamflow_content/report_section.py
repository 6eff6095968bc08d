"""What the content detector shows in the run report: its headline columns of the host table."""

from __future__ import annotations

from spamflow import hookimpl
from spamflow.report import HostColumns

STAGE = "content"


@hookimpl
def spamflow_report_host_columns(stage: str) -> HostColumns | None:
    return HostColumns(("AVG_52", "AVG_54")) if stage == STAGE else None
