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

``noise: markup-urls`` (not in the paper; the default) is the same with two reductions, for
templates whose giant listing pages (a table of thousands of rows, each linking to one
item) sit far from their siblings under ``markup``:

* every quoted attribute value that is a URL (its noise starts ``://``, ``//`` or ``/``:
  absolute, protocol-relative or root-relative) becomes its first mark (``="://..//---"`` ->
  ``=":"``).  A link's target is the page's data, not its template: the punctuation of item
  slugs (``/dataset/a-b-c``, ``?id=1&x=2``) differs from row to row, so a 2,000-row listing
  has tens of thousands of distinct n-grams that its template's other pages lack.  What
  stays is that a URL is there, absolute or relative, and all the rest of the tag;
* line ends are read as the HTML standard reads them (CR LF and a lone CR are LF), so that a
  template saved with another line-end convention is the same markup (without it the real
  doorway kit splits in two once URLs no longer fill its tags: docs/hss.md).

Measured (docs/hss.md, "Giant listing pages"): it joins data.gov.uk's 780 KB CKAN statistics
page to its template, at the price of more pages of shared templates joined across sites.
"""

from __future__ import annotations

import re

NOISE_MODES = ("paper", "markup", "markup-urls")
_TAG = re.compile(r"<[^<>]*>")
_QUOTED = re.compile(r""""[^"<>]*"|'[^'<>]*'""")  # a quoted attribute value (never beyond its tag)
_URL_START = re.compile(r":?//|/")
_LINE_END = re.compile(r"\r\n?")


def markup_noise(noise: str) -> str:
    """The characters of ``noise`` inside its tags, tags in page order.

    >>> markup_noise('<  =""> , .  ! </>\\n<>')
    '<  =""></><>'
    """
    return "".join(_TAG.findall(noise))


def url_markup_noise(noise: str) -> str:
    """:func:`markup_noise` of ``noise`` with line ends as LF and every quoted URL value cut
    to its first mark.

    >>> url_markup_noise('< ="://..//--" ="-">\\r\\n, .< ="" =\\'/-/?=\\'\\r>< =""/>')
    '< =":" ="-">< ="" =\\'/\\'\\n>< =""/>'
    """
    return _QUOTED.sub(_cut_url, markup_noise(_LINE_END.sub("\n", noise)))


def _cut_url(value: re.Match[str]) -> str:
    quoted = value.group(0)
    return quoted[:2] + quoted[0] if _URL_START.match(quoted, 1) else quoted


def page_noise(noise: str, mode: str) -> str:
    """The noise HSS fingerprints for ``mode``: ``paper``, all of it; ``markup``, its tags;
    ``markup-urls``, its tags with URL values cut to one mark."""
    if mode == "paper":
        return noise
    if mode == "markup":
        return markup_noise(noise)
    if mode == "markup-urls":
        return url_markup_noise(noise)
    raise ValueError(f"noise must be one of {NOISE_MODES}, got {mode!r}")
