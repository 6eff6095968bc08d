"""The evidence behind a host's score: which detectors fired for it (with their numbers, the
quilted pages and their sources, its spin campaigns) and its most influential features.

Influence is measured by occlusion: a feature's contribution is how much the ensemble's
score drops when that feature alone is set to its training median.  It needs one extra
scoring pass per feature over the explained hosts, so only the ``explain_hosts`` highest
scored hosts get ``top_features`` (the rest get an empty list).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

FiringRule = tuple[str, float]
"""(column, above): a detector fired on a host when that column of its per-host table is above."""

FIRED: dict[str, FiringRule] = {
    "quilt": ("quilted_pages", 0.0),
    "hss": ("linked_cluster_domains", 2.0),
    "spin": ("campaign_pages", 0.0),
    "ids": ("affiliate_network_domains", 1.0),
}
"""The built-in detectors' rules as they declare them (their first evidence feature,
:func:`firing_rules`), for a table that comes without declarations (``--table``, a run made
before them): quilted pages; an HSS template network (three or more registered domains of the
host's HTML-template cluster, joined by their links, each linking mostly inside the cluster:
a theme shared by unrelated sites is not one); pages in a spin
campaign (campaigns span at least spin's ``min_domains`` registered domains and hold no error
or boilerplate-only page; being a promoted site is a feature, ``is_promoted``, not a firing);
a network of shared link-borne operator ids spanning two or more registered domains (ids'
``affiliate_network_domains``; networks joined only by analytics or AdSense ids are features).
Links and content declare no evidence feature: their scores are not verdicts on their own.
docs/fired.md lists every detector's rule."""


def firing_rules(declared: Mapping[str, Mapping[str, Any]]) -> dict[str, FiringRule]:
    """Each detector's firing rule from what it declares (``host_tables`` of its stage record,
    or of its class, :mod:`spamflow.per_host`): the first feature marked ``evidence`` of its
    first per-host table keyed by snapshot, fired above its ``above``; the report's host table
    fires by the same declaration (``spamflow.report.host_columns.declared_columns``), so a
    third-party detector takes part by declaring one.  A detector that declares tables but no
    evidence feature never fires; one that declares none (an old record) keeps its :data:`FIRED`
    rule if it has one."""
    rules: dict[str, FiringRule] = {}
    for detector, tables in declared.items():
        if not tables:
            if detector in FIRED:
                rules[detector] = FIRED[detector]
            continue
        for spec in tables.values():
            if list(spec.get("key", ["snapshot"]))[0] != "snapshot":
                continue
            evidence = [(name, f) for name, f in (spec.get("features") or {}).items() if f.get("evidence")]
            if evidence:
                name, feature = evidence[0]
                rules[detector] = (name, float(feature.get("above", 0.0)))
            break
    return rules


def declared_by_classes(classes: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``host_tables`` as a stage record has them, from detector classes by name (for scoring a
    table without stage records: the registered detectors' declarations)."""
    return {name: {t.output: t.to_json() for t in getattr(cls, "host_tables", ())} for name, cls in classes.items()}


MAX_LISTED = 5


def _quilt_pages(path: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            out.setdefault((q["snapshot"], q["host"]), []).append(
                {"url": q["url"], "sources": [s["url"] for s in q.get("sources", [])][:MAX_LISTED]})
    return out


def _spin_campaigns(path: Path) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            c = json.loads(line)
            for host in sorted({p["host"] for p in c.get("pages", [])}):
                out.setdefault((c["snapshot"], host), []).append(c["campaign"])
    return out


def detector_details(stages: Mapping[str, Mapping[str, Path]]) -> dict[str, dict[tuple[str, str], Any]]:
    """Per detector, extra evidence per (snapshot, host) from its other outputs."""
    details: dict[str, dict[tuple[str, str], Any]] = {}
    if "quilt" in stages and "quilts" in stages["quilt"]:
        details["quilt"] = _quilt_pages(Path(stages["quilt"]["quilts"]))
    if "spin" in stages and "campaigns" in stages["spin"]:
        details["spin"] = _spin_campaigns(Path(stages["spin"]["campaigns"]))
    return details


def fired_detectors(row: Mapping[str, float], key: tuple[str, str],
                    details: Mapping[str, Mapping[tuple[str, str], Any]],
                    rules: Mapping[str, FiringRule] | None = None) -> dict[str, dict[str, Any]]:
    """``{detector: {feature: value, ...}}`` for the detectors that fired by ``rules``
    (:func:`firing_rules`; default the built-ins', :data:`FIRED`)."""
    by_detector: dict[str, dict[str, float]] = {}
    for name, value in row.items():
        detector, _, feature = name.partition(".")
        if not math.isnan(value):
            by_detector.setdefault(detector, {})[feature] = value
    out: dict[str, dict[str, Any]] = {}
    for detector, (column, above) in (FIRED if rules is None else rules).items():
        values = by_detector.get(detector)
        if values and values.get(column, 0) > above:
            entry: dict[str, Any] = {k: (int(v) if float(v).is_integer() else round(v, 6)) for k, v in values.items()}
            extra = details.get(detector, {}).get(key)
            if extra:
                entry["quilted" if detector == "quilt" else "campaigns"] = extra[:MAX_LISTED]
            out[detector] = entry
    return out


def occlusion(score: Callable[[np.ndarray], np.ndarray], X: np.ndarray, medians: np.ndarray,
              base: np.ndarray | None = None, batch_rows: int = 50_000) -> np.ndarray:
    """Contribution of each feature to each row's score (n × p): score(x) − score(x with that
    feature at its training median).  The occluded copies are stacked and scored in batches
    of about ``batch_rows`` rows (per-call overhead dominates for a few hosts)."""
    n, p = X.shape
    base = score(X) if base is None else base
    out = np.zeros((n, p))
    per_batch = max(1, batch_rows // max(1, n))
    for start in range(0, p, per_batch):
        cols = range(start, min(p, start + per_batch))
        stacked = np.repeat(X[None, :, :], len(cols), axis=0)
        for k, j in enumerate(cols):
            stacked[k, :, j] = medians[j]
        scored = score(stacked.reshape(-1, p)).reshape(len(cols), n)
        for k, j in enumerate(cols):
            out[:, j] = base - scored[k]
    return out


def top_features(X: np.ndarray, contributions: np.ndarray, names: list[str], k: int) -> list[list[list[Any]]]:
    """Per row, the ``k`` features of largest absolute contribution: [feature, value, contribution],
    contributions rounded to 6 decimals; one that rounds to 0 is no evidence and is left out."""
    rows = []
    for i in range(len(X)):
        order = np.argsort(-np.abs(contributions[i]), kind="stable")[:k]
        shown = [(j, round(float(contributions[i, j]), 6)) for j in order]
        rows.append([[names[j], None if math.isnan(X[i, j]) else round(float(X[i, j]), 6), c]
                     for j, c in shown if c != 0])
    return rows


def evidence_column(table: Any, rows: np.ndarray, scores: np.ndarray, X: np.ndarray, bundle: dict[str, Any],
                    details: Mapping[str, Any], explain_hosts: int, k: int,
                    rules: Mapping[str, FiringRule] | None = None) -> list[str]:
    """The ``evidence`` JSON of each scored row of ``table`` (``rows``): the detectors that
    fired for the host, and for the ``explain_hosts`` highest scores its ``k`` most
    influential features (``X``: the rows in the model's feature order)."""
    explain = rows[np.argsort(-scores[rows], kind="stable")[:explain_hosts]] if k else rows[:0]
    tops: dict[int, list] = {}
    if len(explain):
        from spamflow_ensemble.model import score  # scikit-learn: imported when a run explains its scores

        contrib = occlusion(lambda Z: score(bundle, Z), X[explain], bundle["medians"], scores[explain])
        for i, t in zip(explain, top_features(X[explain], contrib, list(bundle["features"]), k)):
            tops[int(i)] = t
    out = []
    for i in rows:
        row = dict(zip(table.features, table.X[i].tolist()))
        key = (table.snapshot[i], table.host[i])
        out.append(json.dumps({"detectors": fired_detectors(row, key, details, rules),
                               "top_features": tops.get(int(i), [])}, sort_keys=True))
    return out
