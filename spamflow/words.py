"""The word sequence every text detector uses.

A word is a maximal run of Unicode letters and digits (``str.isalnum`` characters),
lower-cased.  Everything else breaks words: spaces, punctuation, apostrophes, hyphens,
underscores.  So ``"Don't re-use e-mail_addresses!"`` gives
``['don', 't', 're', 'use', 'e', 'mail', 'addresses']``.  The rule is the same for every
language and needs no model; ``docs/parse.md`` explains why.

>>> words("Don't re-use e-mail_addresses!")
['don', 't', 're', 'use', 'e', 'mail', 'addresses']
>>> words("Ärger über 3,5 Mio. Straße")
['ärger', 'über', '3', '5', 'mio', 'straße']
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """Lower-cased words of ``text`` in order."""
    return _WORD.findall(text.lower())


_ASCII_ALNUM = bytes(range(48, 58)) + bytes(range(65, 91)) + bytes(range(97, 123))


def html_noise(html: str) -> str:
    """HSS's "HTML noise" (Urvoy et al., section 3.1): the document with its alphanumeric
    characters removed, keeping whitespace, line feeds and tag punctuation.

    Non-ASCII characters are removed too: in HTML they are content (letters of other
    scripts, typographic quotes), not markup, and dropping them lets this run as one
    ``bytes.translate`` (docs/parse.md).

    >>> html_noise('<p class="x">Hi 2 you, Zoë</p>\\n')
    '< ="">  , </>\\n'
    """
    return html.encode("ascii", "ignore").translate(None, _ASCII_ALNUM).decode("ascii")
