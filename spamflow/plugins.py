"""Loading plugins and collecting the detectors they register.

Built-in plugins are imported by module path (this works from a checkout, an installed
wheel and a zipped MapReduce job alike); third-party plugins come from the ``spamflow``
entry-point group.  ``SPAMFLOW_LOAD_PLUGINS`` restricts third-party loading: unset loads
all, an empty string loads none, ``a,b`` loads only the entry points named ``a`` and ``b``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import os
from dataclasses import dataclass
from typing import Any

import pluggy

import spamflow
from spamflow import hookspecs
from spamflow.detector import Detector
from spamflow.errors import PluginError

ENTRY_POINT_GROUP = "spamflow"
LOAD_ENV = "SPAMFLOW_LOAD_PLUGINS"
BUILTIN_PLUGINS: tuple[str, ...] = ("spamflow_obvious.plugin", "spamflow_quilt.plugin", "spamflow_hss.plugin",
                                     "spamflow_links.plugin", "spamflow_content.plugin", "spamflow_spin.plugin",
                                     "spamflow_ids.plugin", "spamflow_ensemble.plugin")
"""Modules holding the built-in hook implementations; each is listed under its package name."""


@dataclass(frozen=True)
class PluginInfo:
    name: str
    version: str
    origin: str  # "builtin", "entry point of <distribution>" or "registered in code"
    hooks: tuple[str, ...]


@dataclass(frozen=True)
class DetectorInfo:
    cls: type[Detector]
    plugin: str

    @property
    def name(self) -> str:
        return self.cls.name


class DetectorRegistry:
    """Detector classes by name, each with the plugin that registered it."""

    def __init__(self) -> None:
        self._by_name: dict[str, DetectorInfo] = {}

    def add(self, cls: type[Detector], *, plugin: str) -> None:
        if not (isinstance(cls, type) and issubclass(cls, Detector)):
            raise PluginError(
                f"plugin {plugin!r} registered {cls!r}, which is not a spamflow.detector.Detector subclass"
            )
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name.isidentifier():
            raise PluginError(
                f"plugin {plugin!r} registered {cls.__qualname__} whose name {name!r} "
                "is not an identifier (it becomes a YAML key and a stage name)"
            )
        if name in ("ingest", "parse", "demo", "crawl", "report"):
            raise PluginError(f"plugin {plugin!r}: detector name {name!r} is reserved for a core stage")
        if name in self._by_name:
            first = self._by_name[name].plugin
            raise PluginError(
                f"detector name {name!r} is registered by two plugins: {first!r} and {plugin!r}; "
                f"uninstall one, or restrict loading with {LOAD_ENV}"
            )
        self._by_name[name] = DetectorInfo(cls, plugin)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> DetectorInfo:
        return self._by_name[name]

    def names(self) -> list[str]:
        return sorted(self._by_name)

    def infos(self) -> list[DetectorInfo]:
        return [self._by_name[n] for n in self.names()]


class SpamflowPlugins:
    """A plugin manager with its detectors collected."""

    def __init__(self, pm: pluggy.PluginManager, registry: DetectorRegistry,
                 builtins: tuple[str, ...]) -> None:
        self.pm = pm
        self.detectors = registry
        self._builtins = builtins

    def plugins(self) -> list[PluginInfo]:
        dists = {self.pm.get_name(p): d for p, d in self.pm.list_plugin_distinfo()}
        out = []
        for name, plugin in sorted(self.pm.list_name_plugin(), key=lambda np: str(np[0])):
            if plugin is hookspecs:
                continue
            hooks = tuple(sorted(c.name for c in self.pm.get_hookcallers(plugin) or []))
            if name in dists:
                dist = dists[name]
                out.append(PluginInfo(name, dist.version, f"entry point of {dist.project_name}", hooks))
            else:
                origin = "builtin" if name in map(plugin_name, self._builtins) else "registered in code"
                out.append(PluginInfo(name, _module_version(plugin), origin, hooks))
        return out


def plugin_name(module_path: str) -> str:
    """``spamflow_quilt.plugin`` is listed as ``spamflow_quilt``."""
    return module_path.removesuffix(".plugin")


def _module_version(module: Any) -> str:
    return str(getattr(module, "__version__", spamflow.__version__))


def _allowed_entry_points() -> set[str] | None:
    raw = os.environ.get(LOAD_ENV)
    if raw is None:
        return None
    return {p.strip() for p in raw.split(",") if p.strip()}


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    allowed = _allowed_entry_points()
    names = [None] if allowed is None else sorted(allowed)
    for name in names:
        try:
            pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP, name=name)
        except Exception as exc:  # a broken third-party plugin must say which one it is
            raise PluginError(f"could not load a plugin of the {ENTRY_POINT_GROUP!r} entry-point "
                              f"group{' named ' + repr(name) if name else ''}: {exc}") from exc


def build_plugins(builtins: tuple[str, ...] = BUILTIN_PLUGINS, *, entry_points: bool = True,
                  extra: dict[str, Any] | None = None) -> SpamflowPlugins:
    """Build a fresh plugin manager: built-ins, then entry points, then ``extra`` plugin
    objects by name (for tests and embedding), and collect the detectors they register."""
    pm = pluggy.PluginManager("spamflow")
    pm.add_hookspecs(hookspecs)
    for module_path in builtins:
        pm.register(importlib.import_module(module_path), name=plugin_name(module_path))
    if entry_points:
        _load_entry_points(pm)
    for name, obj in (extra or {}).items():
        pm.register(obj, name=name)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {exc.plugin!r} implements a hook spamflow does not define: {exc}") from exc
    registry = DetectorRegistry()
    for impl in pm.hook.spamflow_register_detectors.get_hookimpls():
        impl.function(register=functools.partial(registry.add, plugin=impl.plugin_name))
    return SpamflowPlugins(pm, registry, builtins)


@functools.cache
def get_plugins() -> SpamflowPlugins:
    """The CLI's cached plugin manager; tests call :func:`build_plugins` for their own."""
    return build_plugins()
