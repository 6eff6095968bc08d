"""The sieve: a queue with memory, so every normalised URL is enqueued at most once.

It keeps one 64-bit xxh3 fingerprint per URL (BUbiNG's "dictionary of fixed-size
fingerprints"): at 10^6 discovered URLs that is some 60 MB of Python set, and a collision
(probability about n^2 / 2^65, 3e-8 at 10^6 URLs) loses one URL, never fetches one twice.
"""

from __future__ import annotations

import xxhash


def fingerprint(url: str) -> int:
    return xxhash.xxh3_64_intdigest(url.encode("utf-8", "surrogatepass"))


class Sieve:
    """``add(url)`` is True the first time a URL is seen, False ever after."""

    def __init__(self) -> None:
        self._seen: set[int] = set()

    def add(self, url: str) -> bool:
        fp = fingerprint(url)
        if fp in self._seen:
            return False
        self._seen.add(fp)
        return True

    def __contains__(self, url: str) -> bool:
        return fingerprint(url) in self._seen

    def __len__(self) -> int:
        return len(self._seen)
