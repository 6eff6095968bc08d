"""What a crawl has decided, on disk, so that a crawl killed at any moment can resume.

* ``state/discovered.log``: every URL accepted by filters, sieve and caps, in order, as
  ``depth hops url``, or ``l depth hops url`` for a URL put in its host's low-priority lane
  (found on a steered host), so a resumed crawl puts it back in that lane, and ``p depth
  hops url`` when a clean page promoted such a URL to the normal lane (lanes.py): not a
  second accepted URL, the same one queued again.  The links of a
  page are appended (and flushed) *before* its WARC record is written, so no link of a
  stored page is ever lost.
* ``errors.jsonl``: every URL that ended without a stored response, with its reason.
* ``state/robots.jsonl``: the robots.txt outcome per host, so a resumed crawl does not ask again,
  with the counts of that fetch (requests, outcome).
* ``state/tally.jsonl``: the counts one stored page added (pages, bytes, status, links
  filtered...), written after its links and before its WARC record; a line with no URL holds
  what offering the seeds counted.  With the error log and robots rows they rebuild the
  crawl's counts on resume (:mod:`spamflow.crawl.totals`).
* the WARC files themselves: a URL with a complete ``response`` record is done.

On resume, pending = discovered - done, in discovered order, each in its lane.  A line cut
short by a kill is ignored (it was not flushed whole, so its URL was not yet acted on).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from warcio.archiveiterator import ArchiveIterator

from spamflow.crawl.links import content_signature, is_html

LOW = "l"
"""The lane mark of a discovered.log line whose URL went to its host's low-priority lane."""
PROMOTED = "p"
"""The mark of a line queuing a low-lane URL again in the normal lane (found on a clean page)."""


def complete_lines(path: Path) -> Iterator[str]:
    """Lines of ``path`` that end in a newline (a partial last line is skipped)."""
    if not path.exists():
        return
    with open(path, encoding="utf-8", newline="\n") as fh:
        for line in fh:
            if line.endswith("\n"):
                yield line[:-1]


class Journal:
    def __init__(self, directory: Path) -> None:
        self.state = directory / "state"
        self.state.mkdir(parents=True, exist_ok=True)
        self.errors_path = directory / "errors.jsonl"
        self.discovered_path = self.state / "discovered.log"
        self.robots_path = self.state / "robots.jsonl"
        self.tally_path = self.state / "tally.jsonl"
        for path in (self.errors_path, self.discovered_path, self.robots_path, self.tally_path):
            drop_partial_line(path)
        self._discovered: TextIO = open(self.discovered_path, "a", encoding="utf-8")  # noqa: SIM115
        self._errors: TextIO = open(self.errors_path, "a", encoding="utf-8")  # noqa: SIM115
        self._robots: TextIO = open(self.robots_path, "a", encoding="utf-8")  # noqa: SIM115
        self._tally: TextIO = open(self.tally_path, "a", encoding="utf-8")  # noqa: SIM115

    def discovered(self, entries: list[tuple[int, int, str, str]]) -> None:
        """Accepted URLs as (depth, hops, url, lane): lane "" (normal), LOW or PROMOTED."""
        if entries:
            self._discovered.write("".join(f"{lane + ' ' if lane else ''}{d} {h} {u}\n" for d, h, u, lane in entries))
            self._discovered.flush()

    def error(self, record: dict[str, Any]) -> None:
        self._errors.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._errors.flush()

    def robots(self, key: str, status: int | None, body: str, counts: dict[str, int] | None = None) -> None:
        row: dict[str, Any] = {"key": key, "status": status, "body": body}
        if counts:
            row["counts"] = counts
        self._robots.write(json.dumps(row) + "\n")
        self._robots.flush()

    def tally(self, url: str | None, counts: dict[str, int]) -> None:
        """What storing ``url`` (None: offering the seeds) added to the counts."""
        self._tally.write(json.dumps({"url": url, "counts": counts}, ensure_ascii=False) + "\n")
        self._tally.flush()

    def close(self) -> None:
        for fh in (self._discovered, self._errors, self._robots, self._tally):
            fh.close()

    # ---- reading back
    def read_discovered(self) -> Iterator[tuple[int, int, str, str]]:
        """(depth, hops, url, lane) per line, in order (a journal written before lanes
        existed has no ``l`` or ``p`` lines: every URL in the normal lane)."""
        for line in complete_lines(self.discovered_path):
            lane = line[0] if line[:2] in (LOW + " ", PROMOTED + " ") else ""
            depth, hops, url = line[2 if lane else 0:].split(" ", 2)
            yield int(depth), int(hops), url, lane

    def read_errors(self) -> Iterator[dict[str, Any]]:
        for line in complete_lines(self.errors_path):
            yield json.loads(line)

    def read_robots(self) -> Iterator[dict[str, Any]]:
        for line in complete_lines(self.robots_path):
            yield json.loads(line)

    def read_tallies(self) -> Iterator[dict[str, Any]]:
        for line in complete_lines(self.tally_path):
            yield json.loads(line)


def drop_partial_line(path: Path) -> None:
    """Cut a last line without its newline, so appends start on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "r+b") as fh:
        data = fh.read()
        if not data.endswith(b"\n"):
            fh.truncate(data.rfind(b"\n") + 1)


def stored_responses(warc_files: list[Path], signatures: bool) -> tuple[set[str], set[int]]:
    """URLs with a complete response record in ``warc_files``, and the content signatures of
    their HTML 2xx bodies (when ``signatures``)."""
    urls: set[str] = set()
    sigs: set[int] = set()
    for path in warc_files:
        with open(path, "rb") as fh:
            for record in ArchiveIterator(fh):
                if record.rec_type != "response":
                    continue
                urls.add(record.rec_headers.get_header("WARC-Target-URI"))
                http = record.http_headers
                if signatures and http is not None and 200 <= int(http.get_statuscode() or 0) < 300 \
                        and is_html(http.get_header("Content-Type") or ""):
                    sigs.add(content_signature(record.content_stream().read()))
    return urls, sigs
