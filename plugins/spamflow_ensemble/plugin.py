"""The hook implementations of ``spamflow_ensemble``."""

import argparse
from collections.abc import Callable

from spamflow import hookimpl
from spamflow.detector import Detector
from spamflow_ensemble import __version__
from spamflow_ensemble.report_section import (  # the report's part of this detector
    spamflow_report_host_columns,
    spamflow_report_section,
)

__all__ = ["__version__", "spamflow_register_commands", "spamflow_register_detectors"]
__all__ += ["spamflow_report_host_columns", "spamflow_report_section"]


@hookimpl
def spamflow_register_detectors(register: Callable[[type[Detector]], None]) -> None:
    from spamflow_ensemble.detector import ClassifyDetector

    register(ClassifyDetector)


@hookimpl
def spamflow_register_commands(subparsers: argparse._SubParsersAction) -> None:
    from spamflow_ensemble.commands import add_commands

    add_commands(subparsers)
