"""The paper's parameter sweep (Table 1, Figure 3): one parameter varied at a time around a
pivot, reusing every intermediate result a sweep point shares with another.

>>> [p.k for p in sweep_points(QuiltParams(), {"k": [4, 5, 6]})]  # the pivot first, then the others
[5, 4, 6]
>>> [(p.m, p.theta) for p in sweep_points(QuiltParams(), {"m": [10, 50], "theta": [0.5, 0.9]})]
[(50, 0.5), (10, 0.5), (50, 0.9)]
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pyarrow.dataset as ds
from pydantic import ValidationError

from spamflow.errors import ConfigError
from spamflow_quilt.detector import find_quilts, shingled
from spamflow_quilt.params import QuiltParams

SWEPT = ("k", "m", "c", "theta")
TABLE_COLUMNS = ["varied", "k", "m", "c", "theta", "foreign", "phi", "pages", "quilted", "quilted_percent",
                 "mean_sources"]


def parse_values(text: str, kind: type) -> list:
    """``2..10`` (integers), ``0.1..0.9:0.1`` (with a step) or ``10,20,50``.

    >>> parse_values("2..5", int), parse_values("0.25..0.75:0.25", float), parse_values("10,50", int)
    ([2, 3, 4, 5], [0.25, 0.5, 0.75], [10, 50])
    """
    if ".." in text:
        span, _, step_text = text.partition(":")
        lo_text, hi_text = span.split("..")
        lo, hi = kind(lo_text), kind(hi_text)
        step = kind(step_text) if step_text else kind(1)
        values, i = [], 0
        while lo + i * step <= hi + (1e-9 if kind is float else 0):
            values.append(round(lo + i * step, 10) if kind is float else lo + i * step)
            i += 1
        return values
    return [kind(v) for v in text.split(",") if v.strip()]


def sweep_points(pivot: QuiltParams, ranges: Mapping[str, Sequence]) -> list[QuiltParams]:
    """The pivot, then each parameter's values with the others held at the pivot.  Each point
    is validated as the detector's parameters are (``theta`` 7.0 is refused, naming ``--theta``)."""
    points = [pivot]
    for name in SWEPT:
        for value in ranges.get(name, ()):
            point = sweep_point(pivot, name, value)
            if point not in points:
                points.append(point)
    return points


def sweep_point(pivot: QuiltParams, name: str, value: object) -> QuiltParams:
    """``pivot`` with ``name`` set to ``value``, validated (``model_copy(update=)`` would not)."""
    try:
        return QuiltParams.model_validate({**pivot.model_dump(), name: value})
    except ValidationError as exc:
        why = "; ".join(e["msg"] for e in exc.errors())
        raise ConfigError(f"quilt-sweep: --{name} {value}: {why}") from None


def run_sweep(pages: Path, work: Path, points: Iterable[QuiltParams], runner: str,
              runner_args: tuple[str, ...] = (), *, workers: int = 1) -> list[dict]:
    """One Table 1 row per point, over every snapshot of the page table (shingled by ``workers``
    processes)."""
    table = ds.dataset(pages, format="parquet").to_table(columns=["snapshot"])
    snapshots = sorted(set(table["snapshot"].to_pylist()))
    n_pages = table.num_rows
    rows = []
    pivot = None
    for point in points:
        pivot = pivot or point
        quilted, sources = 0, 0
        for snapshot in snapshots:
            shingles, _ = shingled(pages, work, point.k, snapshot, workers)
            # three jobs, not one: a point reuses the outputs of (a) and (b) that it shares with another
            for _doc, cover in find_quilts(shingles, shingles.parent, point, runner, runner_args, one_job=False):
                quilted += 1
                sources += len(cover["sources"])
        varied = next((n for n in SWEPT if getattr(point, n) != getattr(pivot, n)), "pivot")
        rows.append({"varied": varied, "k": point.k, "m": point.m, "c": point.c, "theta": point.theta,
                     "foreign": point.foreign, "phi": point.phi, "pages": n_pages, "quilted": quilted,
                     "quilted_percent": round(100 * quilted / n_pages, 4) if n_pages else 0.0,
                     "mean_sources": round(sources / quilted, 4) if quilted else 0.0})
    return rows


def write_table(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=TABLE_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def plot_figure3(rows: list[dict], path: Path) -> None:
    """Number of quilted pages against each swept parameter, the pivot highlighted (Figure 3)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pivot = rows[0]
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.4), sharey=True)
    for ax, name in zip(axes, SWEPT):
        series = sorted({(r[name], r["quilted"]) for r in rows if r["varied"] in (name, "pivot")})
        ax.plot([x for x, _ in series], [y for _, y in series], marker="o", color="#3b6ea8")
        ax.plot([pivot[name]], [pivot["quilted"]], marker="o", markersize=11, color="#d1495b", zorder=3,
                label="pivot")
        ax.set_xlabel({"theta": "θ"}.get(name, name))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("quilted pages")
    axes[0].legend(loc="best", fontsize=8)
    fig.suptitle(f"Quilted pages around the pivot (k, m, c, θ) = ({pivot['k']}, {pivot['m']}, {pivot['c']}, "
                 f"{pivot['theta']}), foreign = {pivot['foreign']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
