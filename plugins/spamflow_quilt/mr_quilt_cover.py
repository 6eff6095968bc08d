"""Job (c): for each patch gram, the triples of Section 2 with copies collapsed; grouped by
unit of copies, the greedy set cover of Section 2, keeping pages with at least c sources.

Input: the output of job (b), the patchy pages and, per line of copies, its patch grams and
its pages (doc, domain id, ip id, patchy, gram set).  ``--foreign domain|ip`` keeps only
sources on another server than the page (Section 3; a page whose server is unknown is
foreign to none).  The mapper turns each line into the rows of its units
(:func:`spamflow_quilt.triples.line_units`: one per server of its pages, at most two with
c >= 2), by gram bucket.
Step 1 makes each gram bucket's triples (set, rep, g, source) for the patchy units
(:mod:`spamflow_quilt.triples`: the pages of one gram set on one server are one unit, the
pages of one gram set one candidate source) and sends them to the bucket of their gram set,
where the patchy pages (``Q``) go too.  Step 2 groups each bucket's triples by unit (in
memory up to ``--spill-bytes``, beyond that through files on disk: :mod:`spamflow_quilt.spill`),
covers once per unit and reports every page of the unit (its copies on the same server have
the same cover).  The output, one line per quilted page, is JSON:
``doc<TAB>{"n_patch_grams", "n_grams", "sources": [[doc, newly covered grams], ...]}``.
"""

from collections.abc import Iterable, Iterator

import numpy as np
from mrjob.protocol import JSONProtocol
from mrjob.step import MRStep

from spamflow_quilt.buckets import run_starts
from spamflow_quilt.cover import greedy_cover_arrays, keep_sources
from spamflow_quilt.mr_base import QuiltJob, joined, rows_of, untagged
from spamflow_quilt.servers import NO_SERVER_ID
from spamflow_quilt.spill import GroupSpill
from spamflow_quilt.triples import iter_unit_triples, line_units

SPILL_BYTES = 256 << 20
"""Triples a cover reducer holds in memory before it spills them to disk (32 bytes each)."""


class MRQuiltCover(QuiltJob):
    OUTPUT_PROTOCOL = JSONProtocol  # one line per quilted page, read back by the detector

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--c", type=int, required=True)
        self.add_passthru_arg("--foreign", choices=["none", "domain", "ip"], default="none")
        self.add_passthru_arg("--phi", type=float, default=None)
        self.add_passthru_arg("--spill-bytes", type=int, default=SPILL_BYTES,
                              help="triples' bytes a cover reducer keeps in memory before it spills to disk")

    def steps(self):
        return [MRStep(mapper=self.tag_inputs, reducer=self.triples),
                MRStep(reducer=self.cover)]

    def tag_inputs(self, _, line):
        key, value = line.split(b"\t", 1)
        kind, columns = untagged(value)
        if kind == b"L" and len(columns) == 8:  # lines' patch grams | the pages of those lines
            hit_grams, hit_lines, lines, docs, domains, ips, patchy, sets = columns
            servers, known = self.servers(docs, domains, ips)
            yield from self.by_grams(b"U", *line_units(
                hit_grams, hit_lines, lines[known], docs[known], servers=servers[known], patchy=patchy[known],
                sets=sets[known], skip_copied=self.options.c >= 2), buckets=self.cover_buckets)
        elif kind == b"Q" and len(columns) == 6:  # patchy pages, to the bucket of their gram set
            yield from self.by_sets(b"Q", columns[3], *columns, buckets=self.cover_buckets)
        elif kind in (b"R", b"Q", b"L"):
            raise ValueError(f"job (c) reads job (b)'s output of stage version 3 (L records of lines, Q rows of "
                             f"6 columns), got {len(columns)} columns in a {kind!r} record under {key!r}: "
                             "rerun job (b)")
        else:
            raise ValueError(f"job (c) reads job (b)'s output, got a {kind!r} record under {key!r}")

    @property
    def cover_buckets(self) -> int:
        """The buckets of this job's records: ``--buckets`` (the one-job engine's cover steps have their own)."""
        return self.options.buckets

    def servers(self, docs: np.ndarray, domains: np.ndarray, ips: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return foreign_servers(self.options.foreign, docs, domains, ips)

    def triples(self, key, values):
        rows = rows_of(values)  # one gram bucket's rows: sized by the driver
        if key.startswith(b"d"):  # patchy pages pass through to step 2
            yield from self.passed_on(key, rows, b"Q")
            return
        grams, units, servers, patchy, sets = joined(rows.get(b"U"), 5)  # foreign servers applied by the mapper
        for set_ids, reps, gram, sources in iter_unit_triples(
                grams, units, servers=servers, sets=sets, patchy=patchy.astype(bool), skip_copied=self.options.c >= 2):
            yield from self.by_sets(b"T", set_ids, reps, gram, sources,  # the set only routes: not sent
                                    buckets=self.cover_buckets)

    def cover(self, key, values):
        patchy_pages, triples = [], GroupSpill(3, self.options.spill_bytes)  # rep, gram, source
        for value in values:
            kind, columns = untagged(value)
            if kind == b"Q":
                patchy_pages.append(columns)
            else:
                triples.add(*columns)
        yield from unit_covers(joined(patchy_pages, 6), triples.groups(), c=self.options.c,
                               foreign=self.options.foreign, phi=self.options.phi)


def foreign_servers(foreign: str, docs: np.ndarray, domains: np.ndarray,
                    ips: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each page's server for the foreign test (under ``none`` the page itself: only d' = d
    is excluded), and which pages have a known one (all under ``none``)."""
    servers = {"none": docs, "domain": domains, "ip": ips}[foreign]
    known = servers != NO_SERVER_ID if foreign != "none" else np.ones(len(docs), bool)
    return servers, known


def unit_covers(patchy_pages: list[np.ndarray], triples: Iterable[tuple[np.ndarray, ...]], *,
                c: int, foreign: str, phi: float | None) -> Iterator[tuple[int, dict]]:
    """The quilted pages of a gram-set bucket: ``patchy_pages`` its ``Q`` columns (doc, n_patch_grams,
    n_grams, gram set, domain id, ip id), ``triples`` its (rep, gram, source) in batches that hold
    every triple of a unit, sorted by rep.  Covers once per unit, reports every page of it."""
    docs, n_patch, n_grams, sets, domains, ips = patchy_pages
    servers, known = foreign_servers(foreign, docs, domains, ips)
    docs, n_patch, n_grams, sets, servers = docs[known], n_patch[known], n_grams[known], sets[known], servers[known]
    order = np.lexsort((docs, servers, sets))  # units: (gram set, server), named by the smallest doc
    docs, n_patch, n_grams, sets, servers = docs[order], n_patch[order], n_grams[order], sets[order], servers[order]
    units = run_starts(sets, servers)
    unit_of = np.repeat(docs[units], np.diff(np.r_[units, len(docs)]))
    members: dict[int, list[tuple[int, int, int]]] = {}
    for rep, doc, n_patch_doc, n_grams_doc in zip(unit_of.tolist(), docs.tolist(), n_patch.tolist(),
                                                  n_grams.tolist()):
        members.setdefault(rep, []).append((doc, n_patch_doc, n_grams_doc))
    for reps, grams, sources in triples:  # every triple of a unit in one batch, by rep
        starts = run_starts(reps)
        ends = np.r_[starts[1:], len(reps)]
        for start, end in zip(starts.tolist(), ends.tolist()):
            unit = members[int(reps[start])]
            n_patch_doc, n_grams_doc = unit[0][1], unit[0][2]  # copies: the same gram set
            cover = keep_sources(greedy_cover_arrays(sources[start:end], grams[start:end]), n_patch_doc, phi)
            if len(cover) >= c:
                for doc, _, _ in unit:
                    yield doc, {"n_patch_grams": n_patch_doc, "n_grams": n_grams_doc, "sources": cover}


if __name__ == "__main__":
    MRQuiltCover.run()
