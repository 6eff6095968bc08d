"""``spamflow export`` records each export in run.json (``exports``: format, destination,
schema version, rows written, the run it exported) and leaves every other field as it was;
checked on a small host-graph run against the exported files read back here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from spamflow.export.rows import SCHEMA_VERSION


def _spamflow(folder: Path, *args: str) -> None:
    local = ["--local-scheduler"] if args[0] == "run" else []  # export has no scheduler flags
    out = subprocess.run([sys.executable, "-m", "spamflow_workflows", *args, "-c", str(folder / "hg.yaml"), *local],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr


def _run_json(folder: Path) -> dict:
    return json.loads((folder / "run" / "run.json").read_text())


@pytest.mark.slow
def test_each_export_is_recorded_in_run_json_without_changing_its_other_fields(tmp_path):
    (tmp_path / "v.txt").write_text("0\tcom.example.www\n1\tuk.co.bbc.news\n2\torg.wiki\n3\tnet.spam.a\n")
    (tmp_path / "e.txt").write_text("0\t1\n1\t2\n2\t0\n3\t0\n3\t1\n")
    (tmp_path / "hg.yaml").write_text(json.dumps({
        "workdir": "run", "mapreduce": {"runner": "inline"},
        "input": {"hostgraph": {"vertices": "v.txt", "edges": "e.txt"}}, "detectors": {"links_hostgraph": {}}}))
    _spamflow(tmp_path, "run")
    before = _run_json(tmp_path)
    assert "exports" not in before

    _spamflow(tmp_path, "export", "--to", str(tmp_path / "out"), "--format", "parquet")
    after = _run_json(tmp_path)
    assert set(after) == set(before) | {"exports"}
    for name, stage in before["stages"].items():  # the export's DAG run redid nothing
        assert {k: v for k, v in after["stages"][name].items() if k != "ran_now"} == \
            {k: v for k, v in stage.items() if k != "ran_now"}
    (entry,) = after["exports"]
    rows = pq.read_table(tmp_path / "out" / "hosts.parquet").to_pylist()
    described = json.loads((tmp_path / "out" / "export.json").read_text())
    assert entry["format"] == "parquet" and entry["destination"] == str((tmp_path / "out").resolve())
    assert entry["schema_version"] == SCHEMA_VERSION == described["schema_version"]
    assert entry["rows"] == {"hosts": len(rows)} and len(rows) == 4
    assert entry["run_id"] == described["run"]["run_id"] and {r["run_id"] for r in rows} == {entry["run_id"]}
    assert described["run"]["stages"] == {n: s["signature"] for n, s in after["stages"].items()}

    _spamflow(tmp_path, "export", "--to", str(tmp_path / "lines"), "--format", "jsonl")
    _spamflow(tmp_path, "export", "--to", str(tmp_path / "out"), "--format", "parquet")  # the same place again
    exports = _run_json(tmp_path)["exports"]
    assert [(e["format"], Path(e["destination"]).name) for e in exports] == [("jsonl", "lines"), ("parquet", "out")]
    lines = (tmp_path / "lines" / "hosts.jsonl").read_text().splitlines()
    assert exports[0]["rows"] == {"hosts": len(lines)} == {"hosts": 4}

    _spamflow(tmp_path, "run")  # a later run of the DAG keeps the record
    assert _run_json(tmp_path)["exports"] == exports
