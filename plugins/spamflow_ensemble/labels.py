"""Host labels in the two formats of the classifier's contract.

* Web Spam Challenge: ``hostid label spamicity assessments``, whitespace-separated, no
  header; ``undecided`` rows are dropped (and counted).
* A delimited table with a header naming ``host`` and ``label`` columns (comma or tab;
  ``spamflow judge`` and the demo's ``labels/hosts.tsv`` write this form).  Labels ``spam``
  or ``1``; ``nonspam``, ``normal`` or ``0``; ``unsure`` and ``undecided`` rows are dropped
  and counted.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from spamflow.errors import BadInputError
from spamflow.report.labels import csv_text

SPAM, NONSPAM = "spam", "nonspam"
_VALUES = {"spam": SPAM, "1": SPAM, "nonspam": NONSPAM, "normal": NONSPAM, "0": NONSPAM}
_DROPPED = {"undecided", "unsure"}


@dataclass
class Labels:
    """``label`` by host name (or host id, for the Web Spam Challenge format) and what was dropped."""

    by_key: dict[str, str]
    path: str
    format: str
    dropped: dict[str, int] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        spam = sum(v == SPAM for v in self.by_key.values())
        return {"labels": len(self.by_key), "labels_spam": spam, "labels_nonspam": len(self.by_key) - spam,
                **{f"labels_dropped_{k}": v for k, v in sorted(self.dropped.items())}}


def _label(value: str, path: Path, line: int) -> str | None:
    v = value.strip().lower()
    if v in _DROPPED:
        return None
    if v not in _VALUES:
        raise BadInputError(f"{path}:{line}: label {value!r} is not spam/nonspam/normal/1/0/undecided/unsure")
    return _VALUES[v]


def read_labels(path: str | Path) -> Labels:
    """Read a labels file of either format (told apart by a header naming ``host`` and ``label``)."""
    path = Path(path)
    if not path.is_file():
        raise BadInputError(f"labels file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    first = next((ln for ln in lines if ln.strip()), "")
    delimiter = "\t" if "\t" in first else ","
    header = [h.strip().lower() for h in first.split(delimiter)]
    out: dict[str, str] = {}
    dropped: dict[str, int] = {}
    if "host" in header and "label" in header:
        reader = csv.DictReader(lines, delimiter=delimiter)
        assert reader.fieldnames is not None
        reader.fieldnames = [h.strip().lower() for h in reader.fieldnames]
        for n, row in enumerate(reader, start=2):
            host, value = csv_text((row.get("host") or "").strip()).lower(), row.get("label") or ""
            if not host:
                raise BadInputError(f"{path}:{n}: empty host")
            label = _label(value, path, n)
            if label is None:
                dropped[value.strip().lower()] = dropped.get(value.strip().lower(), 0) + 1
            else:
                out[host] = label
        return Labels(out, str(path), "host,label", dropped)
    for n, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) < 2:
            raise BadInputError(f"{path}:{n}: expected 'hostid label spamicity assessments' "
                                f"(Web Spam Challenge) or a header with host and label columns, got {line!r}")
        label = _label(parts[1], path, n)
        if label is None:
            dropped[parts[1].lower()] = dropped.get(parts[1].lower(), 0) + 1
        else:
            out[parts[0]] = label
    return Labels(out, str(path), "webspam-challenge", dropped)


def read_hostnames(path: str | Path) -> dict[str, str]:
    """Web Spam Challenge ``hostid hostname`` file (optionally gzipped): host name by id."""
    import gzip

    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    out: dict[str, str] = {}
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 2:
                raise BadInputError(f"{path}:{n}: expected 'hostid hostname', got {line.strip()!r}")
            out[parts[0]] = parts[1].lower()
    return out
