"""The report's figures, drawn with matplotlib's Agg backend into PNG files (no display, no
network): the CheiRank-PageRank plane, temporal link features and the ROC curve."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def rank_plane(density: npt.NDArray[np.float64], edges: npt.NDArray[np.float64], path: Path, title: str) -> None:
    """Eom et al.'s Fig. 2: the share of hosts per cell of the (K, K*) plane, log axes."""
    from matplotlib.colors import LogNorm

    plt = _pyplot()
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


def similarity_curve(similarity: npt.NDArray[np.float64], path: Path, title: str) -> None:
    """Sim_b against rank, best first (HSS Figure 4; the steps are the gaps between templates)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.4))
    ax.step(np.arange(1, len(similarity) + 1), similarity, where="post")
    ax.set_xlabel("pages, by decreasing HS-similarity")
    ax.set_ylabel("Sim_b to the reference page")
    ax.set_ylim(0, 1.02)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def scatter(x: Sequence[float], y: Sequence[float], path: Path, xlabel: str, ylabel: str, title: str) -> None:
    """One point per host (missing values left out by the caller)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.6, 4))
    ax.scatter(x, y, s=12, alpha=0.7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def roc_curve(fpr: Sequence[float], tpr: Sequence[float], auc: float | None, path: Path) -> None:
    """The classifier's ROC curve on its test hosts, with the chance diagonal."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.2, 4))
    ax.plot(fpr, tpr, drawstyle="steps-post", label=f"AUC {auc:.3f}" if auc is not None else "ROC")
    ax.plot([0, 1], [0, 1], linestyle=":", color="grey")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
