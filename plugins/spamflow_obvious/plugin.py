"""The hook implementations of ``spamflow_obvious``, apart from the package so that its MapReduce
and pure modules import without spamflow (a Spark or Hadoop worker gets only this package)."""

from collections.abc import Callable

from spamflow import hookimpl
from spamflow.detector import Detector
from spamflow_obvious import __version__
from spamflow_obvious.report_section import spamflow_report_host_columns  # the report's part of this detector

__all__ = ["__version__", "spamflow_register_detectors"]
__all__ += ["spamflow_report_host_columns"]


@hookimpl
def spamflow_register_detectors(register: Callable[[type[Detector]], None]) -> None:
    from spamflow_obvious.features import ObviousDetector

    register(ObviousDetector)
