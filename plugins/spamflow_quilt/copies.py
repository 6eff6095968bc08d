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
* df counts pages, and copies share every gram: a gram set on w pages adds w to the df of
  each of its grams.  So the shingle file holds a gram set once, as one *line* with its
  pages (:class:`CopyWindow`), and job (a) counts each of the line's grams w times.

A gram set is named by a 64-bit hash of the page's packed, sorted, distinct grams.  Two
different sets share a name only if their hashes collide *and* the two pages share a patch
gram (about p/2^64 for p such pairs of pages).

>>> gram_set_id(b"2:u8:0100000000000000ff00000000000000") == gram_set_id(b"2:u8:0100000000000000ff00000000000000")
True
"""

from __future__ import annotations

import os
from array import array
from typing import BinaryIO

import numpy as np
from xxhash import xxh3_64_intdigest

from spamflow_quilt.packed import pack

MAX_ORDINAL = 2**32 - 1
"""Line ordinals are 32-bit; the largest value marks a gram in more than m pages (job (a)'s POPULAR)."""

WINDOW_PAGES = 1 << 20
"""Pages a shingling process groups by gram set at once: at most ~100 bytes of memory each
(a dict entry per gram set, 32 bytes per copy), ~100 MB a window."""


def gram_set_id(packed_grams: bytes) -> int:
    """The name of a page's gram set (its packed, sorted, distinct gram hashes)."""
    return xxh3_64_intdigest(packed_grams)


class CopyWindow:
    """Shingle lines with copies collapsed: the pages of a window that have the same
    non-empty gram set become one line, the first such page's, whose sixth field lists the
    others (doc id, domain id, IP id).  Pages without grams are never collapsed (they are
    never patchy nor a source; one line each, as before).

    Memory is bounded by the window: the first page of each gram set goes to a scratch file
    as it comes, only names and the copies' ids stay in memory, and at the end of each window
    (every ``window_pages`` pages, and at :meth:`close`) the scratch file is rewritten to
    ``out`` with the copies attached.  Copies in different windows (or in different
    shingling processes) stay separate lines of the same gram set: job (a) still counts every
    page, and jobs (b) and (c) merge lines by gram set, so the result is the same, only the
    saving smaller.

    Lines are numbered ``first``, ``first + step``, ... (several processes share a file).

    >>> import io, tempfile
    >>> out = io.BytesIO()
    >>> window = CopyWindow(out, tempfile.mktemp())
    >>> for doc, grams in [(7, b"1:u8:0100000000000000"), (8, b"0:u8:"), (9, b"1:u8:0100000000000000")]:
    ...     window.add(doc, b"%d\\tdom\\t-\\t" % doc, grams, domain_id=5, ip_id=0)
    >>> window.close()
    >>> out.getvalue().splitlines()[0].split(b"\\t")[:5], len(out.getvalue().splitlines())
    ([b'0', b'7', b'dom', b'-', b'1:u8:0100000000000000'], 2)
    >>> window.lines, window.copies
    (2, 1)
    """

    def __init__(self, out: BinaryIO, scratch: str | os.PathLike, *, first: int = 0, step: int = 1,
                 window_pages: int = WINDOW_PAGES) -> None:
        self.out = out
        self.scratch_path = scratch
        self.scratch = open(scratch, "wb")  # noqa: SIM115 (closed in close())
        self.ordinal, self.step, self.window_pages = first, step, window_pages
        self.line_of: dict[int, int] = {}  # gram set name -> its line in this window
        self.window_lines = 0
        self.pending = _copy_columns()  # line, doc, domain id, ip id of each copy
        self.window = 0
        self.lines = self.copies = 0

    def add(self, doc: int, head: bytes, packed_grams: bytes, *, domain_id: int, ip_id: int) -> None:
        """One page: ``head`` is ``doc<TAB>domain<TAB>ip<TAB>`` as its line would start."""
        empty = packed_grams.startswith(b"0:")
        name = None if empty else gram_set_id(packed_grams)
        line = None if name is None else self.line_of.get(name)
        if line is None:
            if name is not None:
                self.line_of[name] = self.window_lines
            self.scratch.write(head + packed_grams + b"\n")
            self.window_lines += 1
        else:
            for column, value in zip(self.pending, (line, doc, domain_id, ip_id)):
                column.append(value)
        self.window += 1
        if self.window >= self.window_pages:
            self.flush()

    def flush(self) -> None:
        """Write the window's lines, each with its copies, and start a new window."""
        self.scratch.close()
        copies = np.stack([np.frombuffer(column, np.uint64) for column in self.pending], axis=1)
        copies = copies[np.argsort(copies[:, 0], kind="stable")]
        bounds = np.searchsorted(copies[:, 0], np.arange(self.window_lines + 1, dtype=np.uint64)).tolist()
        with open(self.scratch_path, "rb") as fh:
            for i, rest in enumerate(fh):
                if self.ordinal >= MAX_ORDINAL:
                    raise ValueError(f"page ordinal {self.ordinal} is out of range: a shingle file holds at most "
                                     f"{MAX_ORDINAL} lines; split the snapshot")
                lo, hi = bounds[i], bounds[i + 1]
                tail = b"\t" + pack(*(np.ascontiguousarray(copies[lo:hi, j]) for j in (1, 2, 3))) if hi > lo else b""
                self.out.write(b"%d\t" % self.ordinal + rest[:-1] + tail + b"\n")
                self.ordinal += self.step
        self.lines += self.window_lines
        self.copies += len(copies)
        self.scratch = open(self.scratch_path, "wb")  # noqa: SIM115
        self.line_of, self.window_lines, self.pending, self.window = {}, 0, _copy_columns(), 0

    def close(self) -> None:
        self.flush()
        self.scratch.close()
        os.remove(self.scratch_path)


def _copy_columns() -> list[array]:
    """Four columns of unsigned 64-bit numbers, 8 bytes an entry (a tuple of Python ints is ~200)."""
    return [array("Q") for _ in range(4)]
