"""The engine choice (in-process or MapReduce) is an execution knob: it picks the code path
but never changes a stage's signature."""

from __future__ import annotations

from typing import ClassVar, Literal

import pytest

import spamflow
from spamflow.config import load_config, parse_config
from spamflow.detector import Detector, DetectorParams, RunSettings, StageContext, StageResult
from spamflow.mr import use_mapreduce
from spamflow.plan import plan_run
from spamflow.plugins import build_plugins


def test_use_mapreduce_follows_engine_runner_and_size() -> None:
    laptop, cluster = RunSettings(runner="local"), RunSettings(runner="spark")
    assert use_mapreduce("mapreduce", laptop) and not use_mapreduce("memory", cluster)
    assert not use_mapreduce("auto", laptop) and use_mapreduce("auto", cluster)
    assert use_mapreduce("auto", laptop, size=11, above=10)
    assert not use_mapreduce("auto", laptop, size=10, above=10)
    assert [RunSettings(runner=r).on_cluster for r in ("inline", "local", "spark", "hadoop", "emr")] == \
        [False, False, True, True, True]


class CountParams(DetectorParams):
    engine: Literal["auto", "memory", "mapreduce"] = "auto"
    mapreduce_above: int = 1000
    k: int = 3
    execution_keys: ClassVar[frozenset[str]] = frozenset({"engine", "mapreduce_above"})


class Count(Detector):
    name = "count"
    Params = CountParams

    def run(self, ctx: StageContext) -> StageResult:  # pragma: no cover - planned, not run
        return StageResult(outputs={})


class CountPlugin:
    @spamflow.hookimpl
    def spamflow_register_detectors(self, register):
        register(Count)


def test_execution_keys_stay_out_of_the_signature(tmp_path) -> None:
    plugins = build_plugins(extra={"count-plugin": CountPlugin()})

    def planned(params: str):
        text = f"workdir: out\ninput: {{demo: {{seed: 0}}}}\ndetectors:\n  count: {params}\n"
        return plan_run(parse_config(text, plugins, path=tmp_path / "c.yaml"), plugins)["count"]

    base = planned("{}")
    same = [planned("{engine: mapreduce}"), planned("{engine: memory, mapreduce_above: 5}")]
    assert {p.signature for p in same} == {base.signature}
    assert same[0].params["engine"] == "mapreduce"  # the stage still gets the knob
    assert planned("{k: 4}").signature != base.signature


@pytest.mark.parametrize(("stage", "detectors"), [("hss", "  hss: {params}\n"),
                                                  ("classify", "  hss: {{}}\n  classify: {params}\n")])
def test_the_engine_keys_stay_out_of_a_built_in_detectors_signature(tmp_path, stage, detectors) -> None:
    plugins = build_plugins()

    def planned(params: str):
        text = "workdir: out\ninput: {demo: {seed: 0}}\ndetectors:\n" + detectors.format(params=params)
        return plan_run(parse_config(text, plugins, path=tmp_path / "c.yaml"), plugins)[stage]

    base = planned("{}")
    assert planned("{engine: mapreduce, mapreduce_above: 5}").signature == base.signature
    assert planned("{engine: memory}").params["engine"] == "memory"  # the stage still gets the knob
    assert planned("{seed: 1}").signature != base.signature


def test_auto_runner_is_inline_up_to_inline_below_bytes_of_warc_else_local(tmp_path) -> None:
    """``runner: auto`` is resolved once per run from the planned WARC bytes (the sum of the
    ingest stage's file sizes, as ``os.stat`` gives them here)."""
    from spamflow.mr.engine import planned_input_bytes, resolve_runner

    warcs = tmp_path / "w"
    warcs.mkdir()
    for name, size in (("a.warc.gz", 1000), ("b.warc.gz", 2345)):
        (warcs / name).write_bytes(b"\0" * size)
    (tmp_path / "c.yaml").write_text("workdir: run\ninput: {warc: [w/*.warc.gz], snapshot: s}\n"
                                     "mapreduce: {runner: auto, inline_below: 3345}\ndetectors: {obvious: {}}\n")
    config = load_config(tmp_path / "c.yaml", build_plugins())
    size = planned_input_bytes(plan_run(config, build_plugins()))
    assert size == 3345
    settings = RunSettings(runner="auto", inline_below=config.model.mapreduce.inline_below)
    assert resolve_runner(settings, size).runner == "inline"
    assert resolve_runner(settings, size + 1).runner == "local"
    assert resolve_runner(settings, None).runner == "local"  # a crawl: not known before it runs
    assert resolve_runner(RunSettings(runner="spark"), 0).runner == "spark"
    assert not settings.on_cluster
