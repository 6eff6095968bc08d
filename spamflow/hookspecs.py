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

import pluggy

from spamflow.detector import Detector

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
