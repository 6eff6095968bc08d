"""The datatrove filter (``spamflow.integrations.datatrove``) inside a real datatrove pipeline
over the demo run's WARC records, checked against the classifier's scores.parquet read here."""

from __future__ import annotations

import json
import math

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from spamflow.domains import host_of

pytest.importorskip("datatrove")


@pytest.fixture(scope="module")
def run(demo_once, tmp_path_factory) -> dict:
    """The demo's export (parquet and jsonl) and its HTML responses as datatrove documents the
    way datatrove's WarcReader makes them: id the WARC-Record-ID, the URL in the metadata."""
    from warcio.archiveiterator import ArchiveIterator

    from spamflow.export.commands import export_run
    from spamflow.plugins import build_plugins

    base = tmp_path_factory.mktemp("datatrove")
    stages = demo_once["manifest"]["stages"]
    for fmt in ("parquet", "jsonl"):
        export_run(demo_once["manifest"], base / fmt, fmt, plugins=build_plugins())
    pages = ds.dataset(stages["parse"]["outputs"]["pages"]).to_table(columns=["warc_file"]).column("warc_file")
    (base / "docs").mkdir()
    docs = []
    for n, warc in enumerate(sorted(set(pages.to_pylist()))):
        these = []
        with open(warc, "rb") as fh:
            for record in ArchiveIterator(fh):
                if record.rec_type == "response":
                    these.append({"id": record.rec_headers.get_header("WARC-Record-ID"),
                                  "text": record.content_stream().read().decode("utf-8", "replace"),
                                  "url": record.rec_headers.get_header("WARC-Target-URI")})
        pq.write_table(pa.Table.from_pylist(these), base / "docs" / f"{n}.parquet")
        docs += these
    scores = pq.read_table(stages["classify"]["outputs"]["scores"]).to_pylist()
    return {"base": base, "docs": docs, "scores": scores}


def _pipeline(run, tmp_path, **options) -> tuple[list[dict], list[dict]]:
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import ParquetReader
    from datatrove.pipeline.writers import ParquetWriter

    from spamflow.integrations.datatrove import SpamflowHostFilter

    kept, dropped = tmp_path / "kept", tmp_path / "dropped"
    LocalPipelineExecutor(pipeline=[
        ParquetReader(str(run["base"] / "docs")),
        SpamflowHostFilter(str(run["base"] / options.pop("fmt", "parquet")), exclusion_writer=ParquetWriter(str(dropped)),
                           **options),
        ParquetWriter(str(kept)),
    ], tasks=1, logging_dir=str(tmp_path / "logs")).run()

    def read(folder):
        return [row for f in sorted(folder.glob("*.parquet")) for row in pq.read_table(f).to_pylist()]
    return read(kept), read(dropped) if dropped.exists() else []


def _latest(scores: list[dict]) -> dict[str, dict]:
    best: dict[str, dict] = {}
    for row in scores:
        if row["host"] not in best or row["snapshot"] > best[row["host"]]["snapshot"]:
            best[row["host"]] = row
    return best


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_the_filter_drops_exactly_the_documents_of_hosts_the_classifier_called_spam(run, tmp_path, fmt):
    kept, dropped = _pipeline(run, tmp_path, fmt=fmt, annotate=True)
    verdicts = _latest(run["scores"])
    want_dropped = {d["id"] for d in run["docs"] if verdicts.get(host_of(d["url"]), {}).get("label") == "spam"}
    assert want_dropped and len(want_dropped) < len(run["docs"])
    assert {d["id"] for d in dropped} == want_dropped
    assert {d["id"] for d in kept} == {d["id"] for d in run["docs"]} - want_dropped
    for doc in kept:
        verdict = verdicts.get(host_of(doc["metadata"]["url"]))
        score = doc["metadata"]["spamflow_host_score"]
        assert score == verdict["score"] if verdict else math.isnan(score)
    assert all(d["metadata"]["filter_reason"] == "spamflow_spam" for d in dropped)


def test_a_threshold_and_unknown_drop_and_record_ids(run, tmp_path):
    verdicts = _latest(run["scores"])
    kept, _ = _pipeline(run, tmp_path / "t", threshold=0.999, unknown="drop")
    assert {d["id"] for d in kept} == {d["id"] for d in run["docs"]
                                       if host_of(d["url"]) in verdicts and verdicts[host_of(d["url"])]["score"] < 0.999}
    # by record id: only the records the classifier's snapshot scored (the page rows of scored hosts)
    scored = {(r["snapshot"], r["host"]): r for r in run["scores"]}
    urls = pq.read_table(run["base"] / "parquet" / "urls.parquet").to_pylist()
    by_id = {u["record_id"]: scored.get((u["snapshot"], u["host"])) for u in urls}
    kept, dropped = _pipeline(run, tmp_path / "r", by="record_id")
    assert {d["id"] for d in dropped} == {i for i, v in by_id.items() if v and v["label"] == "spam"}
    assert len(kept) + len(dropped) == len(run["docs"])


def test_an_export_of_another_schema_version_is_refused(run, tmp_path):
    import shutil

    from spamflow.errors import SpamflowError
    from spamflow.integrations.datatrove import SpamflowHostFilter

    folder = tmp_path / "v2"
    shutil.copytree(run["base"] / "parquet", folder)
    description = json.loads((folder / "export.json").read_text())
    (folder / "export.json").write_text(json.dumps({**description, "schema_version": 2}))
    with pytest.raises(SpamflowError, match="schema version 2"):
        SpamflowHostFilter(str(folder)).scores()
