"""A spinner's synonym dictionary, loaded from the spinners' own text format.

One group per line, ``head|syn1|syn2|...`` (The Best Spinner's format, DSpin section III-B).
Heads and synonyms may be phrases; a head that appears on several lines (or in several
files) has its synonyms merged.  Every entry is split into words exactly as pages are
(:func:`spamflow.words.words`), so ``"well-known"`` is the phrase ``well known``.

The dictionary serves two purposes:

* the **partition**: a word or phrase is *mutable* if it is anywhere in the dictionary,
  as a head or as a synonym (a spun copy carries the synonyms, and they must be mutable in
  it as the head is in the original);
* the **mutable verifier**: first-level synonyms of an entry are its neighbours in the
  undirected graph of head–synonym edges, second-level synonyms their neighbours.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from spamflow.errors import SpamflowError
from spamflow.words import words

MAX_PHRASE_WORDS = 6
"""DSpin looks up a word "combined with zero to five subsequent words": phrases of up to 6 words."""


class DictionaryError(SpamflowError):
    """A synonym dictionary file is unreadable or a line is not ``head|syn|...``."""


@dataclass
class SynonymDictionary:
    """Entries as space-joined word strings (``"turn into"``), with the synonym graph."""

    neighbours: dict[str, set[str]] = field(default_factory=dict)
    """entry -> first-level synonyms (undirected head–synonym edges)."""
    prefixes: set[str] = field(default_factory=set)
    """Proper prefixes of the multi-word entries, so a phrase scan stops early."""
    max_words: int = 1
    heads: set[str] = field(default_factory=set)
    """Distinct heads, after merging repeated heads."""
    lines: int = 0
    too_long: int = 0
    """Entries of more than MAX_PHRASE_WORDS words: kept for the verifier, never matched in text."""

    def __contains__(self, entry: str) -> bool:
        return entry in self.neighbours

    def __len__(self) -> int:
        return len(self.neighbours)

    def add_group(self, head: str, synonyms: Iterable[str]) -> None:
        """Add ``head`` and its synonyms (word strings); edges go both ways."""
        self.heads.add(head)
        for entry in (head, *synonyms):
            if entry not in self.neighbours:
                self.neighbours[entry] = set()
                n = entry.count(" ") + 1
                if n > MAX_PHRASE_WORDS:
                    self.too_long += 1
                    continue
                self.max_words = max(self.max_words, n)
                parts = entry.split(" ")
                self.prefixes.update(" ".join(parts[:i]) for i in range(1, n))
        for syn in synonyms:
            if syn != head:
                self.neighbours[head].add(syn)
                self.neighbours[syn].add(head)

    def synonyms(self, entry: str) -> set[str]:
        """First-level synonyms of ``entry`` (empty if it is not in the dictionary)."""
        return self.neighbours.get(entry, set())

    def second_level(self, entry: str) -> set[str]:
        """Synonyms of synonyms, the entry and its first level excluded."""
        first = self.synonyms(entry)
        out: set[str] = set()
        for syn in first:
            out |= self.neighbours[syn]
        return out - first - {entry}


def parse_line(line: str, where: str) -> tuple[str, list[str]] | None:
    """``head|syn1|syn2`` -> (head, [synonyms]) as word strings; None for a blank line.

    >>> parse_line("Turn into|become|Change ", "d.txt:1")
    ('turn into', ['become', 'change'])
    >>> parse_line("   ", "d.txt:2") is None
    True
    """
    if not line.strip():
        return None
    fields = line.split("|")
    if len(fields) < 2:
        raise DictionaryError(f"{where}: not a synonym group: expected 'head|synonym|...', got {line.strip()[:80]!r}")
    head = " ".join(words(fields[0]))
    if not head:
        raise DictionaryError(f"{where}: the head (text before the first '|') has no words: {line.strip()[:80]!r}")
    synonyms = [s for s in (" ".join(words(f)) for f in fields[1:]) if s]
    if not synonyms:
        raise DictionaryError(f"{where}: head {head!r} has no synonyms: {line.strip()[:80]!r}")
    return head, synonyms


def load_dictionary(paths: Sequence[Path | str]) -> SynonymDictionary:
    """Merge the synonym groups of every file; errors name the file and line."""
    if not paths:
        raise DictionaryError("no synonym dictionary given: set detectors.spin.dictionary to a list of files")
    out = SynonymDictionary()
    for path in map(Path, paths):
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise DictionaryError(f"cannot read synonym dictionary {path}: {exc.strerror or exc}") from exc
        for number, raw in enumerate(data.splitlines(), 1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise DictionaryError(f"{path}:{number}: not UTF-8 ({exc.reason} at byte {exc.start}); "
                                      "convert the file to UTF-8") from None
            group = parse_line(line, f"{path}:{number}")
            if group is not None:
                out.lines += 1
                out.add_group(*group)
    return out
