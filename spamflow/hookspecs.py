"""The hook contract between spamflow and its plugins.

Every hook is named ``spamflow_*``.  Implement a hook in a module or class with
``@spamflow.hookimpl`` and make it known either as a built-in (``BUILTIN_PLUGINS`` in
:mod:`spamflow.plugins`) or through the ``spamflow`` entry-point group of your distribution.
``docs/plugins.md`` documents each hook under a heading with its exact signature; a test
keeps the two in step.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pluggy

from spamflow.detector import Detector
from spamflow.report.section import ReportSection

hookspec = pluggy.HookspecMarker("spamflow")


@hookspec
def spamflow_register_detectors(register: Callable[[type[Detector]], None]) -> None:
    """Register detector classes by calling ``register(DetectorClass)`` once per class.

    Fires once when the plugin manager is built, before any config is validated.  Each
    detector's ``name`` must be unique across all loaded plugins: a second plugin claiming a
    name is an error that names both plugins.  Returns nothing.
    """


@hookspec
def spamflow_register_commands(subparsers: argparse._SubParsersAction) -> None:
    """Add subcommands to the ``spamflow`` command line.

    Fires once when the command line is built.  Call ``subparsers.add_parser(NAME, help=...)``,
    add arguments, and ``set_defaults(handler=FUNCTION)``; ``FUNCTION(args)`` runs the command
    and returns the exit code.  A name already taken is an error.  Returns nothing.
    """


@hookspec
def spamflow_report_section(stage: str, record: dict[str, Any], assets: Path) -> ReportSection | None:
    """Contribute a section to the run report for the finished stage ``stage``.

    Fires once per finished stage of the run, in run order, each time a report is written (the
    ``report`` stage of the DAG and ``spamflow report``).  ``record`` is the stage's entry of
    run.json (absolute ``outputs`` paths, ``params``, ``counts``, ``seconds``); ``assets`` is
    the report's assets folder, where the section may write figures and reference them as
    ``assets/<file>``.  Return a :class:`spamflow.report.ReportSection` (its ``html`` is inserted
    as is: escape your data; its ``anchor`` must be unique in the report) or None for a stage
    that is not yours.  Several plugins may each return a section.
    """
