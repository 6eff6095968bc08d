"""Incremental scoring (Erdélyi et al., section 6.2): the corpus-wide statistics a model's
features were computed with travel with the model, so ``spamflow score -c new.yaml -m M``
featurises a new crawl's hosts against them instead of recomputing them from the new crawl.

Which outputs those are is each detector's own business (its ``frozen_statistics``: output
name -> the parameter that reads the file back, e.g. content's ``corpus_stats``); this module
only copies the named outputs beside the model (``M.statistics/``) at training time and sets
the parameters to those copies at scoring time. No plugin imports another one."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

FORMAT = "spamflow-model-statistics/1"

Use = Literal["auto", "model", "run"]
"""``--statistics``: ``model`` the frozen ones, ``run`` recompute from the run being scored,
``auto`` the model's unless the run is the one the model was trained on."""


def statistics_dir(model: str | Path) -> Path:
    """Where the statistics of ``model`` live: ``<model>.statistics/`` beside it."""
    return Path(str(model) + ".statistics")


def save_statistics(model: str | Path, stages: Mapping[str, Mapping[str, Path]],
                    declared: Mapping[str, Mapping[str, str]], workdir: str) -> dict[str, dict[str, str]]:
    """Copy every declared frozen output of the training run's ``stages`` beside ``model``
    and write ``statistics.json`` (detector -> parameter -> file); returns that map. A
    previous copy is replaced whole, so a retrained model never mixes runs."""
    folder = statistics_dir(model)
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    kept: dict[str, dict[str, str]] = {}
    for detector, outputs in sorted(declared.items()):
        for output, param in sorted(outputs.items()):
            source = stages.get(detector, {}).get(output)
            if source is None:
                continue
            target = tmp / detector / Path(source).name
            target.parent.mkdir(exist_ok=True)
            if Path(source).is_dir():
                shutil.copytree(source, target)
            else:
                shutil.copyfile(source, target)
            kept.setdefault(detector, {})[param] = f"{detector}/{target.name}"
    (tmp / "statistics.json").write_text(json.dumps({"format": FORMAT, "workdir": workdir, "detectors": kept},
                                                    indent=1, sort_keys=True) + "\n", encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return kept


def load_statistics(model: str | Path) -> dict[str, Any] | None:
    """``statistics.json`` of ``model`` with absolute paths, or None for a model trained
    without them (from tables, or before incremental scoring)."""
    path = statistics_dir(model) / "statistics.json"
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise SystemExit(f"{path}: not JSON ({exc}); retrain with `spamflow train -c`") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SystemExit(f"{path}: not a {FORMAT} file; retrain with `spamflow train -c`")
    for detector, params in data["detectors"].items():
        for param, name in params.items():
            params[param] = str(path.parent / name)
            if not Path(params[param]).exists():
                raise SystemExit(f"{path}: detectors.{detector}.{param}: {params[param]} is missing")
    return data


def freeze_params(detectors: dict[str, Any], statistics: Mapping[str, Any] | None, workdir: str,
                  use: Use) -> dict[str, dict[str, str]]:
    """Set, in the config's ``detectors`` (name -> validated params, changed in place), each
    frozen parameter the model has, unless the config already sets it; returns what was set.
    ``auto`` freezes only when the run being scored is not the model's training run, so
    scoring the training run itself gives the training features, as before."""
    if statistics is None and use == "model":
        raise SystemExit("--statistics model: the model has no frozen statistics (trained from --table, or before "
                         "incremental scoring); retrain it with `spamflow train -c`")
    if statistics is None or use == "run" or (use == "auto" and statistics.get("workdir") == workdir):
        return {}
    frozen: dict[str, dict[str, str]] = {}
    for name, params in statistics["detectors"].items():
        if name not in detectors:
            continue
        update = {k: v for k, v in params.items() if getattr(detectors[name], k, None) is None}
        if update:
            detectors[name] = detectors[name].model_copy(update=update)
            frozen[name] = update
    return frozen
