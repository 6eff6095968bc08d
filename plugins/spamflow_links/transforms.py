"""Becchetti et al.'s *transformed* link features (logarithms, products and ratios of the raw
Web Spam Challenge link features), computed from the raw ones.

Each feature is a small expression; the same expression gives both its value and its name in
the public WEBSPAM-UK2007 spelling (``L_x`` = log x, ``log_OP_..._CP_`` = log(...), ``_div_``,
``_mul_``, ``_m_`` = minus, ``max_OP_a_b_c_CP_``), so a name cannot drift from its formula.
Only the 84 transformed columns whose names survive in the public (partial) copy
``lbt-train-gr.csv`` are defined: their formulas can be read off the names and checked
against its values.  The links plugin applies them to its host-level columns (no suffix),
and offers them through ``spamflow_table_transforms`` to ``spamflow train|score|evaluate
--table`` for ``_hp``/``_mp`` columns (the classifier knows no detector).

The public file's conventions for values outside the functions' domains are kept:
log(x) = -50 for x <= 0; a/0 = 1 when a = 0, else 0.  A missing (NaN) input gives NaN.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

LOG_OF_ZERO = -50.0
"""What the public transformed file holds for log of 0 (or of a negative difference)."""

HOST_SUFFIXES = ("_hp", "_mp")
"""The public set's two readings of a host: its home page and its max-PageRank page."""


def safe_log(x: np.ndarray) -> np.ndarray:
    """Natural log; LOG_OF_ZERO where x <= 0; NaN stays NaN."""
    x = np.asarray(x, dtype=np.float64)
    out = np.where(np.isnan(x), np.nan, LOG_OF_ZERO)
    np.log(x, out=out, where=x > 0)
    return out


def safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b; where b = 0: 1 if a = 0 else 0 (the public file's rule); NaN stays NaN."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    out = np.where(a == 0, 1.0, 0.0)
    np.divide(a, b, out=out, where=b != 0)
    out[np.isnan(a) | np.isnan(b)] = np.nan
    return out


@dataclass(frozen=True)
class Expr:
    """A formula over raw link features; ``name(s)``/``value(cols, s)`` with s the suffix."""

    def name(self, s: str) -> str:
        raise NotImplementedError

    def value(self, cols: Mapping[str, np.ndarray], s: str) -> np.ndarray:
        raise NotImplementedError

    def inputs(self, s: str) -> set[str]:
        raise NotImplementedError


@dataclass(frozen=True)
class Var(Expr):
    """A raw feature; ``fixed`` pins its suffix (for the hp-over-mp ratios)."""
    feature: str
    fixed: str | None = None

    def name(self, s: str) -> str:
        return self.feature + (s if self.fixed is None else self.fixed)

    def value(self, cols: Mapping[str, np.ndarray], s: str) -> np.ndarray:
        return np.asarray(cols[self.name(s)], dtype=np.float64)

    def inputs(self, s: str) -> set[str]:
        return {self.name(s)}


@dataclass(frozen=True)
class Op(Expr):
    """``div``, ``mul``, ``m`` (minus), ``min``, ``max``, ``avg`` or ``log`` of its arguments."""
    op: str
    args: tuple[Expr, ...]

    def name(self, s: str) -> str:
        inner = [a.name(s) for a in self.args]
        if self.op == "log":
            (arg,) = self.args
            return f"L_{inner[0]}" if isinstance(arg, Var) else f"log_OP_{inner[0]}_CP_"
        if self.op in ("min", "max", "avg"):
            return f"{self.op}_OP_{'_'.join(inner)}_CP_"
        text = f"_{self.op}_".join(inner)
        return f"_OP_{text}_CP_" if self.op == "m" else text

    def value(self, cols: Mapping[str, np.ndarray], s: str) -> np.ndarray:
        v = [a.value(cols, s) for a in self.args]
        if self.op == "log":
            return safe_log(v[0])
        if self.op == "div":
            return safe_div(v[0], v[1])
        if self.op == "mul":
            return v[0] * v[1]
        if self.op == "m":
            return v[0] - v[1]
        stacked = np.vstack(v)
        if self.op == "min":
            return stacked.min(axis=0)
        if self.op == "max":
            return stacked.max(axis=0)
        return stacked.mean(axis=0)  # avg

    def inputs(self, s: str) -> set[str]:
        return set().union(*(a.inputs(s) for a in self.args))


def _log(e: Expr) -> Op:
    return Op("log", (e,))


def _div(a: Expr | str, b: Expr | str) -> Op:
    return Op("div", (Var(a) if isinstance(a, str) else a, Var(b) if isinstance(b, str) else b))


HP, MP, BOTH = ("_hp",), ("_mp",), HOST_SUFFIXES
_NEIGHBOUR_RATIOS = (_div("neighbors_2", "indegree"), _div("neighbors_3", "neighbors_2"),
                     _div("neighbors_4", "neighbors_3"))
_TPR_RATIOS = tuple(_div(f"truncatedpagerank_{t + 1}", f"truncatedpagerank_{t}") for t in (1, 2, 3))

TRANSFORMS: tuple[tuple[Expr, tuple[str, ...]], ...] = (
    # logarithms of raw features
    *((_log(Var(f)), sfx) for f, sfx in (
        ("indegree", MP), ("outdegree", BOTH), ("assortativity", MP), ("avgin_of_out", BOTH),
        ("avgout_of_in", MP), ("pagerank", BOTH), ("prsigma", BOTH), ("trustrank", BOTH),
        *((f"siteneighbors_{k}", BOTH) for k in (1, 2, 3, 4)),
        ("neighbors_2", BOTH), ("neighbors_3", MP), ("neighbors_4", BOTH),
        *((f"truncatedpagerank_{t}", BOTH) for t in (1, 2, 3, 4)))),
    # sum of the in-degrees of the out-neighbours and of the out-degrees of the in-neighbours
    (_log(Op("mul", (Var("avgin_of_out"), Var("outdegree")))), BOTH),
    (_log(Op("mul", (Var("avgout_of_in"), Var("indegree")))), BOTH),
    # quantities per unit of PageRank
    *((_log(_div(f, "pagerank")), sfx) for f, sfx in (
        ("indegree", MP), ("outdegree", BOTH), ("prsigma", BOTH),
        ("siteneighbors_1", BOTH), ("siteneighbors_2", BOTH), ("siteneighbors_3", BOTH), ("siteneighbors_4", MP),
        ("neighbors_2", MP), ("neighbors_3", MP), ("neighbors_4", MP),
        *((f"truncatedpagerank_{t}", BOTH) for t in (1, 2, 3, 4)))),
    (_log(_div("trustrank", "indegree")), MP),
    # growth of the supporting sites and pages with the distance
    (_log(_div("siteneighbors_2", "siteneighbors_1")), BOTH),
    (_log(_div(Op("m", (Var("siteneighbors_2"), Var("siteneighbors_1"))), Var("pagerank"))), BOTH),
    (_div(Var("siteneighbors_1", "_hp"), Var("siteneighbors_1", "_mp")), ("",)),
    (_log(_div("neighbors_3", "neighbors_2")), HP),
    (_log(Op("max", _NEIGHBOUR_RATIOS)), MP),
    (_log(Op("avg", _NEIGHBOUR_RATIOS)), BOTH),
    (_div(Var("neighbors_3", "_hp"), Var("neighbors_3", "_mp")), ("",)),
    # growth of truncated PageRank with the truncation distance
    *((r, BOTH) for r in reversed(_TPR_RATIOS)),
    *((_log(Op(agg, _TPR_RATIOS)), BOTH) for agg in ("min", "max", "avg")),
)
"""Every transformed feature with the suffixes the public file names it for ("" for the two
hp-over-mp ratios, whose suffixes are part of the formula)."""


def table_transforms() -> list[tuple[str, Expr, str]]:
    """(public name, formula, suffix) of the 84 named transformed features, in the public file's order
    within each family."""
    return [(e.name(s), e, s) for e, suffixes in TRANSFORMS for s in suffixes]


def host_transforms() -> list[tuple[str, Expr, str]]:
    """(name, formula, "") of every single-reading formula at host level (no suffix), once each."""
    out: dict[str, tuple[str, Expr, str]] = {}
    for e, suffixes in TRANSFORMS:
        if suffixes != ("",):
            out.setdefault(e.name(""), (e.name(""), e, ""))
    return list(out.values())


def transformed_features(columns: Mapping[str, np.ndarray], *, host_level: bool = False) -> dict[str, np.ndarray]:
    """The transformed features whose raw inputs are all in ``columns`` (by name), skipping any
    whose name is already a column.  ``host_level``: the unsuffixed host-level formulas."""
    chosen = host_transforms() if host_level else table_transforms()
    return {name: e.value(columns, s) for name, e, s in chosen
            if name not in columns and e.inputs(s) <= columns.keys()}


def table_transform(columns: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The transform this plugin offers feature tables (``spamflow_table_transforms``): the
    public transformed link features of a table that has their raw ``_hp``/``_mp`` inputs."""
    return transformed_features(columns)
