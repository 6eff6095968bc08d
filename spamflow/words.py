"""The word sequence every text detector uses.

A word is a maximal run of Unicode letters, digits and combining marks, after NFC
normalisation and lower-casing.  Everything else breaks words: spaces, punctuation,
apostrophes, hyphens, underscores.  So ``"Don't re-use e-mail_addresses!"`` gives
``['don', 't', 're', 'use', 'e', 'mail', 'addresses']``.  Combining marks stay inside
their word, so Devanagari, Thai vowel signs and decomposed accents are not cut apart.
The rule is the same for every language and needs no model; ``docs/parse.md`` explains why.

>>> words("Don't re-use e-mail_addresses!")
['don', 't', 're', 'use', 'e', 'mail', 'addresses']
>>> words("Ärger über 3,5 Mio. Straße")
['ärger', 'über', '3', '5', 'mio', 'straße']
>>> words("हिन्दी भाषा, Cafe\u0301 İstanbul")
['हिन्दी', 'भाषा', 'café', 'i̇stanbul']
>>> words("𑀅𑀲𑁄𑀓 (Brahmi)")
['𑀅𑀲𑁄𑀓', 'brahmi']
"""

from __future__ import annotations

import functools
import unicodedata

import numpy as np
import numpy.typing as npt

_ASCII_WORD_OR_SPACE = bytes(c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256))
"""Lower-case ASCII text's bytes with every byte but ``[a-z0-9]`` made a space."""

_ASCII_WORD_OR_SPACE_KEEP_HIGH = _ASCII_WORD_OR_SPACE[:128] + bytes(range(128, 256))
"""The same, leaving the bytes of non-ASCII characters as they are."""

_SPACE_BYTE = np.uint8(32)


def words(text: str) -> list[str]:
    """Lower-cased words of ``text`` in order: ``word_text(text).split()``.

    Every character that is not a letter, digit or combining mark becomes a space and the
    text is split on whitespace (no whitespace character is a word character): the same
    words as ``re.findall`` over word characters, at twice its speed, because one C
    ``str.split`` makes the strings instead of a regular-expression match per word.
    """
    return word_text(text).decode("utf-8").split()


def word_text(text: str) -> bytes:
    """The words of ``text`` as UTF-8, separated by runs of ASCII spaces (and nothing else):
    what :func:`words` splits.

    The parse stage keeps this and lets Arrow split it (``spamflow.parse.pages.PageBatch``):
    a Python string per word (~1,000 a page) cost as much as finding the words.  Only the
    non-ASCII characters are looked up in the table of word characters, and a non-word one
    becomes as many spaces as it has bytes (a run of spaces splits like one space).
    """
    text = unicodedata.normalize("NFC", text).lower()
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_WORD_OR_SPACE)
    utf8 = np.frombuffer(text.encode("utf-8", "surrogatepass").translate(_ASCII_WORD_OR_SPACE_KEEP_HIGH), np.uint8)
    high, word = _non_ascii_characters(utf8)
    spaced = utf8.copy()
    spaced[high[~word]] = _SPACE_BYTE
    return spaced.tobytes()


def _non_ascii_characters(utf8: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.bool_]]:
    """The offsets of the non-ASCII bytes of ``utf8`` (UTF-8, surrogates allowed) and, for
    each, whether its character is a word character.  Only these characters are decoded
    and looked up: on real pages they are ~1 % of the bytes."""
    high = np.flatnonzero(utf8 >= 0x80)
    points = np.frombuffer(utf8[high].tobytes().decode("utf-8", "surrogatepass").encode("utf-32-le", "surrogatepass"),
                           np.uint32)
    return high, np.repeat(_word_characters(points), 2 + (points >= 0x800) + (points >= 0x10000))


def _word_characters(points: npt.NDArray[np.uint32]) -> npt.NDArray[np.bool_]:
    """Which code points are letters, digits or combining marks (``_letter_or_digit``)."""
    bmp = points < 0x10000
    if bmp.all():
        return _bmp_letter_or_digit()[points]
    keep = np.zeros(len(points), bool)
    keep[bmp] = _bmp_letter_or_digit()[points[bmp]]
    astral = np.flatnonzero(~bmp)
    keep[astral] = [_letter_or_digit(chr(c)) for c in points[astral].tolist()]
    return keep


_NOT_ASCII_ALNUM = bytes(0 if 48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 else 1 for c in range(256))
"""Bytes that HTML noise keeps before looking at non-ASCII characters: all but ``[A-Za-z0-9]``
(as a ``bytes.translate`` table giving 1 for a byte kept, 0 for one dropped)."""


def html_noise(html: str, utf8: bytes | None = None) -> str:
    """HSS's "HTML noise" (Urvoy et al., section 3.1): the document with its alphanumeric
    characters removed, keeping whitespace, line feeds and tag punctuation.

    "Alphanumeric" is Unicode's: letters and digits of every script go, with the combining
    marks that belong to them (the letters of a word, as in :func:`words`); non-ASCII
    whitespace and punctuation (no-break spaces, typographic quotes, dashes, ``»``) stay,
    as the paper keeps all non-alphanumeric characters.  ASCII letters and digits go with
    one byte mask; a table over the code points of the non-ASCII characters left removes
    the non-ASCII ones.

    >>> html_noise('<p class="x">Hi 2 you, Zoë</p>\\n')
    '< ="">  , </>\\n'
    >>> html_noise('<p>«Caf\u0065\u0301\u00a0\u2014 日本_x»</p>')
    '<>«\xa0— _»</>'

    ``utf8``: ``html`` encoded as UTF-8, when the caller has it (a UTF-8 page's own bytes),
    to save encoding it again.
    """
    return html_noise_utf8(html, utf8).decode("utf-8", "surrogatepass")


def html_noise_utf8(html: str, utf8: bytes | None = None) -> bytes:
    """:func:`html_noise` in UTF-8 (surrogates as ``surrogatepass`` writes them).  The parse
    stage stores it so: Arrow takes UTF-8, and decoding the noise only for Arrow to encode
    it again cost ~0.04 ms a page."""
    if utf8 is None:
        utf8 = html.encode("utf-8", "surrogatepass")
    # ASCII letters and digits first, as bytes (UTF-8 sequences have no byte below 0x80):
    # a keep mask made by ``bytes.translate`` (a plain table lookup per byte in C: twice as
    # fast as numpy's ``take`` over a table) and numpy's compress; both together ~1.6x faster
    # than ``bytes.translate`` deleting them (whose branch per byte is mispredicted on text);
    # then the non-ASCII ones by a lookup over their code points (a regular expression would
    # take 8x longer on real pages), decoding only the non-ASCII characters.
    data = np.frombuffer(utf8, np.uint8)
    rest = np.compress(np.frombuffer(utf8.translate(_NOT_ASCII_ALNUM), np.bool_), data)
    high, word = _non_ascii_characters(rest)
    if not word.any():
        return rest.tobytes()
    keep = np.ones(len(rest), bool)
    keep[high[word]] = False
    return rest[keep].tobytes()


def _letter_or_digit(char: str) -> bool:
    """A word character, which HTML noise drops: alphanumeric (``str.isalnum``, which is
    also what ``\\w`` of ``re`` means beside ``_``) or a combining mark."""
    return char.isalnum() or unicodedata.category(char)[0] == "M"


@functools.cache
def _bmp_letter_or_digit() -> npt.NDArray[np.bool_]:
    """:func:`_letter_or_digit` for every code point below 0x10000 (built once, ~0.05 s)."""
    return np.array([_letter_or_digit(chr(c)) for c in range(0x10000)], dtype=bool)
