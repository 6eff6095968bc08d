"""The per-host table contract (spamflow.per_host): a detector declares the table, the stage
runner checks it when the stage publishes and records the declaration in stage.json."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spamflow.detector import Detector, RunSettings, StageResult
from spamflow.errors import SpamflowError
from spamflow.per_host import HostFeature, PerHostTable, check_host_tables, host_schema
from spamflow.planned import PlannedStage
from spamflow.stage_runner import STAGE_RECORD, run_stage

TABLE = PerHostTable("per_host", (HostFeature("pages", "pages of the host"),
                                  HostFeature("flagged", "pages flagged", evidence=True)))


def _write(path, **columns):
    pq.write_table(pa.table(columns), path)


def test_a_good_table_gives_its_declaration(tmp_path):
    _write(tmp_path / "t.parquet", snapshot=["s", "s"], host=["a", "b"], pages=[2, 1], flagged=[True, False])
    assert check_host_tables("x", (TABLE,), tmp_path, {"per_host": "t.parquet"}) == {"per_host": {
        "key": ["snapshot", "host"],
        "features": {"pages": {"description": "pages of the host", "evidence": False},
                     "flagged": {"description": "pages flagged", "evidence": True, "above": 0.0}}}}


@pytest.mark.parametrize("columns, outputs, message", [
    ({}, {}, "stage 'x' declares a per-host table 'per_host' but wrote no such output (it wrote [])"),
    ({"snapshot": ["s"], "host": pa.array([None], pa.string()), "pages": [1], "flagged": [0]}, None,
     "stage 'x': per-host table 'per_host' (t.parquet) has 1 null 'host' values"),
    ({"snapshot": ["s"], "host": ["a"], "pages": ["many"], "flagged": [0]}, None,
     "declares the feature 'pages', which is not a numeric column of it (string)"),
    ({"snapshot": ["s"], "host": ["a"], "pages": [1]}, None,
     "declares the feature 'flagged', which is not a numeric column of it (missing)"),
    ({"snap": ["s"], "host": ["a"], "pages": [1], "flagged": [0]}, None,
     "needs a string column 'snapshot' (it has ['snap', 'host', 'pages', 'flagged'])"),
])
def test_a_broken_promise_names_stage_file_and_column(tmp_path, columns, outputs, message):
    if columns:
        _write(tmp_path / "t.parquet", **columns)
    with pytest.raises(SpamflowError) as err:
        check_host_tables("x", (TABLE,), tmp_path, {"per_host": "t.parquet"} if outputs is None else outputs)
    assert message in str(err.value)


def test_an_optional_table_may_be_absent(tmp_path):
    optional = PerHostTable("temporal", snapshot_column="snapshot_t1", optional=True)
    assert check_host_tables("x", (optional,), tmp_path, {}) == {}


class Declaring(Detector):
    name = "declaring"
    host_tables = (TABLE,)
    flagged_host: str | None = "a"

    def run(self, ctx):
        schema = host_schema(pa.field("pages", pa.int64()), pa.field("flagged", pa.int64()))
        if self.flagged_host:
            table = pa.table({"snapshot": ["s", "s"], "host": ["a", "b"], "pages": [3, 1], "flagged": [1, 0]},
                             schema=schema)
        else:  # a host left null: the key schema says non-null, the data does not keep it
            table = pa.table({"snapshot": ["s", "s"], "host": ["a", None], "pages": [3, 1], "flagged": [1, 0]})
        pq.write_table(table, ctx.outdir / "per_host.parquet")
        return StageResult({"per_host": "per_host.parquet"})


class Broken(Declaring):
    flagged_host = None


def _planned(tmp_path, cls) -> PlannedStage:
    return PlannedStage(cls.name, f"{__name__}:{cls.__qualname__}", {}, {}, "sig", str(tmp_path / f"{cls.__name__}"))


def test_the_runner_records_the_declaration_in_stage_json(tmp_path):
    stage = _planned(tmp_path, Declaring)
    run_stage(stage, {}, RunSettings())
    record = json.loads((tmp_path / "Declaring" / STAGE_RECORD).read_text())
    assert record["host_tables"]["per_host"]["features"]["flagged"]["evidence"] is True


def test_the_runner_refuses_to_publish_a_broken_table(tmp_path):
    stage = _planned(tmp_path, Broken)
    with pytest.raises(SpamflowError, match=r"stage 'declaring': per-host table 'per_host' \(per_host.parquet\) "
                                            r"has 1 null 'host' values"):
        run_stage(stage, {}, RunSettings())
    assert not (tmp_path / "Broken").exists()
    assert list(tmp_path.iterdir()) == []  # no temporary directory left either
