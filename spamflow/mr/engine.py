"""Choosing between a stage's in-process code and its MapReduce jobs.

Stages that can run either way take an ``engine: auto | memory | mapreduce`` parameter
(declared in their params' ``execution_keys``: both engines give the same output, so the
choice is not part of the stage's identity).  ``auto`` keeps the laptop path unless the
runner is a cluster one or the input is larger than the stage's configured size.
"""

from __future__ import annotations

from typing import Literal

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
