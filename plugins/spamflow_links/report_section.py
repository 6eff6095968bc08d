"""The link detector's part of the run report: the CheiRank-PageRank plane of each snapshot,
the in-link change between snapshots, the host-graph summary, and its headline columns of the
host table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spamflow import hookimpl
from spamflow.report import HostColumns, ReportSection

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

STAGE = "links"

LINKS = """
{% for title, src in figures %}<figure><img src="{{ src }}" alt="{{ title }}"><figcaption>{{ title }}</figcaption>
</figure>{% endfor %}
{% if summary %}<details><summary>host-graph summary (summary.json)</summary><pre>{{ summary|tojson(indent=1) }}</pre>
</details>{% endif %}
"""


def rank_plane(density: npt.NDArray[np.float64], edges: npt.NDArray[np.float64], path: Path, title: str) -> None:
    """Eom et al.'s Fig. 2: the share of hosts per cell of the (K, K*) plane, log axes."""
    import numpy as np
    from matplotlib.colors import LogNorm

    from spamflow.report.plots import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.6, 4))
    shown = np.where(density > 0, density, np.nan)
    positive = density[density > 0]
    norm = LogNorm(vmin=positive.min(), vmax=positive.max()) if positive.size else None
    mesh = ax.pcolormesh(edges, edges, shown.T, norm=norm, cmap="viridis")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("K (PageRank index)")
    ax.set_ylabel("K* (CheiRank index)")
    ax.set_title(title, fontsize=9)
    fig.colorbar(mesh, ax=ax, label="fraction of hosts")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def rank_density_figures(path: str | Path, assets: Path) -> list[tuple[str, str]]:
    """One CheiRank-PageRank plane per snapshot of ``rank_density.npz``."""
    import numpy as np

    figures = []
    with np.load(path) as data:
        snapshots = sorted({k.rsplit("/", 1)[0] for k in data.files if k.endswith("/density")})
        for i, snapshot in enumerate(snapshots):
            name = f"rank_plane_{i}.png"
            rank_plane(data[f"{snapshot}/density"], data[f"{snapshot}/edges"], assets / name,
                       f"CheiRank-PageRank plane, {snapshot}")
            figures.append((snapshot, f"assets/{name}"))
    return figures


def links_section(record: dict[str, Any], assets: Path) -> ReportSection:
    import pyarrow.parquet as pq

    from spamflow.report.plots import scatter
    from spamflow.report.sections import environment

    figures = []
    if Path(record["outputs"].get("rank_density", "")).is_file():
        figures += rank_density_figures(record["outputs"]["rank_density"], assets)
    temporal = Path(record["outputs"].get("temporal", ""))
    if temporal.is_file():
        table = pq.read_table(temporal, columns=["snapshot_t0", "snapshot_t1", "IDR", "IGR"]).to_pylist()
        pairs = sorted({(r["snapshot_t0"], r["snapshot_t1"]) for r in table})
        for i, (t0, t1) in enumerate(pairs):
            points = [(r["IDR"], r["IGR"]) for r in table if (r["snapshot_t0"], r["snapshot_t1"]) == (t0, t1)
                      and r["IDR"] is not None and r["IGR"] is not None]
            if points:
                xs, ys = zip(*points)
                name = f"temporal_{i}.png"
                scatter(xs, ys, assets / name, "IDR (in-degree ratio)", "IGR (in-growth ratio)",
                        f"in-link change {t0} to {t1}, {len(points)} hosts")
                figures.append((f"{t0} → {t1}", f"assets/{name}"))
    summary_path = Path(record["outputs"].get("summary", ""))
    summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.is_file() else {}
    return ReportSection("links", "Link and temporal features", environment().from_string(LINKS).render(
        figures=figures, summary=summary), order=50)


@hookimpl
def spamflow_report_host_columns(stage: str) -> HostColumns | None:
    if stage != STAGE:
        return None
    return HostColumns(("pagerank", "trustrank", "reciprocity"), names={
        "pagerank": "PageRank", "trustrank": "TrustRank", "reciprocity": "out-links linked back (fraction)"})


@hookimpl
def spamflow_report_section(stage: str, record: dict[str, Any], assets: Path) -> ReportSection | None:
    return links_section(record, assets) if stage == STAGE else None
