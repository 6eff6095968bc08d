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

Published dictionaries are not clean (about 65 of 12,000 lines of one real file are not
groups), so lines are taken as a spinner takes them:

* a head with no synonyms (``one of the``, ``one of the|``, ``big|big``) is accepted and spins
  nothing: the spinner cannot change it, so it is not a mutable (DSpin: mutables are the
  words the spinner can replace) and, unless another line gives it synonyms, stays immutable;
* alternatives with no words (``a||b``, ``a|%|b``) are dropped and counted;
* a line whose head has no words (``%|percent``) or that is not UTF-8 cannot be used: it is
  skipped and reported with its file and line, or is an error under ``--strict``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spamflow.errors import BadInputError, SpamflowError
from spamflow.words import words
from spamflow_spin.synonyms import SynonymLookup

MAX_PHRASE_WORDS = 6
"""DSpin looks up a word "combined with zero to five subsequent words": phrases of up to 6 words."""

BAD_KINDS = ("dictionary_no_head", "dictionary_not_utf8")
"""The kinds of unusable line; the spin stage counts each as ``bad_<kind>``."""


class DictionaryError(SpamflowError):
    """A synonym dictionary file is unreadable or is not a spinner dictionary at all."""


class BadLine(ValueError):
    """A dictionary line that cannot be used: ``kind`` is one of BAD_KINDS."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


@dataclass(frozen=True)
class Group:
    """One line's synonym group, entries as space-joined word strings."""

    head: str
    synonyms: list[str]
    """Without the head itself; empty for a head that spins nothing."""
    empty_alternatives: int = 0
    """Alternatives with no words (``a||b``), dropped."""


@dataclass
class SynonymDictionary(SynonymLookup):
    """Entries as space-joined word strings (``"turn into"``), with the synonym graph."""

    neighbours: dict[str, set[str]] = field(default_factory=dict)
    """entry -> first-level synonyms (undirected head–synonym edges)."""
    prefixes: set[str] = field(default_factory=set)
    """Proper prefixes of the multi-word entries, so a phrase scan stops early."""
    max_words: int = 1
    heads: set[str] = field(default_factory=set)
    """Distinct heads with synonyms, after merging repeated heads."""
    lines: int = 0
    """Lines used: synonym groups and heads without synonyms."""
    too_long: int = 0
    """Entries of more than MAX_PHRASE_WORDS words: kept for the verifier, never matched in text."""
    blank_lines: int = 0
    heads_without_synonyms: int = 0
    """Lines whose head has no synonym (other than itself): they add nothing to the dictionary."""
    empty_alternatives: int = 0
    bad_lines: list[dict[str, Any]] = field(default_factory=list)
    """Skipped lines as the stage's bad records: {"file", "offset", "line", "kind", "reason"}
    (``offset``: the line's first byte, as other stages give a record's)."""

    def __contains__(self, entry: str) -> bool:
        return entry in self.neighbours

    def __len__(self) -> int:
        return len(self.neighbours)

    def add_group(self, head: str, synonyms: Iterable[str]) -> None:
        """Add ``head`` and its synonyms (word strings); edges go both ways.  A head with
        no synonym other than itself spins nothing, so it adds no entry."""
        synonyms = [syn for syn in synonyms if syn != head]
        if not synonyms:
            return
        self.__dict__.pop("_sorted_related", None)  # SynonymLookup.sorted_related's cache: edges change
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
            self.neighbours[head].add(syn)
            self.neighbours[syn].add(head)

    def counts(self) -> dict[str, int]:
        """The spin stage's ``dictionary_*`` and ``bad_<kind>`` counts."""
        out = {"dictionary_entries": len(self), "dictionary_heads": len(self.heads),
               "dictionary_lines": self.lines, "dictionary_too_long": self.too_long,
               "dictionary_blank_lines": self.blank_lines,
               "dictionary_heads_without_synonyms": self.heads_without_synonyms,
               "dictionary_empty_alternatives": self.empty_alternatives}
        for kind in BAD_KINDS:
            out[f"bad_{kind}"] = sum(bad["kind"] == kind for bad in self.bad_lines)
        return out


def parse_line(line: str) -> Group | None:
    """``head|syn1|syn2`` -> its Group; None for a blank line; BadLine if the head has no words.

    >>> parse_line("Turn into|become|Change ")
    Group(head='turn into', synonyms=['become', 'change'], empty_alternatives=0)
    >>> parse_line("one of the")
    Group(head='one of the', synonyms=[], empty_alternatives=0)
    >>> parse_line("a||%|b")
    Group(head='a', synonyms=['b'], empty_alternatives=2)
    >>> parse_line("   ") is None
    True
    """
    if not line.strip():
        return None
    head_text, *alternatives = line.split("|")
    head = " ".join(words(head_text))
    if not head:
        raise BadLine("dictionary_no_head",
                      f"the head (text before the first '|') has no words: {line.strip()[:80]!r}")
    entries = [" ".join(words(alt)) for alt in alternatives]
    synonyms = [entry for entry in entries if entry and entry != head]
    return Group(head, synonyms, sum(not entry for entry in entries))


def load_dictionary(paths: Sequence[Path | str], *, strict: bool = False) -> SynonymDictionary:
    """Merge the synonym groups of every file.  Unusable lines are skipped and listed in
    ``bad_lines`` (with ``strict``, the first is an error naming the file and line)."""
    if not paths:
        raise DictionaryError("no synonym dictionary given: set detectors.spin.dictionary to a list of files")
    out = SynonymDictionary()
    for path in map(Path, paths):
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise DictionaryError(f"cannot read synonym dictionary {path}: {exc.strerror or exc}") from exc
        _refuse_other_formats(path, data)
        groups, bad_before = out.lines - out.heads_without_synonyms, len(out.bad_lines)
        offset = 0
        for number, raw in enumerate(data.splitlines(keepends=True), 1):
            start, offset = offset, offset + len(raw)
            try:
                group = parse_line(_decode(raw.rstrip(b"\r\n"), number))
            except BadLine as bad:
                if strict:
                    raise BadInputError(f"{path}:{number}: {bad.kind}: {bad.reason} "
                                        "(drop --strict to count and go on)") from None
                out.bad_lines.append({"file": str(path), "offset": start, "line": number, "kind": bad.kind,
                                      "reason": bad.reason})
                continue
            if group is None:
                out.blank_lines += 1
                continue
            out.lines += 1
            out.empty_alternatives += group.empty_alternatives
            out.heads_without_synonyms += not group.synonyms
            out.add_group(group.head, group.synonyms)
        if out.lines - out.heads_without_synonyms == groups:  # this file gave no synonym
            raise _not_a_dictionary(path, out.bad_lines[bad_before:])
    return out


def _not_a_dictionary(path: Path, skipped: list[dict[str, Any]]) -> DictionaryError:
    """A file without one synonym would detect nothing: it is the wrong file (or encoding)."""
    message = f"{path}: no line has a synonym, so it is not a spinner dictionary (one group per line, 'head|syn|...')"
    if skipped:
        message += f"; {len(skipped)} lines skipped, the first, line {skipped[0]['line']}: {skipped[0]['reason']}"
    return DictionaryError(message)


def _decode(raw: bytes, number: int) -> str:
    try:
        return raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise BadLine("dictionary_not_utf8", f"not UTF-8 ({exc.reason} at byte {exc.start}): {raw[:80]!r}; "
                      "convert the file to UTF-8") from None


_MYTHES_BLOCK = re.compile(rb"[^|]+\|[0-9]+")


def _refuse_other_formats(path: Path, data: bytes) -> None:
    """Files that would load as nonsense rather than fail line by line: gzip, and a MyThes
    thesaurus (an encoding line, then ``word|N`` blocks whose N sense lines are ``(pos)|syn|...``)."""
    if data[:2] == b"\x1f\x8b":
        raise DictionaryError(f"{path}: is gzip-compressed; decompress it (gunzip) and name the text file")
    first_lines = data[:4096].splitlines()[:3]
    if len(first_lines) == 3 and b"|" not in first_lines[0] and _MYTHES_BLOCK.fullmatch(first_lines[1]) \
            and first_lines[2].startswith(b"("):
        raise DictionaryError(f"{path}: is a MyThes thesaurus ('word|N' blocks of '(pos)|synonym|...' lines), "
                              "not a spinner dictionary; convert it to 'head|synonym|...' lines first")
