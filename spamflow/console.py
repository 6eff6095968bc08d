"""The one-line-per-stage summary that ``spamflow run`` and ``spamflow demo`` print, and the
lines each stage prints as it starts and ends (``stage_started``, ``stage_finished``), so a
log shows progress where no bar is drawn.

Ordinary counts are abbreviated to the first few (run.json has them all), but every
``bad_*`` count is shown: a record lost to bad input must never be hidden from the console.
"""

from __future__ import annotations

from typing import Any

COUNTS_SHOWN = 6
"""How many of a stage's other counts the line shows, in the stage's order."""
STAGE_LINE_COUNTS = 4
"""... and the line a stage prints as it ends (the summary after the run has more)."""


def counts_text(counts: dict[str, Any], shown: int = COUNTS_SHOWN) -> str:
    """``k=v, ...``: the first ``shown`` counts that are not ``bad_*``, then every ``bad_*``
    count, then how many were left out (``+3 more in run.json``)."""
    bad = [k for k in counts if k.startswith("bad_")]
    other = [k for k in counts if not k.startswith("bad_")]
    keys = other[:shown] + bad
    text = ", ".join(f"{k}={counts[k]}" for k in keys)
    if len(other) > shown:
        text += f" (+{len(other) - shown} more in run.json)"
    return text


def stage_line(name: str, stage: dict[str, Any]) -> str:
    """One stage of run.json as ``  name  ran|cached|NOT DONE  counts``."""
    state = ("ran" if stage.get("ran_now") else "cached") if stage.get("complete") else "NOT DONE"
    return f"  {name:<12} {state:<8} {counts_text(stage.get('counts', {}))}"


def stage_lines_on(setting: bool | None) -> bool:
    """Whether stages print a line as they start and end: unless told no progress at all
    (``--no-progress``).  Bars are drawn only on a terminal (:mod:`spamflow.progress`); these
    lines are what a log, a pipe or a CI job shows instead, and on a terminal they show the
    stages that draw no bar."""
    return setting is not False


def stage_started(name: str) -> str:
    return f"spamflow: stage {name} started"


def stage_finished(name: str, seconds: float, counts: dict[str, Any]) -> str:
    """``spamflow: stage parse done in 3.2 s: pages=121, ...`` (the counts as in the summary)."""
    text = counts_text(counts, STAGE_LINE_COUNTS)
    return f"spamflow: stage {name} done in {seconds:.1f} s" + (f": {text}" if text else "")


def stage_failed(name: str, seconds: float) -> str:
    return f"spamflow: stage {name} failed after {seconds:.1f} s"


def run_started(to_run: int, done_before: int) -> str:
    return f"spamflow: {to_run} stage(s) to run, {done_before} done before (cached)"
