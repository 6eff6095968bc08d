"""64-bit hashes of the overlapping character n-grams of a string (HSS section 3.3.1,
``preHash``), all n-grams of a page in a few numpy passes.

An n-gram starting at position j, with code points c_j .. c_{j+n-1}, hashes to

    preHash = fmix64( sum_{t<n} c_{j+t} * B**t  mod 2**64 )

a polynomial hash (B odd, so invertible modulo 2**64) followed by MurmurHash3's 64-bit
finaliser, so that every bit, and so ``preHash mod m``, depends on every character.
The polynomial sums of all windows come from one prefix sum: with P_k = sum_{i<k} c_i B**i,
window j is (P_{j+n} - P_j) * B**-j, all modulo 2**64 (numpy's uint64 arithmetic wraps).

>>> [hex(h) for h in ngram_hashes("<a>", 2)] == [hex(reference_ngram_hash("<a", 2)), hex(reference_ngram_hash("a>", 2))]
True
>>> len(ngram_hashes("< >", 32))
0
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

BASE = 0x9E3779B97F4A7C15  # odd (the 64-bit golden ratio), so B has an inverse modulo 2**64
BASE_INVERSE = pow(BASE, -1, 1 << 64)
MASK64 = (1 << 64) - 1
_FMIX1 = np.uint64(0xFF51AFD7ED558CCD)
_FMIX2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)

U64 = npt.NDArray[np.uint64]
_powers: U64 = np.ones(1, np.uint64)
_inverse_powers: U64 = np.ones(1, np.uint64)


def _power_tables(length: int) -> tuple[U64, U64]:
    """B**i and B**-i modulo 2**64 for i < length, grown by doubling and kept."""
    global _powers, _inverse_powers
    if len(_powers) < length:
        size = max(length, 2 * len(_powers), 4096)
        _powers = _geometric(BASE, size)
        _inverse_powers = _geometric(BASE_INVERSE, size)
    return _powers, _inverse_powers


def _geometric(ratio: int, size: int) -> U64:
    """ratio**i modulo 2**64 for i < size, by repeated doubling of a prefix (log size passes)."""
    out = np.empty(size, np.uint64)
    out[0] = 1
    filled, step = 1, ratio
    while filled < size:
        take = min(filled, size - filled)
        np.multiply(out[:take], np.uint64(step), out=out[filled:filled + take])
        filled += take
        step = step * step & MASK64
    return out


def code_points(text: str) -> U64:
    """The code points of ``text`` as uint64 (ASCII read as bytes, others as UTF-32)."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), np.uint8).astype(np.uint64)
    return np.frombuffer(text.encode("utf-32-le"), np.uint32).astype(np.uint64)


def fmix64(x: U64) -> U64:
    """MurmurHash3's 64-bit finaliser (a bijection of uint64), in place on ``x``; returns it."""
    x ^= x >> _S33
    x *= _FMIX1
    x ^= x >> _S33
    x *= _FMIX2
    x ^= x >> _S33
    return x


def ngram_hashes(text: str, n: int) -> U64:
    """preHash of every overlapping n-gram of ``text`` (len(text) - n + 1 values, or none)."""
    c = code_points(text)
    windows = len(c) - n + 1
    if windows <= 0:
        return np.empty(0, np.uint64)
    powers, inverse = _power_tables(len(c))
    prefix = np.empty(len(c) + 1, np.uint64)
    prefix[0] = 0
    np.multiply(c, powers[:len(c)], out=c)
    np.cumsum(c, out=prefix[1:])
    sums = prefix[n:] - prefix[:windows]
    sums *= inverse[:windows]
    return fmix64(sums)


def reference_ngram_hash(gram: str, n: int) -> int:
    """The same hash of one n-gram with Python integers: the definition, for tests."""
    assert len(gram) == n
    x = sum(ord(ch) * pow(BASE, t, 1 << 64) for t, ch in enumerate(gram)) & MASK64
    for multiplier in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        x ^= x >> 33
        x = x * multiplier & MASK64
    return x ^ (x >> 33)
