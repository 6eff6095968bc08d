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
from spamflow.report.evidence import EvidenceSet
from spamflow.report.host_columns import HostColumns
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
    and returns the exit code.  A command that needs stages runs them through
    ``args.run_stages(command, config, plugins, targets)`` (:class:`spamflow.runs.StageRunner`),
    never by importing the workflows, and adds its own outputs to run.json with
    :func:`spamflow.manifest.add_command_entry`.  A name already taken is an error.  Returns nothing.
    """


@hookspec
def spamflow_report_section(stage: str, record: dict[str, Any], assets: Path,
                            evidence: EvidenceSet | None) -> ReportSection | None:
    """Contribute a section to the run report for the finished stage ``stage``.

    Fires once per finished stage of the run, in run order, each time a report is written (the
    ``report`` stage of the DAG and ``spamflow report``).  ``record`` is the stage's entry of
    run.json (absolute ``outputs`` paths, ``params``, ``counts``, ``seconds``); ``assets`` is
    the report's assets folder, where the section may write figures and reference them as
    ``assets/<file>``; ``evidence`` is what ``spamflow_report_evidence`` returned for this stage
    (None if nothing), to show with :func:`spamflow.report.sections.evidence_list` (an
    implementation may leave the argument out).  Return a
    :class:`spamflow.report.ReportSection` (its ``html`` is inserted as is: escape your data;
    its ``anchor`` must be unique in the report; its ``order`` places it) or None for a stage
    that is not yours.  Several plugins may each return a section.
    """


@hookspec
def spamflow_table_transforms() -> list[Callable[[dict[str, Any]], dict[str, Any]]] | None:
    """Offer transforms for the feature tables ``spamflow train|score|evaluate --table`` read
    (unless ``--no-link-transforms``): each takes a table's columns by name (numpy arrays of one
    length) and returns the new columns it derives from them, by name, or an empty dict when
    the table lacks its inputs.  Columns the table already has are never replaced.  Fires once
    per command, in plugin order.  Returns a list of callables (None: none).
    """


@hookspec
def spamflow_report_evidence_kinds() -> dict[str, str] | None:
    """Name the kinds of evidence this plugin's ``spamflow_report_evidence`` returns, each with
    its plural, in report order: ``{"quilt": "quilts"}``.

    Fires when the report counts its evidence (``<plural>_shown`` and ``<plural>_not_shown`` in
    the report stage's counts) and when ``spamflow judge`` offers its ``--kinds``.  A kind
    named by two plugins keeps the first plugin's plural.  Returns a dict (None or empty: none).
    """


@hookspec
def spamflow_report_evidence(stage: str, record: dict[str, Any], stages: dict[str, dict[str, Any]],
                             max_items: int) -> EvidenceSet | None:
    """Return what a person can judge in the finished stage ``stage``.

    Fires once per finished stage, in run order, before the host table and the sections are
    built (the report) or the items are served (``spamflow judge``).  ``record`` is the stage's
    entry of run.json, ``stages`` every finished stage's (e.g. ``stages["parse"]`` for the page
    table).  Return a :class:`spamflow.report.EvidenceSet` of at most ``max_items``
    :class:`spamflow.report.Evidence` (each with a unique key ``<kind>:…``, its HTML and the
    (snapshot, host) pairs it implicates: the host table links those hosts to it) and the total
    found, or None for a stage that is not yours.  One plugin per stage returns evidence.
    """


@hookspec
def spamflow_report_host_columns(stage: str, record: dict[str, Any]) -> HostColumns | None:
    """Say how the finished stage ``stage`` appears in the report's host table.

    Fires once per finished stage, in run order.  Return a
    :class:`spamflow.report.HostColumns`: the headline columns of the stage's per-host table
    (its declared one keyed by ``snapshot``, else its ``hosts`` output; shown as
    ``<stage>.<column>``), the rule that says it fired on a host, and, for a classifier, its
    verdict per host; or None (the table then shows what the stage's declaration says, see
    :mod:`spamflow.per_host`, else its first three numeric columns).
    """
