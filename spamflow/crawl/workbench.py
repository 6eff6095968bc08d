"""The workbench: which host may be fetched now without breaking politeness.

As in BUbiNG (section 3.2): a :class:`VisitState` per host (scheme and authority) holds its
FIFO queue and ``next_fetch``; visit states sharing an IP are gathered in a
:class:`WorkbenchEntry` with its own ``next_fetch``; the workbench is a priority queue of
entries keyed by ``max(entry.next_fetch, next_fetch of its first visit state)``.  Taking a
host marks both it and its IP busy (the "token"), so at most one request per IP is in flight;
releasing them sets ``next_fetch = end of the request + delay``.  Hence two requests to one
host, or to one IP, start at least the host (IP) delay apart, whatever the concurrency.

A visit state has two lanes: ``queue`` (the normal lane) and ``low``, the URLs a steered crawl
found only on steered hosts (docs/crawl.md, "Steering").  Its next URL comes from ``queue``
while that has one, so links from spam wait behind the host's other URLs; politeness sees
one host either way.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import Any

from spamflow.crawl.frontier import HostQueue


@dataclass(eq=False)
class VisitState:
    key: str  # scheme://authority
    host: str
    port: int
    queue: HostQueue  # the normal lane
    delay: float  # the host delay, raised by robots.txt Crawl-delay
    next_fetch: float = 0.0
    ip: str | None = None
    entry: WorkbenchEntry | None = None
    robots: Any = None  # a robots.RobotsRules once robots.txt is settled
    busy: bool = False
    scheduled: bool = False
    accepted: int = 0  # URLs accepted for this host (the per-host cap counts these)
    connect_port: int | None = None  # from a resolve: "addr:port" pin
    low: HostQueue | None = None  # the low-priority lane, made by the first URL it gets

    def pending(self) -> int:
        """URLs waiting in both lanes."""
        return len(self.queue) + (len(self.low) if self.low is not None else 0)

    def popleft(self) -> tuple[bytes, bool]:
        """The next entry, from the normal lane first, and whether it came from the low lane."""
        if len(self.queue) or self.low is None:
            return self.queue.popleft(), False
        return self.low.popleft(), True


@dataclass(eq=False)
class WorkbenchEntry:
    ip: str
    next_fetch: float = 0.0
    hosts: list[tuple[float, int, VisitState]] = field(default_factory=list)
    busy: bool = False
    version: int = 0


class Workbench:
    """Priority queue of IP entries, each a priority queue of its hosts' FIFO queues."""

    def __init__(self, ip_delay: float) -> None:
        self.ip_delay = ip_delay
        self.entries: dict[str, WorkbenchEntry] = {}
        self._heap: list[tuple[float, int, int, WorkbenchEntry]] = []
        self._seq = itertools.count()
        self.front = 0  # hosts with pending URLs waiting in an entry (BUbiNG's front, upper bound)

    def attach(self, state: VisitState, ip: str) -> None:
        """Put a host whose address is now known on the workbench."""
        state.ip = ip
        state.entry = self.entries.get(ip) or self.entries.setdefault(ip, WorkbenchEntry(ip))
        self.schedule(state)

    def schedule(self, state: VisitState) -> None:
        """A host has pending URLs: queue it in its entry unless it is busy or queued already."""
        if state.scheduled or state.busy or not state.pending() or state.entry is None:
            return
        state.scheduled = True
        self.front += 1
        entry = state.entry
        heapq.heappush(entry.hosts, (state.next_fetch, next(self._seq), state))
        self._push(entry)

    def _push(self, entry: WorkbenchEntry) -> None:
        if entry.busy or not entry.hosts:
            return
        entry.version += 1
        key = max(entry.next_fetch, entry.hosts[0][0])
        heapq.heappush(self._heap, (key, next(self._seq), entry.version, entry))

    def _clean(self) -> None:
        while self._heap:
            _, _, version, entry = self._heap[0]
            if version == entry.version and not entry.busy and entry.hosts:
                return
            heapq.heappop(self._heap)

    def next_time(self) -> float | None:
        """When the next host becomes fetchable (None: no host is waiting)."""
        self._clean()
        return self._heap[0][0] if self._heap else None

    def take(self, now: float) -> VisitState | None:
        """The host to fetch now, marked busy with its IP; None if none is ready."""
        self._clean()
        if not self._heap or self._heap[0][0] > now:
            return None
        _, _, _, entry = heapq.heappop(self._heap)
        _, _, state = heapq.heappop(entry.hosts)
        state.scheduled = False
        self.front -= 1
        entry.busy = state.busy = True
        entry.version += 1
        return state

    def release(self, state: VisitState, end: float | None) -> None:
        """Give back a taken host; ``end`` is when its request ended (None: no request was made)."""
        entry = state.entry
        assert entry is not None and state.busy
        state.busy = entry.busy = False
        if end is not None:
            state.next_fetch = end + state.delay
            entry.next_fetch = end + self.ip_delay
        self.schedule(state)
        self._push(entry)
