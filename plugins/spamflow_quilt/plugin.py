"""The hook implementations of ``spamflow_quilt``, apart from the package so that its MapReduce
and pure modules import without spamflow (a Spark or Hadoop worker gets only this package)."""

import argparse
from collections.abc import Callable

from spamflow import hookimpl
from spamflow.detector import Detector
from spamflow_quilt import __version__
from spamflow_quilt.report_section import (  # the report's part of this detector
    spamflow_report_evidence,
    spamflow_report_evidence_kinds,
    spamflow_report_host_columns,
    spamflow_report_section,
)

__all__ = ["__version__", "spamflow_register_commands", "spamflow_register_detectors"]
__all__ += ["spamflow_report_evidence", "spamflow_report_evidence_kinds",
            "spamflow_report_host_columns", "spamflow_report_section"]


@hookimpl
def spamflow_register_detectors(register: Callable[[type[Detector]], None]) -> None:
    from spamflow_quilt.detector import QuiltDetector

    register(QuiltDetector)


@hookimpl
def spamflow_register_commands(subparsers: argparse._SubParsersAction) -> None:
    from spamflow_quilt.sweep_command import add_command

    add_command(subparsers)
