"""Which URLs wait in a low-priority lane, so that a link from a clean page can promote one.

A steered crawl puts a URL found on a steered host in its host's low lane (workbench.py).
When a page of an unsteered host links to a URL that is still waiting there, the URL was
not found *only* through spam: it is **promoted**, queued again in the normal lane, and its
low-lane copy is skipped when it comes up (the normal lane is served first, so the promoted
copy is always fetched first).  Spilled lanes cannot drop an entry in place, hence the skip.

Memory: two fingerprint sieves (about 8 bytes per low-lane URL each, as sieve.py) and a set
of the promoted URLs whose low-lane copy is still queued.
"""

from __future__ import annotations

from spamflow.crawl.sieve import Sieve, fingerprint


class LowLaneIndex:
    def __init__(self) -> None:
        self.entered = Sieve()  # URLs put in a low lane
        self.left = Sieve()  # URLs whose low-lane entry came up (fetched or skipped)
        self.promoted: set[int] = set()  # fingerprints: promoted, low-lane copy still queued

    def enter(self, url: str) -> None:
        self.entered.add(url)

    def promote(self, url: str) -> bool:
        """True if ``url`` waits in a low lane and was not promoted yet; it now is."""
        if url not in self.entered or url in self.left:
            return False
        fp = fingerprint(url)
        if fp in self.promoted:
            return False
        self.promoted.add(fp)
        return True

    def mark_promoted(self, url: str) -> None:
        """A resumed crawl re-reads a promotion from the journal."""
        self.promoted.add(fingerprint(url))

    def leave(self, url: str) -> bool:
        """A low-lane entry comes up: True to fetch it, False to skip it (it was promoted)."""
        self.left.add(url)
        fp = fingerprint(url)
        if fp in self.promoted:
            self.promoted.discard(fp)
            return False
        return True

    def copies(self) -> int:
        """Queued low-lane entries that will be skipped (not pending URLs)."""
        return len(self.promoted)
