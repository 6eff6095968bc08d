"""What the content detector shows in the run report: its headline columns of the host table,
named in words (the public layout's names, ``AVG_52``, say nothing to a reader)."""

from __future__ import annotations

from spamflow import hookimpl
from spamflow.report import HostColumns

STAGE = "content"
HEADLINE = ("AVG_52", "AVG_54")
BLOCK_WORDS = {"HST": "home page", "HMG": "max-PageRank page", "AVG": "mean over pages", "STD": "std over pages"}


def column_names() -> dict[str, str]:
    """``AVG_52`` -> ``fraction anchor text (mean over pages)``: each of the 96 public columns
    as its measure and block (docs/content.md).

    >>> column_names()["AVG_52"], column_names()["HST_1"]
    ('fraction anchor text (mean over pages)', 'number of words (home page)')
    """
    from spamflow_content.host_features import BLOCKS, feature_names
    from spamflow_content.measures import MEASURES

    blocks = [BLOCK_WORDS[b] for b in BLOCKS for _ in MEASURES]
    measures = [m.replace("_", " ") for _ in BLOCKS for m in MEASURES]
    return {name: f"{measure} ({block})" for name, measure, block in zip(feature_names(), measures, blocks)}


@hookimpl
def spamflow_report_host_columns(stage: str) -> HostColumns | None:
    if stage != STAGE:
        return None
    names = column_names()
    return HostColumns(HEADLINE, names={n: names[n] for n in HEADLINE})
