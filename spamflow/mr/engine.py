"""Choosing between a stage's in-process code and its MapReduce jobs.

Stages that can run either way take an ``engine: auto | memory | mapreduce`` parameter
(declared in their params' ``execution_keys``: both engines give the same output, so the
choice is not part of the stage's identity).  ``auto`` keeps the laptop path unless the
runner is a cluster one or the input is larger than the stage's configured size.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

from spamflow.detector import RunSettings

Engine = Literal["auto", "memory", "mapreduce"]


def use_mapreduce(engine: Engine, settings: RunSettings, *, size: int = 0, above: int | None = None) -> bool:
    """True when the stage should run its MapReduce jobs: asked for, or ``auto`` with a cluster
    runner (spark, hadoop, emr) or with ``size`` (pages, edges: the stage says) over ``above``."""
    if engine == "mapreduce":
        return True
    if engine == "memory":
        return False
    return settings.on_cluster or (above is not None and size > above)


def planned_input_bytes(plan: Mapping[str, Any]) -> int | None:
    """The WARC bytes a run's ingest stage will read (``plan``: :func:`spamflow.plan.plan_run`'s):
    the sum over its files; None when it is not known before the run (a crawl, a remote file
    without a size).  The demo's generated web is small by construction: 0."""
    if "demo" in plan:
        return 0
    files = plan["ingest"].params.get("files") if "ingest" in plan else None
    if files is None:
        return None
    sizes = [f.get("bytes") for f in files]
    return None if any(s is None for s in sizes) else sum(int(s) for s in sizes)


def resolve_runner(settings: RunSettings, size: int | None) -> RunSettings:
    """``runner: auto`` made concrete for one run: ``inline`` when its input is known to be
    at most ``settings.inline_below`` bytes, else ``local``.  Other runners are returned as
    they are."""
    if settings.runner != "auto":
        return settings
    small = size is not None and size <= settings.inline_below
    return dataclasses.replace(settings, runner="inline" if small else "local")
