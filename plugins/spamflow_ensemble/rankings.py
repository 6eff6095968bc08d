"""Spam rankings as labels: the Waterloo spam rankings of ClueWeb09/ClueWeb12 (Cormack,
Smucker and Clarke) give every document a spam percentile by its TREC id, one
``percentile trec-id`` per line (0 = spammiest, 99 = least spammy; plain or gzipped).

A page is spam when its percentile is below a threshold (70 by default, as the rankings'
authors suggest).  The rankings label pages, the classifier labels hosts, so pages are
mapped to hosts — by the page table's ``trec_id`` column when it has one, else by a
``trec_id<TAB>url`` map the user gives — and a host is spam when the **median** percentile
of its ranked pages is below the threshold.  The median, not "any page", because about 70 %
of a corpus sits below percentile 70: nearly every large host has some spam-ranked page
(forum and blog spam on honest hosts), and the host label should say what the host mostly
serves.  The median also gives each host one percentile to report.

The rankings files are large (ClueWeb09: 500 million lines), so only the ids of the pages
being labelled are kept.  A bad line (not two fields, a percentile that is not a whole
number in 0..99, a repeated id) is skipped and counted, and reported with its file and line.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from spamflow.domains import host_of
from spamflow.errors import BadInputError
from spamflow_ensemble.labels import NONSPAM, SPAM

DEFAULT_THRESHOLD = 70
MAX_EXAMPLES = 10
"""Bad lines listed one by one (per file); the rest are only counted."""


@dataclass
class BadLines:
    """Skipped lines: a count per kind and the first few as ``file:line: why: 'text'``."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)

    def add(self, kind: str, path: Path, line: int, why: str, text: str = "") -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if sum(e.startswith(f"{path}:") for e in self.examples) < MAX_EXAMPLES:
            self.examples.append(f"{path}:{line}: {why}" + (f": {text[:80]!r}" if text else ""))

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _lines(path: Path, bad: BadLines) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of a plain or gzipped file (told apart by its first bytes); a
    corrupt or truncated gzip stream ends the file there, reported as a bad line."""
    if not path.is_file():
        raise BadInputError(f"{path} does not exist")
    with open(path, "rb") as raw:
        gzipped = raw.read(2) == b"\x1f\x8b"
    n = 0
    try:
        with (gzip.open(path, "rb") if gzipped else open(path, "rb")) as fh:
            for n, line in enumerate(fh, start=1):
                yield n, line
    except (EOFError, OSError, zlib.error) as exc:
        bad.add("unreadable", path, n + 1, f"the rest of the file cannot be read ({exc})")


@dataclass
class Rankings:
    """Percentile by TREC id (only the ids asked for) and what was read."""

    percentile: dict[str, int]
    files: list[str]
    lines: int = 0
    ranked_lines: int = 0
    bad: BadLines = field(default_factory=BadLines)


def read_rankings(paths: Sequence[str | Path], wanted: set[str] | None = None) -> Rankings:
    """Read ``percentile trec-id`` files, keeping the ids in ``wanted`` (all if None).

    The first line of an id wins; a later line with the same id is counted as ``duplicate_id``
    (only among kept ids: the others are not remembered)."""
    out = Rankings({}, [str(p) for p in paths])
    for p in paths:
        path = Path(p)
        for n, line in _lines(path, out.bad):
            parts = line.split()
            if not parts:
                continue
            out.lines += 1
            if len(parts) != 2:
                out.bad.add("fields", path, n, "expected 'percentile trec-id'", line.decode("utf-8", "replace").strip())
                continue
            value, raw_id = parts
            if not value.isdigit() or int(value) > 99:
                out.bad.add("percentile", path, n, "percentile is not a whole number 0..99",
                            line.decode("utf-8", "replace").strip())
                continue
            try:
                trec_id = raw_id.decode("ascii")
            except UnicodeDecodeError:
                out.bad.add("trec_id", path, n, "TREC id is not ASCII", line.decode("utf-8", "replace").strip())
                continue
            out.ranked_lines += 1
            if wanted is not None and trec_id not in wanted:
                continue
            if trec_id in out.percentile:
                out.bad.add("duplicate_id", path, n, f"{trec_id} was ranked before; the first line is kept")
                continue
            out.percentile[trec_id] = int(value)
    return out


@dataclass
class PageMap:
    """(snapshot, host) of each page by TREC id; snapshot ``""`` when the map does not say
    (the host's label then holds in every snapshot)."""

    by_id: dict[str, tuple[str, str]]
    source: str
    bad: BadLines = field(default_factory=BadLines)
    pages_without_id: int = 0


def map_from_pages(pages: str | Path) -> PageMap | None:
    """The page table's ``trec_id`` → (snapshot, host); None when the table has no ``trec_id``
    column.  Pages without one (not from a TREC corpus) are counted."""
    import pyarrow.dataset as pads

    dataset = pads.dataset(pages, format="parquet")
    if "trec_id" not in dataset.schema.names:
        return None
    table = dataset.to_table(columns=["trec_id", "snapshot", "host"])
    out = PageMap({}, f"{pages} (trec_id column)")
    for trec_id, snapshot, host in zip(*(table[c].to_pylist() for c in ("trec_id", "snapshot", "host"))):
        if not trec_id:
            out.pages_without_id += 1
        else:
            out.by_id.setdefault(trec_id, (snapshot, host))
    return out


def read_rankings_map(path: str | Path) -> PageMap:
    """A ``trec_id<TAB>url`` file (plain or gzipped; an optional ``trec_id<TAB>url`` header):
    each page's host from its URL.  Bad lines (not two fields, a URL without a host, a
    repeated id) are counted and listed."""
    path = Path(path)
    out = PageMap({}, str(path))
    for n, line in _lines(path, out.bad):
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        if not text.strip():
            continue
        parts = text.split("\t")
        if n == 1 and [p.strip().lower() for p in parts] == ["trec_id", "url"]:
            continue
        if len(parts) != 2 or not parts[0].strip():
            out.bad.add("fields", path, n, "expected 'trec_id<TAB>url'", text)
            continue
        host = host_of(parts[1].strip())
        if not host:
            out.bad.add("url", path, n, "the URL has no host", text)
            continue
        trec_id = parts[0].strip()
        if trec_id in out.by_id:
            out.bad.add("duplicate_id", path, n, f"{trec_id} was mapped before; the first line is kept")
            continue
        out.by_id[trec_id] = ("", host.lower())
    return out


@dataclass
class HostRanking:
    """A host's ranked pages' percentiles, their median and the label it gives."""

    percentiles: list[int]
    median: float
    label: str


def host_rankings(rankings: Rankings, pages: PageMap,
                  threshold: int = DEFAULT_THRESHOLD) -> dict[tuple[str, str], HostRanking]:
    """Aggregate page percentiles to (snapshot, host): spam when the median percentile of the
    host's ranked pages is below ``threshold`` (an even count's median is the mean of the two
    middle values).  Hosts without a ranked page get no entry."""
    by_host: dict[tuple[str, str], list[int]] = {}
    for trec_id, key in pages.by_id.items():
        value = rankings.percentile.get(trec_id)
        if value is not None:
            by_host.setdefault(key, []).append(value)
    out = {}
    for key, values in by_host.items():
        median = float(np.median(values))
        out[key] = HostRanking(sorted(values), median, SPAM if median < threshold else NONSPAM)
    return out


def row_rankings(snapshots: Sequence[str], hosts: Sequence[str],
                 ranked: dict[tuple[str, str], HostRanking]) -> list[HostRanking | None]:
    """Each row's ranking: its (snapshot, host), else its host's snapshot-free entry."""
    return [ranked.get((s, h.lower())) or ranked.get(("", h.lower())) for s, h in zip(snapshots, hosts)]


@dataclass
class RankingLabels:
    """Labels per row from spam rankings, and the counts that say how they were made."""

    rows: list[HostRanking | None]
    report: dict

    def labels(self) -> list[str | None]:
        return [None if r is None else r.label for r in self.rows]

    def medians(self) -> list[float | None]:
        return [None if r is None else r.median for r in self.rows]

    def warnings(self) -> list[str]:
        """One line per file with bad lines, then the listed bad lines."""
        out = []
        for what, bad in (("rankings", self.report["bad_lines"]), ("rankings map", self.report["map_bad_lines"])):
            if bad:
                out.append(f"warning: {what}: {bad} bad lines skipped ({self._kinds(what)})")
        return out + [f"warning: {e}" for e in self.report["bad_line_examples"]]

    def _kinds(self, what: str) -> str:
        key = "bad" if what == "rankings" else "map_bad"
        return ", ".join(f"{k} {v}" for k, v in sorted(self.report[key].items()))


def ranking_labels(rankings_paths: Sequence[str | Path], snapshots: Sequence[str], hosts: Sequence[str],
                   pages_table: str | Path | None = None, map_path: str | Path | None = None,
                   threshold: int = DEFAULT_THRESHOLD) -> RankingLabels:
    """Labels for the rows (snapshot, host) of a feature table from spam rankings files.

    Pages are mapped to hosts by ``map_path`` if given, else by the page table's ``trec_id``
    column; neither is an error saying what to give."""
    if not 0 < threshold <= 100:
        raise BadInputError(f"rankings threshold must be a percentile in 1..100, not {threshold}")
    pages = read_rankings_map(map_path) if map_path else map_from_pages(pages_table) if pages_table else None
    if pages is None:
        where = f"the page table {pages_table} has no trec_id column" if pages_table else "there is no page table"
        raise BadInputError(f"spam rankings are keyed by TREC id and {where}: give --rankings-map, a "
                            f"'trec_id<TAB>url' file of the ranked pages")
    rankings = read_rankings(rankings_paths, set(pages.by_id))
    ranked = host_rankings(rankings, pages, threshold)
    rows = row_rankings(snapshots, hosts, ranked)
    in_table = {(s, h.lower()) for s, h in zip(snapshots, hosts)} | {("", h.lower()) for h in hosts}
    report = {
        "files": rankings.files, "threshold": threshold, "rule": "host spam when the median percentile of its "
                                                                 "ranked pages is below the threshold",
        "map": pages.source, "lines": rankings.lines, "ranked_lines": rankings.ranked_lines,
        "bad_lines": rankings.bad.total, "bad": dict(sorted(rankings.bad.counts.items())),
        "map_pages": len(pages.by_id), "map_bad_lines": pages.bad.total,
        "map_bad": dict(sorted(pages.bad.counts.items())),
        "pages_without_trec_id": pages.pages_without_id,
        "pages_ranked": sum(1 for i in pages.by_id if i in rankings.percentile),
        "pages_unranked": sum(1 for i in pages.by_id if i not in rankings.percentile),
        "hosts_ranked": len(ranked), "hosts_ranked_spam": sum(r.label == SPAM for r in ranked.values()),
        "hosts_ranked_not_in_table": sum(k not in in_table for k in ranked),
        "rows_labelled": sum(r is not None for r in rows),
        "bad_line_examples": pages.bad.examples + rankings.bad.examples,
    }
    return RankingLabels(rows, report)
