"""Figures for the report, drawn with matplotlib's Agg backend into PNG files (no display, no
network).  Each detector draws its own figures in its plugin with :func:`pyplot`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (imported on first use: the CLI starts without it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def scatter(x: Sequence[float], y: Sequence[float], path: Path, xlabel: str, ylabel: str, title: str) -> None:
    """One point per host (missing values left out by the caller)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.6, 4))
    ax.scatter(x, y, s=12, alpha=0.7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
