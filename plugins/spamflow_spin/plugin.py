"""The hook implementation of ``spamflow_spin``, apart from the package so that its MapReduce
and pure modules import without the plugin machinery (a Spark or Hadoop worker gets only this package)."""

from collections.abc import Callable

from spamflow import hookimpl
from spamflow.detector import Detector
from spamflow_spin import __version__

__all__ = ["__version__", "spamflow_register_detectors"]


@hookimpl
def spamflow_register_detectors(register: Callable[[type[Detector]], None]) -> None:
    from spamflow_spin.detector import SpinDetector

    register(SpinDetector)
