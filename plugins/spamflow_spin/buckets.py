"""Shuffle keys for the spin jobs' in-mapper combining: immutables hashed into a fixed number of
buckets, so that a map task sends one long record per bucket instead of one per immutable
(mrjob's per-record work -- protocol, sort, the local runner's split in the driver, the
reducer's grouping -- was most of the jobs' CPU; their Python work per entry is a split).

>>> bucket_of("the", 4096) == bucket_of("the", 4096) < 4096
True
"""

from zlib import crc32


def bucket_of(immutable: str, buckets: int) -> int:
    """The bucket of an immutable: the same in every process and on every runner (``hash()`` of
    a str is salted per process)."""
    return crc32(immutable.encode("utf-8")) % buckets
