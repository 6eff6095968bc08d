"""Tell a WET or WAT file (what Common Crawl derives from a WARC: the text, the metadata)
from a WARC of captures, by its first records, and find the WARC it says it came from.

A WET file holds ``conversion`` records (plain text), a WAT file ``metadata`` records
(JSON); neither holds a response with HTML, so the parser would make no page from them.
Ingest says so, naming the source WARC when the file does: its ``warcinfo`` record's
``WARC-Filename`` (``X.warc.wet.gz`` is made from ``X.warc.gz``), or a WAT record's JSON
``Container.Filename``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from spamflow.parse.warc_records import BadRecord, WarcRecord, iter_records

CAPTURES = frozenset({"response", "resource", "revisit", "request"})
"""Record types that make (or go with) pages: a file with any of these is a WARC of captures."""
DERIVED_KINDS = {"conversion": "WET", "metadata": "WAT"}
LOOK_AT = 10
"""How many records into a file the check looks (a WET or WAT file is derived from its start)."""
_DERIVED_NAME = re.compile(r"\.(wet|wat)(?=(\.gz)?$)", re.I)


@dataclass(frozen=True)
class DerivedFile:
    """A WET or WAT file: its ``kind``, and the WARC it came from when it names one."""

    kind: str
    source: str | None = None
    source_from: str = ""  # where the file names its source

    def reason(self) -> str:
        """The one-line reason ingest reports for this file."""
        what = "text" if self.kind == "WET" else "metadata"
        source = (f"parse the WARC it came from, {self.source} ({self.source_from})" if self.source
                  else "parse the WARC it was made from (the file does not name it)")
        return f"a {self.kind} file ({what} extracted from a WARC): no HTML; {source}"


def derived_file(path: str | Path, name: str | None = None) -> DerivedFile | None:
    """The file at ``path`` as a WET or WAT file, or None when it is not one (it has a
    capture among its first ``LOOK_AT`` records, or neither a conversion record nor a JSON
    metadata record, or is not WARC at all)."""
    kinds: list[str] = []
    warcinfo_name: str | None = None
    container: str | None = None
    for seen, item in enumerate(iter_records(path, wants_payload=_is_wat_json, max_bytes=1 << 16, name=name)):
        if isinstance(item, BadRecord) or seen >= LOOK_AT:
            break
        if item.rec_type in CAPTURES:
            return None
        if item.rec_type == "warcinfo" and warcinfo_name is None:
            warcinfo_name = item.header("WARC-Filename")
        elif item.rec_type == "conversion" or _is_wat_json(item):  # other metadata records say nothing
            kinds.append(DERIVED_KINDS[item.rec_type])
            if container is None and item.payload is not None:
                container = _container_filename(item.payload)
    if not kinds:
        return None
    kind = "WET" if "WET" in kinds else "WAT"
    if container:
        return DerivedFile(kind, container, "its Container.Filename")
    if warcinfo_name and _DERIVED_NAME.search(warcinfo_name):
        return DerivedFile(kind, _DERIVED_NAME.sub("", warcinfo_name), "its warcinfo's WARC-Filename, less .wet/.wat")
    return DerivedFile(kind)


def _is_wat_json(record: WarcRecord) -> bool:
    return record.rec_type == "metadata" and (record.header("Content-Type") or "").startswith("application/json")


def _container_filename(payload: bytes) -> str | None:
    """``Container.Filename`` of a WAT record's JSON: the WARC whose record it describes."""
    try:
        data = json.loads(payload)
    except ValueError:
        return None
    container = data.get("Container") if isinstance(data, dict) else None
    name = container.get("Filename") if isinstance(container, dict) else None
    return name if isinstance(name, str) and name else None
