"""Labels a person gives on the judging page, saved as they are given.

Every verdict is appended to ``judgements.jsonl`` and fsync'd before the page is answered; the
host labels are then rewritten (temp file, fsync, rename) as ``labels.csv`` with the header
``host,label`` that ``spamflow train`` and the classifier's ``labels:`` key read (written by the
csv module, so a host with a comma or a quote is quoted and reads back whole).  Killing the
server at any moment loses no answered verdict; the last verdict on an item wins.

A host that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (a crawled host
name is whatever a link said) is written with a ``'`` before it, as OWASP advises against CSV
formula injection: a spreadsheet opening ``labels.csv`` shows it as text instead of running it.
:func:`csv_text` undoes it (``spamflow train`` reads the host back as it was)."""

from __future__ import annotations

import csv
import json
import os
import threading
import time
from pathlib import Path

from spamflow.atomic import atomic_path
from spamflow.errors import SpamflowError

LABELS = ("spam", "nonspam", "unsure")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""A CSV cell starting with one of these is a formula to a spreadsheet (OWASP, CSV injection)."""


def csv_cell(text: str) -> str:
    """``text`` as a CSV cell no spreadsheet runs as a formula: ``'`` before a formula start."""
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_text(cell: str) -> str:
    """What :func:`csv_cell` was given."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_START) else cell
JOURNAL = "judgements.jsonl"
HOST_LABELS = "labels.csv"


class LabelStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.journal = folder / JOURNAL
        self.csv = folder / HOST_LABELS
        self._lock = threading.Lock()
        self.labels = self._replay()

    def _replay(self) -> dict[str, str]:
        labels: dict[str, str] = {}
        if not self.journal.is_file():
            return labels
        data = self.journal.read_bytes()
        if data and not data.endswith(b"\n"):  # a write cut by a crash, never answered: drop it
            with open(self.journal, "r+b") as fh:
                fh.truncate(data.rfind(b"\n") + 1)
        with open(self.journal, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    labels[entry["key"]] = entry["label"]
                except (ValueError, KeyError, TypeError) as exc:
                    raise SpamflowError(f"{self.journal} line {number}: not a judgement ({exc})") from exc
        return labels

    def add(self, key: str, label: str) -> None:
        """Record ``label`` for the item ``key`` durably (journal, then host labels)."""
        if label not in LABELS:
            raise ValueError(f"label must be one of {', '.join(LABELS)}, not {label!r}")
        line = json.dumps({"key": key, "label": label, "time": round(time.time(), 3)}) + "\n"
        with self._lock:
            with open(self.journal, "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            self.labels[key] = label
            if key.startswith("host:"):
                self._write_hosts()

    def host_labels(self) -> dict[str, str]:
        return {k.removeprefix("host:"): v for k, v in self.labels.items() if k.startswith("host:")}

    def _write_hosts(self) -> None:
        with atomic_path(self.csv) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh, lineterminator="\n")  # quotes a host with a comma or quote
            writer.writerow(["host", "label"])
            writer.writerows((csv_cell(host), label) for host, label in sorted(self.host_labels().items()))
            fh.flush()
            os.fsync(fh.fileno())
        directory = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
