"""Keep freed memory in the process while the memory engine runs, instead of handing every large
array back to the kernel and faulting the next one in page by page.

glibc's malloc serves a block above ``M_MMAP_THRESHOLD`` (at most 32 MiB by its own choice) with
a fresh ``mmap`` and returns it with ``munmap``; the engine makes thousands of arrays of
10-200 MB, so a third of its CPU time was the kernel zeroing and mapping pages (on a
5 x 10^4-page snapshot, 5.5 of 17 CPU s were system time; 3.0 with this).  Inside
:func:`reused_memory` such blocks come from the heap, and a freed one is reused for the next
array; on leaving, the defaults are set again and the heap trimmed.  Not glibc: nothing
changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Iterator
from contextlib import contextmanager

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
"""mallopt's parameter numbers (malloc.h)."""

DEFAULTS = {M_TRIM_THRESHOLD: 128 * 1024, M_TOP_PAD: 128 * 1024, M_MMAP_THRESHOLD: 128 * 1024}
"""glibc's defaults (its dynamic mmap threshold starts at 128 KiB too)."""

KEPT = {M_TRIM_THRESHOLD: 1 << 30, M_TOP_PAD: 64 << 20, M_MMAP_THRESHOLD: 1 << 30}
"""Blocks up to 1 GiB from the heap, up to 1 GiB of free heap kept, 64 MiB more asked for at once."""


def _glibc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018 (only glibc has it)
        return libc
    except (OSError, AttributeError):
        return None


@contextmanager
def reused_memory() -> Iterator[None]:
    libc = _glibc()
    if libc is None:
        yield
        return
    for parameter, value in KEPT.items():
        libc.mallopt(parameter, value)
    try:
        yield
    finally:
        for parameter, value in DEFAULTS.items():
            libc.mallopt(parameter, value)
        libc.malloc_trim(0)
