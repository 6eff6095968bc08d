"""The reduce-side join of a gram's pages with the patch-gram list (jobs (b) and (c)).

A gram's group holds its pages and, if job (a) kept it, the marker ``"P"``.  A patch gram
has at most m pages, so at most m + 1 are buffered: a bigger group cannot be a patch gram,
whatever order the values come in.

>>> patch_postings([3, "P", 5], m=2)
[3, 5]
>>> patch_postings([3, 5, 7], m=2) is None
True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

PATCH_MARK = "P"


def patch_postings(values: Iterable[Any], m: int) -> list[Any] | None:
    """The pages of a patch gram, or None if the gram is not one."""
    pages: list[Any] = []
    patch = False
    for value in values:
        if value == PATCH_MARK:
            patch = True
        elif len(pages) <= m:
            pages.append(value)
    return pages if patch else None
