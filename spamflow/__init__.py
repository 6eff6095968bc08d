"""spamflow: find web spam in crawls.

A Luigi DAG of stages (ingest, parse, detectors, ...) chosen and parameterised in YAML,
with every detector a pluggy plugin.  Plugins mark their hook implementations with
:data:`spamflow.hookimpl`.
"""

import pluggy

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("spamflow")
"""Marker for plugin hook implementations: ``@spamflow.hookimpl``."""

__all__ = ["__version__", "hookimpl"]
