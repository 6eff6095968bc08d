"""The hook implementations of ``spamflow_ids``, apart from the package so that its MapReduce
and pure modules import without spamflow (a Spark or Hadoop worker gets only this package)."""

from collections.abc import Callable

from spamflow import hookimpl
from spamflow.detector import Detector
from spamflow_ids import __version__
from spamflow_ids.report_section import (  # the report's part of this detector
    spamflow_report_evidence,
    spamflow_report_evidence_kinds,
    spamflow_report_host_columns,
    spamflow_report_section,
)

__all__ = ["__version__", "spamflow_register_detectors"]
__all__ += ["spamflow_report_evidence", "spamflow_report_evidence_kinds", "spamflow_report_host_columns",
            "spamflow_report_section"]


@hookimpl
def spamflow_register_detectors(register: Callable[[type[Detector]], None]) -> None:
    from spamflow_ids.detector import IdsDetector

    register(IdsDetector)
