"""Temporal content features (Erdélyi et al., section 3.2, after Dai et al.): Ave, AveDiff,
Dev, DevDiff and Decay of each host's BM25 vector over the T_max snapshots.

``vectors`` is the list of BM25 matrices t^(1) .. t^(T_max), oldest first, hosts × terms, with
the same rows and columns in each (a host missing at a snapshot is a zero row, as the paper
says).  The formulas are the paper's, normalisers included: Dev divides by T_max - 1, DevDiff
by T_max - 2, so Dev and AveDiff need two snapshots and DevDiff three.
"""

from __future__ import annotations

import math
from typing import Literal

import scipy.sparse as sp

DecayWeight = Literal["as_printed", "decaying"]


def ave(vectors: list[sp.csr_matrix]) -> sp.csr_matrix:
    """Ave = (1/T_max) Σ_T t^(T)."""
    return sp.csr_matrix(_sum(vectors) / len(vectors))


def ave_diff(vectors: list[sp.csr_matrix]) -> sp.csr_matrix:
    """AveDiff = 1/(T_max - 1) Σ_{T<T_max} |t^(T+1) - t^(T)|."""
    _need(vectors, 2, "AveDiff")
    return sp.csr_matrix(_sum(_abs_diffs(vectors)) / (len(vectors) - 1))


def dev(vectors: list[sp.csr_matrix]) -> sp.csr_matrix:
    """Dev = 1/(T_max - 1) Σ_T (t^(T) - Ave)^2."""
    _need(vectors, 2, "Dev")
    mean = ave(vectors)
    return sp.csr_matrix(_sum([(v - mean).power(2) for v in vectors]) / (len(vectors) - 1))


def dev_diff(vectors: list[sp.csr_matrix]) -> sp.csr_matrix:
    """DevDiff = 1/(T_max - 2) Σ_{T<T_max} (|t^(T+1) - t^(T)| - AveDiff)^2."""
    _need(vectors, 3, "DevDiff")
    diffs = _abs_diffs(vectors)
    mean = sp.csr_matrix(_sum(diffs) / len(diffs))  # = AveDiff: the paper divides by T_max - 1 = len(diffs)
    return sp.csr_matrix(_sum([(d - mean).power(2) for d in diffs]) / (len(vectors) - 2))


def decay(vectors: list[sp.csr_matrix], lam: float, weight: DecayWeight = "as_printed") -> sp.csr_matrix:
    """Decay = Σ_T λ e^{λ(T_max - T)} t^(T) as printed; ``decaying`` uses e^{-λ(T_max - T)},
    the reading of "exponentially decaying weight" in the text (docs/content.md)."""
    t_max = len(vectors)
    sign = 1.0 if weight == "as_printed" else -1.0
    return sp.csr_matrix(_sum([lam * math.exp(sign * lam * (t_max - t)) * v
                               for t, v in enumerate(vectors, start=1)]))


def available(t_max: int) -> list[str]:
    """The features defined for ``t_max`` snapshots."""
    need = {"ave": 1, "ave_diff": 2, "dev": 2, "dev_diff": 3, "decay": 1}
    return [name for name, n in need.items() if t_max >= n]


def _sum(matrices: list[sp.csr_matrix]) -> sp.csr_matrix:
    total = sp.csr_matrix(matrices[0], dtype=float, copy=True)
    for m in matrices[1:]:
        total = total + m
    return total


def _abs_diffs(vectors: list[sp.csr_matrix]) -> list[sp.csr_matrix]:
    return [abs(vectors[t + 1] - vectors[t]) for t in range(len(vectors) - 1)]


def _need(vectors: list[sp.csr_matrix], n: int, name: str) -> None:
    if len(vectors) < n:
        raise ValueError(f"{name} needs at least {n} snapshots; got {len(vectors)}")
