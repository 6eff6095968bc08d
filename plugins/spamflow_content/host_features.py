"""Per-host aggregation into the public 96-feature layout of the Web Spam Challenge:
HST_1..24 of the home page, HMG_25..48 of the maximum-PageRank page, AVG_49..72 the mean
and STD_73..96 the standard deviation over the host's (sampled) pages, each block in the
order of ``measures.MEASURES``."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from spamflow_content.measures import MEASURES

BLOCKS = ("HST", "HMG", "AVG", "STD")


def feature_names() -> list[str]:
    """``HST_1`` .. ``STD_96``, the public names.

    >>> names = feature_names(); names[0], names[23], names[24], names[95]
    ('HST_1', 'HST_24', 'HMG_25', 'STD_96')
    """
    return [f"{block}_{24 * b + i + 1}" for b, block in enumerate(BLOCKS) for i in range(len(MEASURES))]


def host_schema() -> pa.Schema:
    """The stage's ``hosts.parquet``: the keys, the host's page counts and the 96 features."""
    return pa.schema([("snapshot", pa.string()), ("host", pa.string()), ("pages", pa.int64()),
                      ("sampled_pages", pa.int64()), *((name, pa.float64()) for name in feature_names())])


def host_features(pages: pa.Table, page_counts: pa.Table) -> pa.Table:
    """Aggregate per-page measures to hosts.

    ``pages`` has ``snapshot``, ``host``, ``is_home``, ``is_max_linked`` and the measures;
    ``page_counts`` has ``snapshot``, ``host``, ``pages`` (all pages of the host, sampled or
    not).  Standard deviations are population ones (ddof 0), so a one-page host has STD 0.
    """
    keys = ["snapshot", "host"]
    stats = pages.group_by(keys).aggregate(
        [("is_home", "count")] + [(m, "mean") for m in MEASURES] + [(m, "stddev") for m in MEASURES])
    names = feature_names()
    columns: dict[str, pa.Array | pa.ChunkedArray] = {}
    home = pages.filter(pc.field("is_home")).select(keys + list(MEASURES))
    top = pages.filter(pc.field("is_max_linked")).select(keys + list(MEASURES))
    table = page_counts.select(keys + ["pages"]).join(stats, keys, join_type="inner")
    table = table.join(home.rename_columns(keys + names[0:24]), keys, join_type="left outer")
    table = table.join(top.rename_columns(keys + names[24:48]), keys, join_type="left outer")
    table = table.sort_by([("snapshot", "ascending"), ("host", "ascending")])
    columns = {"snapshot": table["snapshot"], "host": table["host"],
               "pages": table["pages"].cast(pa.int64()), "sampled_pages": table["is_home_count"].cast(pa.int64())}
    for i, m in enumerate(MEASURES):
        columns[names[i]] = table[names[i]].fill_null(0.0)
        columns[names[24 + i]] = table[names[24 + i]].fill_null(0.0)
        columns[names[48 + i]] = table[f"{m}_mean"]
        columns[names[72 + i]] = table[f"{m}_stddev"]
    return pa.table({name: columns[name] for name in ["snapshot", "host", "pages", "sampled_pages", *names]})
