"""Min-sampling fingerprints with pre-hashing (HSS section 3.3, Procedure 1) and Sim_b.

A page's n-grams are split by the pre-hash into m classes, ``i = preHash(s) mod m``; in
class i they are ordered by a permutation sigma_i of the 64-bit hashes and the minimum is
kept: ``V[i] = min sigma_i(h)``.  sigma_i = bit shuffle o XOR mask (section 3.3.1): the hash
is XORed with a random 64-bit mask, then its bits are shuffled; both are drawn per
dimension from a seed.  A dimension no n-gram falls in stays empty (``EMPTY``, the paper's
infinity) and never matches (Sim_b, section 3.3).

Our bit shuffles are the rotations (bit b goes to bit (b + r_i) mod 64, r_i in 1..63): a
subfamily of the bit shuffles, as the paper allows, applied in five numpy passes where a
general shuffle takes some fifty (eight table lookups per hash; measured 3x slower for the
whole fingerprint).  The preHash is already a finaliser-mixed 64-bit hash, so the order of
the n-grams of one class is a random one whatever sigma_i is; sigma_i makes the orders of
different seeds independent.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from spamflow_hss.ngram_hash import MASK64
from spamflow_hss.noise_window import window_ngram_hashes

U64 = npt.NDArray[np.uint64]
EMPTY = np.uint64(MASK64)
"""An empty dimension (the paper's infinity).  A real minimum equal to 2**64 - 1 would read
as empty too: probability 2**-64 per dimension."""


@dataclass(frozen=True)
class Orderings:
    """The m orderings sigma_i = rotate(r_i) o xor(mask_i), drawn from a seed."""

    m: int
    seed: int
    masks: U64
    """(m,) XOR masks, sigma_i^2(x) = x ^ masks[i]."""
    rotations: U64
    """(m,) left rotations in 1..63, sigma_i^1 moves bit b to bit (b + rotations[i]) mod 64."""

    def shuffle(self, i: int) -> list[int]:
        """sigma_i^1 as a bit map: bit b of the input goes to bit ``shuffle(i)[b]``."""
        return [(b + int(self.rotations[i])) % 64 for b in range(64)]

    def permute(self, hashes: U64, dims: npt.NDArray[np.intp]) -> U64:
        """sigma_{dims[j]}(hashes[j]) for every j."""
        x = hashes ^ self.masks[dims]
        r = self.rotations[dims]
        out = x << r
        out |= x >> (_SIXTY_FOUR - r)
        return out


_SIXTY_FOUR = np.uint64(64)


@functools.cache
def orderings(m: int, seed: int) -> Orderings:
    """The orderings for (m, seed): the same seed always gives the same fingerprints."""
    if m < 1:
        raise ValueError(f"m must be at least 1, got {m}")
    rng = np.random.default_rng(seed)
    masks = rng.integers(0, np.iinfo(np.uint64).max, size=m, dtype=np.uint64, endpoint=True)
    rotations = rng.integers(1, 63, size=m, dtype=np.uint64, endpoint=True)
    return Orderings(m, seed, masks, rotations)


def fingerprint(noise: str, n: int, m: int, seed: int = 0, window: int = 0) -> U64:
    """Procedure 1 over the n-grams of ``noise`` (every one with window = 0; else the first
    and last ``window``, see noise_window.py): the (m,) fingerprint vector."""
    return fingerprint_hashes(window_ngram_hashes(noise, n, window), orderings(m, seed))


def fingerprint_hashes(hashes: U64, order: Orderings) -> U64:
    """Procedure 1 for pre-hashed n-grams: i = h mod m, V[i] = min(V[i], sigma_i(h))."""
    vector = np.full(order.m, EMPTY, np.uint64)
    if len(hashes):
        dims = (hashes % np.uint64(order.m)).astype(np.intp)
        np.minimum.at(vector, dims, order.permute(hashes, dims))
    return vector


def matched_dimensions(a: U64, b: U64) -> npt.NDArray[np.int64]:
    """Dimensions where two fingerprints (or rows of two broadcastable stacks) hold the same
    minimum; empty dimensions never match.  Sim_b = matched_dimensions / m."""
    return np.count_nonzero((a == b) & (a != EMPTY), axis=-1)


def sim_b(a: U64, b: U64) -> float:
    """Sim_b of two fingerprints (section 3.3): matched dimensions over m."""
    return float(matched_dimensions(a, b)) / a.shape[-1]
