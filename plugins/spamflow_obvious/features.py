"""Per (snapshot, host): number_of_pages and length_of_hostname."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from spamflow.detector import Detector, StageContext, StageResult
from spamflow.per_host import HostFeature, PerHostTable, host_schema

HOST_FEATURE_SCHEMA = host_schema(
    pa.field("number_of_pages", pa.int64(), nullable=False),
    pa.field("length_of_hostname", pa.int64(), nullable=False),
)


def obvious_features(pages: pa.Table) -> pa.Table:
    """Group a table with ``snapshot`` and ``host`` columns into the two features."""
    grouped = pages.group_by(["snapshot", "host"]).aggregate([("host", "count")])
    table = pa.table({
        "snapshot": grouped["snapshot"],
        "host": grouped["host"],
        "number_of_pages": grouped["host_count"].cast(pa.int64()),
        "length_of_hostname": pc.utf8_length(grouped["host"]).cast(pa.int64()),
    }, schema=HOST_FEATURE_SCHEMA)
    return table.sort_by([("snapshot", "ascending"), ("host", "ascending")])


class ObviousDetector(Detector):
    name = "obvious"
    version = "1"
    description = "Web Spam Challenge obvious host features: number_of_pages, length_of_hostname."
    requires = ("parse",)
    host_tables = (PerHostTable("hosts", (HostFeature("number_of_pages", "pages of the host in the snapshot"),
                                          HostFeature("length_of_hostname", "characters of the host name"))),)

    def run(self, ctx: StageContext) -> StageResult:
        pages = ds.dataset(ctx.inputs["parse"]["pages"], format="parquet").to_table(columns=["snapshot", "host"])
        table = obvious_features(pages)
        pq.write_table(table, ctx.outdir / "hosts.parquet")
        return StageResult(outputs={"hosts": "hosts.parquet"},
                           counts={"hosts": table.num_rows, "pages": pages.num_rows})


ObviousFeatures = ObviousDetector
"""The old name (detector classes are named ``<Stage>Detector``); kept for existing imports."""
