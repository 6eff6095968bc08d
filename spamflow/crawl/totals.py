"""The counts of a crawl so far, rebuilt from what is on disk, so that a crawl resumed after a
kill reports the whole crawl (pages, bytes, errors...), not only what this run fetched.

Only what is durable counts: a page's tally if its WARC record is complete (a page cut by
the kill is fetched again, and its new tally replaces the old), each error once (lines
equal but for the date are one error: a page refetched after a kill finds the same error,
and the crawler does not log it again), and the counts of each robots.txt row.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from spamflow.crawl.journal import Journal


def error_key(record: dict[str, object]) -> str:
    """An error line without its date: the same error logged again after a kill has the same key."""
    return json.dumps({k: v for k, v in record.items() if k != "date"}, sort_keys=True, ensure_ascii=False)


@dataclass
class SoFar:
    counts: Counter[str] = field(default_factory=Counter)
    error_keys: set[str] = field(default_factory=set)
    """:func:`error_key` of every error logged, so the crawler does not log one twice."""
    seeds_tallied: bool = False
    """Whether offering the seeds was tallied (a resumed crawl offers them again)."""


def totals_so_far(journal: Journal, stored: set[str]) -> SoFar:
    """The counts of the pages in ``stored`` (URLs with a complete WARC response record), of
    the seeds, of every error and of every robots.txt fetch in ``journal``."""
    so_far = SoFar()
    counts = so_far.counts
    # a page's last tally is the attempt whose record was stored (an earlier one was cut by a kill);
    # two passes keep only a line number per page in memory, not its counts
    last = {row["url"]: i for i, row in enumerate(journal.read_tallies()) if row["url"] in stored}
    chosen = set(last.values())
    for i, row in enumerate(journal.read_tallies()):
        if row["url"] is None:
            counts.update(row["counts"])
            so_far.seeds_tallied = True
        elif i in chosen:
            counts.update(row["counts"])
    seen = so_far.error_keys
    for record in journal.read_errors():
        key = error_key(record)
        if key in seen:
            continue
        seen.add(key)
        counts[f"errors_{record['kind']}"] += 1
        if "depth" in record:  # a page request that got no response (the crawler logs its depth)
            counts["requests"] += 1
    for row in journal.read_robots():
        counts.update(row.get("counts", {}))
    return so_far
