"""The hook implementations of ``spamflow_content``, apart from the package so that its pure
modules import without the plugin machinery."""

from collections.abc import Callable

from spamflow import hookimpl
from spamflow.detector import Detector
from spamflow_content import __version__
from spamflow_content.report_section import spamflow_report_host_columns  # the report's part of this detector

__all__ = ["__version__", "spamflow_register_detectors"]
__all__ += ["spamflow_report_host_columns"]


@hookimpl
def spamflow_register_detectors(register: Callable[[type[Detector]], None]) -> None:
    from spamflow_content.detector import ContentDetector

    register(ContentDetector)
