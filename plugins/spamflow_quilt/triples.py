"""The triples of Section 2, vectorised, with copies collapsed (:mod:`spamflow_quilt.copies`).

For each patch gram g, a literal reading makes (d, g, d') for every two distinct pages that
contain it, restricted with ``foreign`` to pages on different known servers (Section 3).
Here the pages of one gram set on one server form a *unit* (covered once, named by its
smallest page, the *rep*), and the pages of one gram set a *candidate* (named, for a unit on
server s, by its smallest page on another server).  A gram then gives one triple
(set, rep, g, source) per (patchy unit, candidate) pair: units x gram sets, not pages².
With ``skip_copied`` (c >= 2) a unit whose gram set is also on another server makes none:
its copy is its only source.

>>> sets, reps, g, src = unit_triples(np.array([9, 9, 9], np.uint64), np.array([1, 2, 3], np.uint64),
...     servers=np.array([1, 2, 3], np.uint64), sets=np.array([5, 5, 6], np.uint64),
...     patchy=np.ones(3, bool), skip_copied=False)
>>> sorted(zip(reps.tolist(), src.tolist()))
[(1, 2), (1, 3), (2, 1), (2, 3), (3, 1)]
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from spamflow_quilt.buckets import run_starts

CHUNK_TRIPLES = 1 << 22
"""Triples made at once (bounds a reducer's memory at ~130 MB)."""


def line_units(hit_grams: np.ndarray, hit_lines: np.ndarray, lines: np.ndarray, docs: np.ndarray, *,
               servers: np.ndarray, patchy: np.ndarray, sets: np.ndarray,
               skip_copied: bool) -> tuple[np.ndarray, ...]:
    """(gram, rep, server, patchy, set) for each patch gram of a line (``hit_*``) and each of
    the line's units: its pages (``lines``, ``docs``, ... one row per page on a known server)
    grouped by server, named by their smallest doc.  :func:`unit_triples` takes these rows as
    it takes one row per page: it names units and candidates the same way from them.

    With ``skip_copied`` a line keeps only its two smallest units: a line on two or more
    servers is then no left unit (its copy is its only source), and a candidate is named by
    its smallest unit, or its second for a unit on the first one's server; that second is
    among the first two units of its line (only the gram set's smallest unit can come
    before it in any line), so the names are those of all the pages.

    >>> rows = line_units(np.array([50, 60], np.uint64), np.array([0, 0], np.uint32),
    ...     np.array([0, 0, 0], np.uint32), np.array([9, 4, 7], np.uint64), servers=np.array([1, 2, 1], np.uint64),
    ...     patchy=np.ones(3, np.uint8), sets=np.full(3, 5, np.uint64), skip_copied=False)
    >>> [column.tolist() for column in rows[:3]]
    [[50, 50, 60, 60], [7, 4, 7, 4], [1, 2, 1, 2]]
    """
    return hits_of_units(hit_grams, hit_lines, line_unit_table(lines, docs, servers=servers, patchy=patchy,
                                                               sets=sets, skip_copied=skip_copied))


def line_unit_table(lines: np.ndarray, docs: np.ndarray, *, servers: np.ndarray, patchy: np.ndarray,
                    sets: np.ndarray, skip_copied: bool) -> tuple[np.ndarray, ...]:
    """The units of lines (:func:`line_units` without the hits): (line, rep, server, patchy, set),
    sorted by line."""
    order = np.lexsort((docs, servers, lines))
    lines, docs, servers, patchy, sets = lines[order], docs[order], servers[order], patchy[order], sets[order]
    units = run_starts(lines, servers)
    u_line, u_rep, u_server, u_patchy, u_set = lines[units], docs[units], servers[units], patchy[units], sets[units]
    if skip_copied:
        order = np.lexsort((u_rep, u_line))
        u_line, u_rep, u_server, u_patchy, u_set = (u_line[order], u_rep[order], u_server[order], u_patchy[order],
                                                    u_set[order])
        first = run_starts(u_line)
        rank = np.arange(len(u_line)) - np.repeat(first, np.diff(np.r_[first, len(u_line)]))
        keep = rank < 2
        u_line, u_rep, u_server, u_patchy, u_set = (u_line[keep], u_rep[keep], u_server[keep], u_patchy[keep],
                                                    u_set[keep])
    return u_line, u_rep, u_server, u_patchy, u_set


def hits_of_units(hit_grams: np.ndarray, hit_lines: np.ndarray,
                  table: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """(gram, rep, server, patchy, set) for each hit (a line's patch gram) and each unit of
    its line in ``table`` (:func:`line_unit_table`)."""
    u_line, u_rep, u_server, u_patchy, u_set = table
    top = max(int(u_line[-1]) if len(u_line) else 0, int(hit_lines.max()) if len(hit_lines) else 0)
    if top <= 4 * (len(u_line) + len(hit_lines)):  # line ordinals are dense: where each line's units start
        first = np.searchsorted(u_line, np.arange(top + 2))
        lines = hit_lines.astype(np.intp)
        lo, count = first[lines], first[lines + 1] - first[lines]
    else:
        lo = np.searchsorted(u_line, hit_lines, side="left")
        count = np.searchsorted(u_line, hit_lines, side="right") - lo
    at = np.repeat(lo, count) + (np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count))
    return np.repeat(hit_grams, count), u_rep[at], u_server[at], u_patchy[at], u_set[at]


def unit_triples(grams: np.ndarray, docs: np.ndarray, *, servers: np.ndarray, sets: np.ndarray,
                 patchy: np.ndarray, skip_copied: bool) -> tuple[np.ndarray, ...]:
    """All (set, rep, gram, source) of the given rows (one per page containing a patch gram;
    rows of pages on an unknown server left out by the caller), as four arrays."""
    parts = list(iter_unit_triples(grams, docs, servers=servers, sets=sets, patchy=patchy, skip_copied=skip_copied))
    if not parts:
        return tuple(np.empty(0, np.uint64) for _ in range(4))
    return tuple(np.concatenate(column) for column in zip(*parts))


def iter_unit_triples(grams: np.ndarray, docs: np.ndarray, *, servers: np.ndarray, sets: np.ndarray,
                      patchy: np.ndarray, skip_copied: bool) -> Iterator[tuple[np.ndarray, ...]]:
    """:func:`unit_triples` in chunks of at most about :data:`CHUNK_TRIPLES`."""
    if len(grams) == 0:
        return
    # units: the rows of one (gram, set, server), named by their smallest doc
    # (under foreign none each page is its own server: one sort key fewer, the same order)
    order = np.lexsort((docs, sets, grams) if np.array_equal(servers, docs) else (docs, servers, sets, grams))
    grams, docs, servers, sets, patchy = grams[order], docs[order], servers[order], sets[order], patchy[order]
    units = run_starts(grams, sets, servers)
    u_gram, u_set, u_server, u_rep, u_patchy = grams[units], sets[units], servers[units], docs[units], patchy[units]
    # candidates: the units of one (gram, set) by rep; the first two name it for any server
    if not ordered(u_gram, u_set, u_rep):  # they are when each page is its own server
        order = np.lexsort((u_rep, u_set, u_gram))
        u_gram, u_set, u_server, u_rep, u_patchy = (u_gram[order], u_set[order], u_server[order], u_rep[order],
                                                    u_patchy[order])
    first = run_starts(u_gram, u_set)
    size = np.diff(np.r_[first, len(u_gram)])
    second = np.where(size >= 2, first + 1, first)
    c_gram = u_gram[first]
    # left units: patchy, and (skip_copied) alone in their gram set
    left = u_patchy.astype(bool)
    if skip_copied:
        left &= np.repeat(size, size) == 1
    left = np.flatnonzero(left)
    lo = np.searchsorted(c_gram, u_gram[left], side="left")
    count = np.searchsorted(c_gram, u_gram[left], side="right") - lo
    cumulative = np.cumsum(count)
    done, begin = 0, 0
    while begin < len(left):
        end = max(int(np.searchsorted(cumulative, done + CHUNK_TRIPLES, side="right")), begin + 1)
        yield _pairs(left[begin:end], lo[begin:end], count[begin:end], u_set, u_rep, u_gram, u_server,
                     first, second, size)
        done, begin = int(cumulative[end - 1]), end


def ordered(*keys: np.ndarray) -> bool:
    """Whether the rows are sorted by the keys (the first the most significant).

    >>> ordered(np.array([1, 1, 2]), np.array([5, 6, 0])), ordered(np.array([1, 1]), np.array([6, 5]))
    (True, False)
    """
    undecided = np.ones(max(len(keys[0]) - 1, 0), bool)  # adjacent rows equal in every key so far
    for key in keys:
        before, after = key[:-1], key[1:]
        if (undecided & (before > after)).any():
            return False
        undecided &= before == after
    return True


def _pairs(left, lo, count, u_set, u_rep, u_gram, u_server, first, second, size):
    """(set, rep, gram, source) for each left unit and each candidate of its gram: the
    candidate's smallest rep if on another server, else its second (if any)."""
    unit = np.repeat(left, count)
    candidate = np.repeat(lo, count) + (np.arange(len(unit)) - np.repeat(np.cumsum(count) - count, count))
    same = u_server[first[candidate]] == u_server[unit]
    source = np.where(same, second[candidate], first[candidate])
    keep = ~same | (size[candidate] >= 2)
    unit, source = unit[keep], source[keep]
    return u_set[unit], u_rep[unit], u_gram[unit], u_rep[source]
