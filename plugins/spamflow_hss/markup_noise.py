"""``noise: markup`` (not in the paper): the part of a page's HTML noise that lies inside its
tags, ``<`` to ``>``; the noise between tags (the punctuation and spaces of the text) is left
out.

Why: a doorway generator stitches scraped text into one skeleton; with the paper's whole-page
noise the text's punctuation dilutes the skeleton's, and pages of one kit match on 7-17 of 128
dimensions, as little as unrelated pages sharing a CMS (docs/hss.md).  Inside the tags is the
skeleton alone.

It is taken from the noise column parse already writes (which keeps every ``<`` and ``>`` of
the page), so no new column and no second pass over the HTML: a tag's non-alphanumeric
characters are exactly what the noise holds between its ``<`` and ``>``.  Comments count as
tags; script and style bodies are left out as text, except where their own ``<``/``>`` make
them look like a tag (``a < b``), which is rare and the same on every page of a template.
"""

from __future__ import annotations

import re

NOISE_MODES = ("paper", "markup")
_TAG = re.compile(r"<[^<>]*>")


def markup_noise(noise: str) -> str:
    """The characters of ``noise`` inside its tags, tags in page order.

    >>> markup_noise('<  =""> , .  ! </>\\n<>')
    '<  =""></><>'
    """
    return "".join(_TAG.findall(noise))


def page_noise(noise: str, mode: str) -> str:
    """The noise HSS fingerprints for ``mode``: ``paper``, all of it; ``markup``, its tags."""
    if mode == "paper":
        return noise
    if mode == "markup":
        return markup_noise(noise)
    raise ValueError(f"noise must be one of {NOISE_MODES}, got {mode!r}")
