"""Built-in detector classes follow one pattern, ``<Stage>Detector`` (``quilt`` ->
``QuiltDetector``), and the old names stay importable."""

from __future__ import annotations

import importlib

from spamflow.plugins import build_plugins


def test_every_builtin_detector_is_named_after_its_stage():
    plugins = build_plugins(entry_points=False)
    names = {info.name: info.cls.__name__ for info in plugins.detectors.infos()}
    assert {"quilt", "hss", "spin", "links", "classify", "content", "obvious"} <= set(names)
    assert {n: c for n, c in names.items() if c.lower() != f"{n.replace('_', '')}detector"} == {}


def test_old_class_names_are_aliases():
    for module, old, new in (("spamflow_links.detector", "LinkFeatures", "LinksDetector"),
                             ("spamflow_ensemble.detector", "Classify", "ClassifyDetector"),
                             ("spamflow_obvious.features", "ObviousFeatures", "ObviousDetector")):
        mod = importlib.import_module(module)
        assert getattr(mod, old) is getattr(mod, new)
