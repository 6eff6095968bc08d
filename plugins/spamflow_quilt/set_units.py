"""Job (c)'s units and candidates for a whole snapshot at once, by gram set, so that the memory
engine makes each triple as one 64-bit number of indexes instead of a row of three doc ids.

The job finds the units of each gram anew from the rows of its lines (sorting them by gram,
set, server and doc: :func:`~spamflow_quilt.triples.iter_unit_triples`).  But the lines of
one gram set share every gram, so a set's units, its first two units by rep (which name it
as a candidate) and its left units are the same for every one of its grams: here they are
found once, from :func:`~spamflow_quilt.triples.line_unit_table`'s units merged by (set,
server) over all lines, and a gram's triples are then (left unit of a set holding the gram)
x (set holding the gram), with the source the set's first unit, or its second when the
first is on the left unit's server; exactly the job's triples (tests/test_quilt_direct.py).

Units are numbered by rep, so a source's number orders sources as their doc_ids do (the
greedy cover's tie-break); left units by rep too; grams by a snapshot-wide index.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from spamflow_quilt.buckets import distinct, run_starts
from spamflow_quilt.lockstep import bits_for
from spamflow_quilt.triples import CHUNK_TRIPLES, line_unit_table


class SetUnits:
    """The units of a snapshot's lines with patch grams and what names each gram set as a candidate."""

    def __init__(self, lines: np.ndarray, docs: np.ndarray, *, servers: np.ndarray, patchy: np.ndarray,
                 sets: np.ndarray, skip_copied: bool, n_lines: int) -> None:
        self.table = line_unit_table(lines, docs, servers=servers, patchy=patchy, sets=sets, skip_copied=skip_copied)
        t_line, t_rep, t_server, t_patchy, t_set = self.table
        # units: (set, server) over all lines, named by their smallest rep
        order = np.lexsort((t_rep, t_server, t_set))
        t_line, t_rep, t_server, t_patchy, t_set = (t_line[order], t_rep[order], t_server[order], t_patchy[order],
                                                    t_set[order])
        first = run_starts(t_set, t_server)
        rep, server, patchy_unit, set_name = t_rep[first], t_server[first], t_patchy[first], t_set[first]
        by_rep = np.argsort(rep, kind="stable")  # unit numbers in doc_id order
        self.rep, self.server, self.set_name = rep[by_rep], server[by_rep], set_name[by_rep]
        self.server_rank = np.unique(self.server, return_inverse=True)[1].astype(np.int32)  # equal servers, as int32
        patchy_unit = patchy_unit[by_rep].astype(bool)
        # sets, numbered by name; each set's units by rep
        self.set_names = distinct(self.set_name)
        unit_set = np.searchsorted(self.set_names, self.set_name)
        order = np.lexsort((np.arange(len(unit_set)), unit_set))  # units by set, then by number (rep)
        starts = run_starts(unit_set[order])
        self.size = np.diff(np.r_[starts, len(order)])
        self.first = order[starts]
        self.second = np.where(self.size >= 2, order[np.minimum(starts + 1, len(order) - 1)], -1)
        # left units: patchy, and (skip_copied) alone in their set; numbered by rep
        left = patchy_unit & (self.size[unit_set] == 1) if skip_copied else patchy_unit
        self.left_unit = np.flatnonzero(left)
        left_set = unit_set[self.left_unit]
        order = np.argsort(left_set, kind="stable")
        self.left_by_set = order  # left unit indexes grouped by set
        self.left_start = np.searchsorted(left_set[order], np.arange(len(self.set_names) + 1))
        # each line's set (-1: no unit on the line)
        self.line_set = np.full(n_lines, -1, np.int64)
        self.line_set[t_line] = np.searchsorted(self.set_names, t_set)

    def key_bits(self, n_grams: int) -> tuple[int, int, int]:
        """Bits of a triple's left unit, gram and source."""
        return bits_for(len(self.left_unit)), bits_for(n_grams), bits_for(len(self.rep))

    def triple_keys(self, hit_lines: np.ndarray, hit_grams: np.ndarray, n_grams: int) -> Iterator[np.ndarray]:
        """The triples of the hits (line, gram index below ``n_grams``) of some grams with all
        their lines, each one number ``left unit | gram | source`` (:meth:`key_bits` wide), in
        chunks of about :data:`CHUNK_TRIPLES`."""
        _, gram_bits, source_bits = self.key_bits(n_grams)
        sets = self.line_set[hit_lines]
        known = sets >= 0
        set_bits = bits_for(len(self.set_names))
        pairs = distinct((hit_grams[known].astype(np.uint64) << np.uint64(set_bits)) | sets[known].astype(np.uint64))
        gram = pairs >> np.uint64(set_bits)
        cset = (pairs & np.uint64((1 << set_bits) - 1)).astype(np.intp)  # (gram, set holding it), by gram
        starts = run_starts(gram)
        n_sets = np.diff(np.r_[starts, len(gram)])
        lo, count = np.repeat(starts, n_sets), np.repeat(n_sets, n_sets)  # each pair's gram's candidates
        # a row per (gram, left unit of a set holding it)
        n_left = self.left_start[cset + 1] - self.left_start[cset]
        left = self.left_by_set[_expand(self.left_start[cset], n_left)]
        base = ((left.astype(np.uint64) << np.uint64(gram_bits + source_bits))
                | (np.repeat(gram, n_left) << np.uint64(source_bits)))
        left_server = self.server_rank[self.left_unit[left]]
        lo, count = np.repeat(lo, n_left), np.repeat(count, n_left)
        cumulative = np.cumsum(count)
        done, begin = 0, 0
        while begin < len(left):
            end = max(int(np.searchsorted(cumulative, done + CHUNK_TRIPLES, side="right")), begin + 1)
            yield self._keys(base[begin:end], left_server[begin:end], lo[begin:end], count[begin:end], cset)
            done, begin = int(cumulative[end - 1]), end

    def _keys(self, base, left_server, lo, count, cset):
        """Each row's triple with each candidate: the candidate's first unit, or its second when
        the first is on the left unit's server (none if it has no second)."""
        candidate = cset[_expand(lo, count)]
        first = self.first[candidate]
        source = np.where(self.server_rank[first] == np.repeat(left_server, count), self.second[candidate], first)
        keep = source >= 0
        return np.repeat(base, count)[keep] | source[keep].astype(np.uint64)


def _expand(lo: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """lo .. lo + n - 1 for each (lo, n), one after another.

    >>> _expand(np.array([5, 9, 0]), np.array([2, 0, 3])).tolist()
    [5, 6, 0, 1, 2]
    """
    return np.repeat(lo - (np.cumsum(counts) - counts), counts) + np.arange(int(counts.sum()))
