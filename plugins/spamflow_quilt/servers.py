"""Servers as numbers, for the foreign-source variants of Section 3.

A page's registered domain and IP become 64-bit ids (xxh3-64 of the text); an unknown one
(``-`` in a shingle line) is 0, foreign to no page.  Two servers share an id only if their
hashes collide: about n²/2^65 pairs among n servers.

>>> server_id("-"), server_id("example.com") == server_id("example.com") != server_id("example.org")
(0, True)
"""

from xxhash import xxh3_64_intdigest

NO_SERVER = "-"
"""A missing domain or IP in a shingle line."""

NO_SERVER_ID = 0


def server_id(name: str) -> int:
    return NO_SERVER_ID if name == NO_SERVER else (xxh3_64_intdigest(name.encode("utf-8")) or 1)
