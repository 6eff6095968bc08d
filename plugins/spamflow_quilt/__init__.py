"""Built-in plugin ``quilt``: Najork's (k, m, c, θ)-quilted pages (SIGIR 2012), found by
mrjob MapReduce jobs that run unchanged inline, locally, on Spark and on Hadoop."""

from collections.abc import Callable

from spamflow import hookimpl
from spamflow.detector import Detector

__version__ = "1.0.0"


@hookimpl
def spamflow_register_detectors(register: Callable[[type[Detector]], None]) -> None:
    from spamflow_quilt.detector import QuiltDetector

    register(QuiltDetector)
