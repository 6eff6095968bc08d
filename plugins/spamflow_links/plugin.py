"""The hook implementation of ``spamflow_links``, apart from the package so that its pure
modules import without spamflow."""

from collections.abc import Callable

from spamflow import hookimpl
from spamflow.detector import Detector
from spamflow_links import __version__
from spamflow_links.report_section import (  # the report's part of this detector
    spamflow_report_host_columns,
    spamflow_report_section,
)

__all__ = ["__version__", "spamflow_register_detectors", "spamflow_table_transforms"]
__all__ += ["spamflow_report_host_columns", "spamflow_report_section"]


@hookimpl
def spamflow_register_detectors(register: Callable[[type[Detector]], None]) -> None:
    from spamflow_links.detector import LinksDetector
    from spamflow_links.hostgraph_input import LinksHostgraphDetector

    register(LinksDetector)
    register(LinksHostgraphDetector)


@hookimpl
def spamflow_table_transforms() -> list[Callable[[dict], dict]]:
    from spamflow_links.transforms import table_transform

    return [table_transform]
