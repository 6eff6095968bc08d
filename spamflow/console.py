"""The one-line-per-stage summary that ``spamflow run`` and ``spamflow demo`` print.

Ordinary counts are abbreviated to the first few (run.json has them all), but every
``bad_*`` count is shown: a record lost to bad input must never be hidden from the console.
"""

from __future__ import annotations

from typing import Any

COUNTS_SHOWN = 6
"""How many of a stage's other counts the line shows, in the stage's order."""


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
