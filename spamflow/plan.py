"""From a validated config to the stages of a run, each with its identity.

A stage's signature hashes what determines its output: its name and version, its
parameters, its upstream signatures (gokart's habit), and the SHA-256 of each file it reads
(``Stage.input_files``: labels, dictionaries, blocklists), so an edited file redoes the
stage and a merely touched one does not.  Execution knobs (runner, workers, scheduler) are
left out, so changing them redoes nothing.  The stage's output directory is
``<workdir>/stages/<name>-<signature>`` (a URL under a remote workdir, with the same layout
in the workdir's local cache for running it and reading it: :mod:`spamflow.storage`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from spamflow.config import Config, detector_upstream
from spamflow.detector import Stage
from spamflow.errors import ConfigError
from spamflow.planned import PlannedStage, stage_dir
from spamflow.plugins import SpamflowPlugins
from spamflow.stages.crawl import DEMO_CRAWL, CrawlStage
from spamflow.stages.demo_web import DemoWebStage
from spamflow.stages.ingest import IngestStage
from spamflow.stages.parse import ParseStage
from spamflow.stages.report import ReportParams, ReportStage
from spamflow.storage import Location, input_identities

__all__ = ["PlannedStage", "canonical_json", "class_path", "file_digest", "input_digests", "plan_run", "signature",
           "stage_dir"]


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces: the same value always gives the same text (and hash)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def signature(name: str, version: str, params: dict[str, Any], upstream: dict[str, str],
              input_files: dict[str, str] | None = None) -> str:
    """A stage that reads no file hashes exactly as before input files were part of identity."""
    body: dict[str, Any] = {"stage": name, "version": version, "params": params, "upstream": upstream}
    if input_files:
        body["input_files"] = input_files
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()[:16]


def file_digest(path: Path) -> str:
    """``sha256:<hex>`` of the file's bytes, read in chunks (a large file is never held whole)."""
    with open(path, "rb") as fh:
        return "sha256:" + hashlib.file_digest(fh, "sha256").hexdigest()


def input_digests(cls: type[Stage], params: BaseModel | dict[str, Any], where: str) -> dict[str, str]:
    """The digest of every file the stage declares it reads; a missing one is a config error
    naming the stage, the key and the file (it may have gone since validation).

    ``params``: a detector's parameters as the config validated them (not validated again), or
    the dict the planner made for a core stage (validated here, the only time)."""
    try:
        model = params if isinstance(params, BaseModel) else cls.Params.model_validate(params)
    except ValidationError as exc:
        raise ConfigError(f"{where}: {cls.name}: {exc}") from None
    digests = {}
    for key, path in sorted(cls.input_files(model).items()):
        try:
            digests[key] = file_digest(path)
        except OSError as exc:
            raise ConfigError(f"{where}: stage {cls.name}: input file {key} ({path}): "
                              f"cannot read it: {exc.strerror or exc}") from None
    return digests


def class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def plan_run(config: Config, plugins: SpamflowPlugins) -> dict[str, PlannedStage]:
    """All stages of the run, upstream before downstream."""
    planned: dict[str, PlannedStage] = {}

    def add(cls: type[Stage], given: BaseModel | dict[str, Any], requires: tuple[str, ...]) -> None:
        upstream = {r: planned[r].signature for r in requires}
        files = input_digests(cls, given, config.where())
        params = given.model_dump(mode="json") if isinstance(given, BaseModel) else given
        execution: frozenset[str] = getattr(cls.Params, "execution_keys", frozenset())
        identity = {k: v for k, v in params.items() if k not in execution}
        sig = signature(cls.name, cls.version, identity, upstream, files)
        folder = f"{cls.name}-{sig}"
        local = str(config.workdir / "stages" / folder)
        directory = str(config.published_workdir.join("stages", folder))  # the local folder, or its URL
        planned[cls.name] = PlannedStage(cls.name, class_path(cls), params, upstream, sig, directory, files,
                                         "" if directory == local else local)

    source = config.model.input
    if source.demo is not None:
        add(DemoWebStage, {"seed": source.demo.seed}, ())
        if source.demo.crawl:
            add(CrawlStage, {"from_demo": True, "demo": DEMO_CRAWL}, ("demo",))
            add(IngestStage, {"from_crawl": True}, ("crawl",))
        else:
            add(IngestStage, {"from_demo": True}, ("demo",))
    elif source.hostgraph is not None:  # a host graph, no pages: no ingest, no parse
        from spamflow.stages.hostgraph import HostGraphStage, file_identity

        located = config.hostgraph_locations()
        assert located is not None
        vertices, edges = located
        add(HostGraphStage, {**source.hostgraph.model_dump(mode="json"),
                             "vertices": file_identity(vertices, config.where(), "vertices"),
                             "edges": file_identity(edges, config.where(), "edges")}, ())
    elif source.crawl is not None:
        from spamflow.crawl.settings import read_seeds

        crawls = config.crawls()
        add(CrawlStage, {"crawls": [c.model_dump(mode="json", exclude={"seeds", "seed_file"}) for c in crawls],
                         "seeds": [read_seeds(c, config.base_dir) for c in crawls],
                         "base_dir": str(config.base_dir)}, ())
        add(IngestStage, {"from_crawl": True}, ("crawl",))
    else:
        inputs = [(label, Location.of(loc)) for label, locations in config.warc_inputs().items()
                  for loc in locations]
        identities = input_identities([loc for _, loc in inputs])  # a remote object's error is kept for ingest
        files = [{**identity, "snapshot": label} for (label, _), identity in zip(inputs, identities)]
        add(IngestStage, {"files": files}, ())
    if "ingest" in planned:
        add(ParseStage, config.model.parse.model_dump(mode="json"), ("ingest",))

    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in planned:
            return
        if name in visiting:
            cycle = " -> ".join(visiting[visiting.index(name):] + [name])
            raise ConfigError(f"{config.where()}: detectors require each other in a cycle: {cycle}")
        visiting.append(name)
        cls = plugins.detectors[name].cls
        needs = detector_upstream(name, config.detectors[name], selected, config.model, config.where())
        for need in needs:
            visit(need)
        visiting.pop()
        add(cls, config.detectors[name], needs)

    selected = {n: plugins.detectors[n].cls for n in config.detectors}

    for name in config.detectors:
        visit(name)
    report = config.model.report
    if report.enabled and config.detectors and "parse" in planned:  # the report shows pages: none from a graph
        params = ReportParams(max_items=report.max_items, max_hosts=report.max_hosts)
        add(ReportStage, params, ReportStage.upstream(params, selected))
    return planned
