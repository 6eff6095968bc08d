"""The YAML config: schema, validation and error messages that name file, line, key and fix.

The schema is strict: unknown keys, wrong types and values outside a fixed set are errors
raised before anything runs.  Relative paths are taken relative to the config file.
``docs/config.md`` is the reference; a test checks that it names every key.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import types
import typing
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from spamflow.crawl.settings import CrawlSettings
from spamflow.detector import RunSettings, Stage
from spamflow.errors import ConfigError
from spamflow.inputs import (
    RemoteInputError,
    archive_kind,
    folder_archives,
    is_paths_file,
    kinds_line,
    read_paths_file,
)
from spamflow.plugins import SpamflowPlugins
from spamflow.storage import Location, StorageError, default_cache_dir, local_files
from spamflow.yaml_loader import ConfigLoader, DuplicateKeyError, ShapeError, check_shape

Runner = Literal["auto", "inline", "local", "spark", "hadoop", "emr"]
RUNNERS: tuple[str, ...] = typing.get_args(Runner)
CORE_STAGES: tuple[str, ...] = ("ingest", "parse")
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class DemoInput(_Section):
    """Generate the bundled synthetic web (``spamflow.demo``) and use its WARC files."""

    seed: int = 0
    crawl: bool = False
    """Serve the demo web over HTTP on loopback addresses and crawl it (stage ``crawl``) instead of
    reading its WARC files directly."""


class HostGraphInput(_Section):
    """A published host graph instead of pages (docs/pipelines.md): Common Crawl's cc-webgraph
    host-level files, or a plain edge list with a vertex file.  Read by the ``hostgraph`` stage."""

    vertices: str
    """``id<TAB>reversed.host`` lines (cc-webgraph), or ``id host`` (plain); gzip or not; a path
    (relative to the config), or an ``s3://`` / ``http(s)://`` URL."""
    edges: str
    """``from<TAB>to`` lines of vertex ids (cc-webgraph), or ``from to`` (plain)."""
    format: Literal["cc-webgraph", "plain"] = "cc-webgraph"
    reversed_names: bool | None = None
    """Host names written reversed (``com.example.www``); default: true for cc-webgraph."""
    snapshot: str = "hostgraph"
    """The label of the graph's rows (e.g. the release name)."""
    engine: Literal["auto", "memory", "mapreduce"] = "auto"
    """memory: read the graph in this process; mapreduce: in one mrjob job (no process holds
    the edges); auto: mapreduce on a cluster runner or above ``mapreduce_above_bytes``."""
    mapreduce_above_bytes: int = Field(2**30, ge=0)
    """``engine: auto``: the edge file's stored size (bytes) above which the graph is read by
    the MapReduce job."""


class InputSection(_Section):
    """Exactly one source of pages: ``warc`` files, the ``demo`` web, or a ``crawl``; or, with
    no pages at all, a ``hostgraph``."""

    warc: list[str] | dict[str, list[str]] | None = None
    """Local globs, ``s3://`` / ``http(s)://`` URLs, or paths files (``*.paths[.gz]``): docs/config.md."""
    base_url: str | None = None
    """What the relative lines of a paths file are joined to (``https://data.commoncrawl.org/``)."""
    snapshot: str | None = None
    demo: DemoInput | None = None
    crawl: CrawlSettings | list[CrawlSettings] | None = None
    """One crawl, or several (one per snapshot): see docs/crawl.md."""
    hostgraph: HostGraphInput | None = None

    @model_validator(mode="after")
    def _one_source(self) -> InputSection:
        given = [k for k in ("warc", "demo", "crawl", "hostgraph") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of warc, demo, crawl, hostgraph (got {given or 'none'})")
        if self.hostgraph is not None and not _LABEL.match(self.hostgraph.snapshot):
            raise ValueError(f"hostgraph.snapshot {self.hostgraph.snapshot!r} must match {_LABEL.pattern}")
        if self.snapshot is not None and not isinstance(self.warc, list):
            raise ValueError("snapshot goes with a list of warc globs; with a mapping the keys are the snapshots")
        if isinstance(self.crawl, list):
            snaps = [c.snapshot for c in self.crawl]
            if not snaps or len(set(snaps)) != len(snaps):
                raise ValueError(f"crawl: give one or more crawls with distinct snapshot names (got {snaps})")
        labels = list(self.warc) if isinstance(self.warc, dict) else [self.snapshot] if self.snapshot else []
        for label in labels:
            if not _LABEL.match(label):
                raise ValueError(f"snapshot label {label!r} must match {_LABEL.pattern} (it names folders)")
        return self


class MapReduceSection(_Section):
    """Where mrjob stages run.  Not part of any output's identity: switching redoes nothing."""

    runner: Runner = "inline"
    args: list[str] = []
    """Extra mrjob options for the runner, e.g. [--spark-master, "local[2]"] or [--hadoop-streaming-jar, PATH]."""
    inline_below: int = Field(RunSettings.inline_below, ge=0)
    """``runner: auto`` runs the jobs ``inline`` when the run's WARC input is at most this many
    bytes, else on ``local`` (see :func:`spamflow.mr.engine.resolve_runner`)."""


class SchedulerSection(_Section):
    """Luigi scheduler: local (default) or a central ``luigid`` at host:port."""

    host: str | None = None
    port: int = Field(8082, ge=1, le=65535)


class ParseSection(_Section):
    """How WARC records become page rows."""

    max_bytes: int = Field(5_000_000, ge=1024)
    """HTML bodies longer than this are parsed up to this many bytes and counted as truncated."""
    max_depth: int = Field(2000, ge=16)
    """Elements nested deeper than this: the page is parsed up to the start tag that would open
    the deeper one and counted ``too_deep`` (lexbor's cost grows with depth: docs/parse.md)."""
    engine: Literal["auto", "memory", "mapreduce"] = "auto"
    """In this process (``memory``) or as a map-only mrjob job (``mapreduce``); the same pages."""


class ReportSettings(_Section):
    """The ``report`` stage, run after every detector: a static HTML report (docs/report.md)."""

    enabled: bool = True
    """False: the DAG has no report stage (``spamflow report`` still writes one on demand)."""
    max_items: int = Field(50, ge=1)
    """Quilts, clusters and campaigns shown with their evidence, per kind."""
    max_hosts: int = Field(5000, ge=1)
    """Rows of the host table."""


class ConfigModel(_Section):
    workdir: str
    """A local directory, or an object-store / HDFS URL (``s3://bucket/prefix``): docs/config.md."""
    cache_dir: str | None = None
    """Where a remote workdir's stages run and are kept on this machine (default ~/.cache/spamflow)."""
    input: InputSection
    mapreduce: MapReduceSection = MapReduceSection()
    scheduler: SchedulerSection = SchedulerSection()
    workers: int = Field(1, ge=1)
    stages_at_once: int = Field(1, ge=1)
    """Independent stages run at once, each in its own process (docs/config.md)."""
    strict: bool = False
    workdir_force: bool = False
    """Write into a non-empty workdir spamflow did not create (docs/config.md; ``--force``)."""
    parse: ParseSection = ParseSection()
    report: ReportSettings = ReportSettings()
    detectors: dict[str, dict[str, Any] | bool | None] = {}

    @field_validator("workdir")
    @classmethod
    def _nonempty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("workdir must not be empty")
        return v


@dataclass
class Config:
    """A validated config with paths resolved and detector parameters typed."""

    path: Path | None
    model: ConfigModel
    workdir: Path
    """The run's directory on this machine: the workdir itself, or for a remote workdir its
    local cache (:func:`spamflow.storage.mirror_dir`), where commands may write scratch files."""
    detectors: dict[str, BaseModel] = field(default_factory=dict)  # enabled ones, config order
    workdir_url: str | None = None
    """The remote workdir (``s3://bucket/run``); None for a local one."""

    def with_force(self, force: bool | None) -> Config:
        """This config with ``workdir_force`` true if ``force`` (the ``--force`` flag) is."""
        if force:
            self.model = self.model.model_copy(update={"workdir_force": True})
        return self

    def claim_workdir(self) -> None:
        """Before a command writes into the workdir: refuse a non-empty folder spamflow did not
        create unless ``workdir_force`` (:mod:`spamflow.workdir_guard`), and mark it as spamflow's."""
        from spamflow.workdir_guard import claim_workdir

        claim_workdir(self.workdir_location, force=self.model.workdir_force, where=self.where())

    @property
    def workdir_location(self) -> str:
        """Where stages and run.json are published: the URL, or the local directory's path."""
        return self.workdir_url or str(self.workdir)

    @property
    def published_workdir(self) -> Location:
        """The workdir as a location: where stages and run.json are published."""
        return Location.of(self.workdir_location)

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path else Path.cwd()

    def warc_locations(self) -> dict[str | None, list[Location]]:
        """The configured inputs by snapshot label (None: take the label from the WARC date),
        each a location: a URL as given, a local glob under the config's folder."""
        warc = self.model.input.warc
        if warc is None:
            return {}
        by_label = warc if isinstance(warc, dict) else {self.model.input.snapshot: warc}
        return {label: [Location.of(g, base=self.base_dir) for g in globs] for label, globs in by_label.items()}

    def warc_globs(self) -> dict[str | None, list[str]]:
        """Absolute globs (and URLs) by snapshot label (None: take the label from the WARC date)."""
        return {label: [str(loc) for loc in locations] for label, locations in self.warc_locations().items()}

    def warc_inputs(self) -> dict[str | None, list[str]]:
        """Every input location by snapshot label: local files (globs resolved, as
        ``warc_files``), remote URLs as given, and the entries of paths files."""
        return {label: [str(f) for f in files] for label, files in self._input_files(paths_files=True).items()}

    def warc_files(self) -> dict[str | None, list[Path]]:
        """The local input files (globs resolved now; a glob that matches nothing is a config
        error; URLs are not local files), by snapshot label."""
        return {label: local_files(files) for label, files in self._input_files(paths_files=False).items()}

    def _input_files(self, *, paths_files: bool) -> dict[str | None, list[Location]]:
        out: dict[str | None, list[Location]] = {}
        for label, patterns in self.warc_locations().items():
            found: list[Location] = []
            for pattern in patterns:
                if is_paths_file(str(pattern)):
                    if paths_files:
                        found.extend(Location.of(u) for u in self._paths_file(str(pattern)))
                    continue
                hits = self._folder(pattern) if self._is_folder(pattern) else pattern.files()
                if not hits:
                    raise ConfigError(f"{self.where()}: input.warc: {str(pattern)!r} matches no file")
                found.extend(hits)
            out[label] = list(dict.fromkeys(found))
        return out

    @staticmethod
    def _is_folder(pattern: Location) -> bool:
        """A store that cannot be asked now makes the entry a file, whose identity error the
        plan keeps for ingest to count (or fail on, with --strict), as for any remote file."""
        try:
            return pattern.is_folder()
        except RemoteInputError:
            return False

    def _folder(self, folder: Location) -> list[Location]:
        """Every WARC and ARC file in ``folder`` (by suffix, or by content for other names);
        a folder with none is an error that says what it holds."""
        try:
            archives, kinds = folder_archives(folder)
        except RemoteInputError as exc:
            raise ConfigError(f"{self.where()}: input.warc: {exc}") from None
        if not archives:
            raise ConfigError(f"{self.where()}: input.warc: folder {str(folder)!r} holds no WARC or ARC file "
                              f"(.warc, .warc.gz, .arc, .arc.gz, or a file that starts like one); found "
                              f"{kinds_line(kinds)}")
        return archives

    def input_summary(self) -> str | None:
        """``input.warc: 8 files: 5 WARC (gzip), 2 ARC (gzip), 1 WARC``: what the inputs are, by
        name or first bytes (:func:`spamflow.inputs.archive_kind`); None without ``input.warc``."""
        if self.model.input.warc is None:
            return None
        files = [f for fs in self._input_files(paths_files=True).values() for f in fs]
        kinds: Counter[str] = Counter()
        for f in files:
            try:
                kinds[archive_kind(f) or "neither WARC nor ARC"] += 1
            except RemoteInputError:
                kinds["unreadable now"] += 1
        return f"input.warc: {len(files)} files: {kinds_line(kinds)}"

    def _paths_file(self, pattern: str) -> list[str]:
        try:
            return read_paths_file(pattern, self.model.input.base_url)
        except RemoteInputError as exc:
            raise ConfigError(f"{self.where()}: input.warc: paths file {exc}") from None

    def hostgraph_locations(self) -> tuple[str, str] | None:
        """``input.hostgraph``'s vertex and edge files, relative paths taken from the config's folder."""
        graph = self.model.input.hostgraph
        if graph is None:
            return None
        return tuple(str(Location.of(g, base=self.base_dir))  # type: ignore[return-value]
                     for g in (graph.vertices, graph.edges))

    def crawls(self) -> list[CrawlSettings]:
        """The crawls of ``input.crawl`` (one per snapshot), in config order."""
        crawl = self.model.input.crawl
        return [] if crawl is None else crawl if isinstance(crawl, list) else [crawl]

    def where(self) -> str:
        return str(self.path) if self.path else "<config>"


def load_config(path: str | Path, plugins: SpamflowPlugins, *, workdir: str | Path | None = None) -> Config:
    """Read, validate and resolve a YAML config file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from exc
    return parse_config(text, plugins, path=path.absolute(), workdir=workdir)


def parse_config(text: str, plugins: SpamflowPlugins, *, path: Path | None = None,
                 workdir: str | Path | None = None) -> Config:
    where = str(path) if path else "<config>"
    try:
        check_shape(text)  # before anything is built: no alias bomb, no nesting PyYAML recurses into
        data = yaml.load(text, Loader=ConfigLoader)
        node = yaml.compose(text, Loader=ConfigLoader)
    except (DuplicateKeyError, ShapeError) as exc:
        raise ConfigError(f"{where} {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: the top level must be a mapping of keys (workdir, input, ...)")
    try:
        model = ConfigModel.model_validate_json(json.dumps(data))
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, where, node, ConfigModel)) from exc
    base = path.parent if path else Path.cwd()
    config = _with_workdir(path, model, base, workdir)
    config.detectors = _validate_detectors(model, plugins, where, node, base)
    _check_runner(config, plugins)
    _check_crawls(config)
    config.warc_inputs()  # a glob that matches nothing, or an unreadable paths file, fails here
    return config


def _with_workdir(path: Path | None, model: ConfigModel, base: Path, override: str | Path | None) -> Config:
    """The config with its workdir resolved: a local path (relative to the config file, an
    override to the current directory) as before, or a remote URL checked now (reachable,
    writable) and given its local cache under ``cache_dir``."""
    given = str(override) if override is not None else model.workdir
    location = Location.of(given.rstrip("/") or given, base=None if override is not None else base).resolved()
    try:
        location.check_workdir()
    except StorageError as exc:
        raise ConfigError(f"{str(path) if path else '<config>'}: workdir: {exc}") from None
    cache = base / model.cache_dir if model.cache_dir else default_cache_dir()
    workdir = location.working_dir(cache.resolve())
    _refuse_unsafe_workdir(workdir, path)
    return Config(path=path, model=model, workdir=workdir, workdir_url=location.url)


def _refuse_unsafe_workdir(wd: Path, path: Path | None) -> None:
    """A filesystem root or the home folder is never a workdir: a run writes ``stages/``,
    ``run.json`` and ``report/`` into it, beside whatever the user keeps there."""
    home = Path.home().resolve()
    if wd == Path(wd.anchor) or wd == home:
        what = "a filesystem root" if wd == Path(wd.anchor) else "your home folder"
        raise ConfigError(f"{str(path) if path else '<config>'}: workdir: {str(wd)!r} is {what}; a run writes "
                          "stages/, run.json and report/ into its workdir, so give a folder of its own "
                          "(e.g. runs/example)")


def _check_crawls(config: Config) -> None:
    """Seed files, seeds, filter expressions and a steering run fail now, not mid-crawl."""
    from spamflow.crawl.filters import parse_filter
    from spamflow.crawl.settings import read_seeds
    from spamflow.crawl.steer import load_steering

    for crawl in config.crawls():
        try:
            read_seeds(crawl, config.base_dir)
            if crawl.filter:
                parse_filter(crawl.filter, config.base_dir, where=f"input.crawl ({crawl.snapshot}).filter")
            if crawl.steer:
                load_steering(crawl.steer, config.base_dir, where=f"input.crawl ({crawl.snapshot}).steer")
        except ConfigError as exc:
            raise ConfigError(f"{config.where()}: {exc}") from None


def _validate_detectors(model: ConfigModel, plugins: SpamflowPlugins, where: str,
                        node: yaml.Node | None, base: Path | None = None) -> dict[str, BaseModel]:
    registry = plugins.detectors
    enabled: dict[str, BaseModel] = {}
    for name, block in model.detectors.items():
        if name not in registry:
            raise ConfigError(
                f"{where}{_line(node, ('detectors', name))}: detectors.{name}: unknown detector {name!r}; "
                f"available: {', '.join(registry.names()) or 'none (no detector plugin is loaded)'}"
            )
        if block is False:
            continue
        params_cls = registry[name].cls.Params
        try:
            # context: detectors may resolve their own relative paths against the config's folder
            context = {"config_dir": str(base)} if base else None
            enabled[name] = params_cls.model_validate_json(json.dumps(block if isinstance(block, dict) else {}),
                                                           strict=True, context=context)
        except ValidationError as exc:
            raise ConfigError(_format_errors(exc, where, node, params_cls, prefix=("detectors", name))) from exc
    selected = {n: registry[n].cls for n in enabled}
    for name, params in enabled.items():
        detector_upstream(name, params, selected, model, where)
    return enabled


def run_core_stages(model: ConfigModel) -> tuple[str, ...]:
    """The core stages a run of ``model`` has, which a detector may read besides other detectors."""
    source = model.input
    if source.hostgraph is not None:  # no pages: the graph is the run's only core stage
        return ("hostgraph",)
    demo = ("demo",) if source.demo is not None else ()
    crawl = ("crawl",) if source.crawl is not None or (source.demo is not None and source.demo.crawl) else ()
    return (*demo, *crawl, *CORE_STAGES)


def detector_upstream(name: str, params: BaseModel, selected: Mapping[str, type[Stage]], model: ConfigModel,
                      where: str) -> tuple[str, ...]:
    """The stages detector ``name`` reads (its ``upstream``), checked by the one rule both
    validation and the planner apply: each is a core stage of the run or a selected detector,
    never the detector itself."""
    needs = tuple(selected[name].upstream(params, selected))
    core = run_core_stages(model)
    for need in needs:
        if need == name:
            raise ConfigError(f"{where}: detectors.{name} names itself among the stages it reads")
        if need in core or need in selected:
            continue
        if need in ("demo", "crawl", "ingest", "parse", "report", "hostgraph"):
            hint = selected[name].missing_upstream_hint(need, params)
            raise ConfigError(f"{where}: detectors.{name} reads stage {need!r}, which this config does not run"
                              + (f": {hint}" if hint else ""))
        raise ConfigError(f"{where}: detectors.{name} requires the {need!r} detector; "
                          f"enable it under detectors: ({need}: {{}})")
    return needs


def _check_runner(config: Config, plugins: SpamflowPlugins) -> None:
    """A MapReduce detector on a runner whose software is missing fails now, not mid-run."""
    parse_may = config.model.parse.engine != "memory"  # the core parse stage's job (auto: on Spark)
    if not parse_may and not any(plugins.detectors[n].cls.uses_mapreduce for n in config.detectors):
        return
    runner = config.model.mapreduce.runner
    missing = None
    if runner == "spark":
        from spamflow.mr.spark_needs import spark_problems

        problems = spark_problems(config.model.mapreduce.args)
        missing = "; ".join(problems) if problems else None
    elif runner == "hadoop" and not _hadoop_command():
        missing = "the 'hadoop' command on PATH (or set HADOOP_HOME)"
    elif runner == "emr" and importlib.util.find_spec("boto3") is None:
        missing = "boto3 (pip install boto3) and AWS credentials"
    if missing:
        raise ConfigError(f"{config.where()}: mapreduce.runner: {runner!r} needs {missing}")


def _hadoop_command() -> str | None:
    """``hadoop`` on PATH, else ``$HADOOP_HOME/bin/hadoop`` (as mrjob looks for it)."""
    home = os.environ.get("HADOOP_HOME")
    candidate = Path(home) / "bin" / "hadoop" if home else None
    return shutil.which("hadoop") or (str(candidate) if candidate and candidate.is_file() else None)


def _format_errors(exc: ValidationError, where: str, node: yaml.Node | None,
                   model: type[BaseModel], prefix: tuple[str, ...] = ()) -> str:
    lines = []
    for err in exc.errors():
        loc = prefix + tuple(str(p) for p in err["loc"])
        key = ".".join(loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            allowed = _allowed_keys(model, tuple(str(p) for p in err["loc"][:-1]))
            msg = (f"unknown key {loc[-1]!r}; allowed keys: {', '.join(allowed)}" if allowed
                   else f"unknown key {loc[-1]!r}; this section takes no keys")
        elif err["type"] == "missing":
            msg = "required key is missing"
        else:
            got = err.get("input")
            msg = err["msg"] + (f" (got {got!r})" if not isinstance(got, (dict, list)) else "")
        lines.append(f"{where}{_line(node, loc)}: {key}: {msg}")
    return "\n".join(lines)


def _allowed_keys(model: type[BaseModel], loc: tuple[str, ...]) -> list[str]:
    """The field names of the model found at ``loc`` inside ``model`` (for error messages)."""
    current: Any = model
    for part in loc:
        fields = getattr(current, "model_fields", {})
        if part not in fields:
            return []
        current = _model_in(fields[part].annotation)
        if current is None:
            return []
    return sorted(getattr(current, "model_fields", {}))


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is Union:
        for arg in typing.get_args(annotation):
            found = _model_in(arg)
            if found:
                return found
    return None


def _line(node: yaml.Node | None, loc: tuple[str, ...]) -> str:
    """' line N' for the deepest YAML node on ``loc`` that exists, else ''."""
    found = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if str(k.value) == part), None)
            if node is None:
                # an unknown key: point at the key itself if present in the parent
                break
        elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
            node = node.value[int(part)]
        else:
            break
        found = node
    return f" line {found.start_mark.line + 1}" if found is not None else ""
