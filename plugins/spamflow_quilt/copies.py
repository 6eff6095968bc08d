"""Copies: pages whose gram sets are identical, handled as one.

Real crawls are full of copies (mirrors, syndication, scraped pages).  Every gram of a text
on r pages is in at least r pages, so a literal reading of Section 2 makes r(r-1) triples
per gram of that text, and a crawl where texts have 20 copies fills a disk with them.  But
Section 2 only looks at gram *sets*:

* Copies are interchangeable as sources: they contribute the same pairs (d', g) to C, so
  the greedy cover takes the smallest eligible copy (its tie-break) and the others then
  cover nothing new.  One candidate per copy group, named by its smallest eligible page,
  gives the same sources.
* Copies have the same covers when they are on the same server (for ``foreign``; for
  ``none`` every page is its own "server", as only d' = d is excluded), so a *unit* — the
  patchy pages of one gram set on one server — is covered once, for all its pages.
* A page with an eligible copy (another page of its gram set, on another server) has
  exactly one source: the copy covers all its patch grams in the greedy's first round.
  With c >= 2 it is no quilt, and its unit makes no triples at all.

A gram set is named by a 64-bit hash of the page's packed, sorted, distinct grams.  Two
different sets share a name only if their hashes collide *and* the two pages share a patch
gram (about p/2^64 for p such pairs of pages).

>>> gram_set_id(b"2:u8:0100000000000000ff00000000000000") == gram_set_id(b"2:u8:0100000000000000ff00000000000000")
True
"""

from __future__ import annotations

from xxhash import xxh3_64_intdigest


def gram_set_id(packed_grams: bytes) -> int:
    """The name of a page's gram set (its packed, sorted, distinct gram hashes)."""
    return xxh3_64_intdigest(packed_grams)

