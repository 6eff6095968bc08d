"""The hook implementations of ``spamflow_quilt``, apart from the package so that its MapReduce
and pure modules import without spamflow (a Spark or Hadoop worker gets only this package)."""

import argparse
from collections.abc import Callable

from spamflow import hookimpl
from spamflow.detector import Detector
from spamflow_quilt import __version__

__all__ = ["__version__", "spamflow_register_commands", "spamflow_register_detectors"]


@hookimpl
def spamflow_register_detectors(register: Callable[[type[Detector]], None]) -> None:
    from spamflow_quilt.detector import QuiltDetector

    register(QuiltDetector)


@hookimpl
def spamflow_register_commands(subparsers: argparse._SubParsersAction) -> None:
    from spamflow_quilt.sweep_command import add_command

    add_command(subparsers)
