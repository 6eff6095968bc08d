"""How deep a page's elements nest, and where to cut a page nested deeper than
``parse.max_depth`` (issue 36 item 4).

Lexbor's tree building costs about (start tags) x (depth): a page of 4,000 nested ``<div>`` s
takes ~0.1 s, 12,500 ~0.5 s, 200,000 minutes.  So a page is cut before the first start tag that
would open element ``max_depth + 1``, and only the part before it is parsed.

The check must cost nothing on ordinary pages (a whole parse is ~1.3 ms per 50 KB page).  A
first bound counts the ``<`` bytes followed by an ASCII letter (every start tag is one, with
numpy: ~10 us per 50 KB page): an element can only be opened by a start tag, so a page with at
most ``max_depth`` of them is never cut.  Only a page with more (none of the real pages of
~50 KB, 4 % of those of ~150 KB at the default 2,000) is scanned tag by tag (:func:`cut_offset`), as an HTML parser
nests them: void elements (``<br>``, ``<img>``) open nothing, the text of ``<script>``,
``<style>``, ``<textarea>``, ``<title>`` and comments holds no tags, a self-closed ``<path/>``
in SVG or MathML opens nothing (``<div/>`` in HTML does), an end tag closes its
element and those opened inside it, and ``<p>``, ``<li>``, ``<td>``, ``<option>``... close an
open element of their kind (as ``<p>text<p>text`` does).  The scan's depth may exceed the
parser's (it does not know every HTML5 rule), never by being fooled into a lower one than a
plain count of open start tags gives.
"""

from __future__ import annotations

import re

import numpy as np

DEFAULT_MAX_DEPTH = 2000
"""``parse.max_depth``: lexbor builds 2,000 nested levels in ~15 ms; no real page nests anywhere
near that (none of 1,034 real pages of the trafilatura test set nests 100 deep; Blink cuts its
DOM at 512)."""

_LT = np.uint8(ord("<"))

VOID = frozenset(b"area base br col embed hr img input keygen link meta param source track wbr basefont bgsound "
                 b"frame image menuitem".split())
RAW_TEXT = frozenset(b"script style textarea title xmp iframe noembed noframes noscript".split())
# A start tag of one of these closes the open elements of these kinds on top of the stack.
_TABLE_CELLS = frozenset((b"td", b"th"))
_CLOSES: dict[bytes, frozenset[bytes]] = {
    b"p": frozenset((b"p",)), b"li": frozenset((b"li", b"p")), b"dt": frozenset((b"dt", b"dd", b"p")),
    b"dd": frozenset((b"dt", b"dd", b"p")), b"option": frozenset((b"option",)),
    b"optgroup": frozenset((b"option", b"optgroup")), b"td": _TABLE_CELLS, b"th": _TABLE_CELLS,
    b"tr": _TABLE_CELLS | {b"tr"}, b"thead": _TABLE_CELLS | {b"tr", b"thead", b"tbody", b"tfoot"},
    b"tbody": _TABLE_CELLS | {b"tr", b"thead", b"tbody", b"tfoot"},
    b"tfoot": _TABLE_CELLS | {b"tr", b"thead", b"tbody", b"tfoot"},
    b"rb": frozenset((b"rb", b"rt", b"rp", b"rtc")), b"rt": frozenset((b"rb", b"rt", b"rp")),
    b"rp": frozenset((b"rb", b"rt", b"rp")),
}
# A start tag of one of these closes an open <p> on top of the stack.
_CLOSES_P = frozenset(b"address article aside blockquote center details dialog dir div dl fieldset figcaption "
                      b"figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr main menu nav ol p pre section "
                      b"summary table ul".split())
_FOREIGN = frozenset((b"svg", b"math"))
_TAG = re.compile(rb"<(?:(!--)|[!?]|(/?)([A-Za-z][^\t\n\f\r />]*))")


def start_tag_bound(data: bytes) -> int:
    """How many start tags ``data`` can hold at most: its ``<`` bytes followed by an ASCII letter."""
    if len(data) < 2:
        return 0
    a = np.frombuffer(data, np.uint8)
    lt = a[:-1] == _LT
    after = a[1:][lt] | 0x20  # the byte after each '<', lower-cased if a letter
    return int(np.count_nonzero((after >= ord("a")) & (after <= ord("z"))))


def cut_offset(data: bytes, max_depth: int) -> int | None:
    """The offset of the start tag that would open element ``max_depth + 1`` of ``data``; None
    if no element nests that deep (the usual case, known from :func:`start_tag_bound` alone)."""
    if len(data) <= 3 * max_depth or np.count_nonzero(np.frombuffer(data, np.uint8) == _LT) <= max_depth:
        return None  # a start tag takes 3 bytes (<b>) and one '<' at least
    bound = start_tag_bound(data)
    if bound <= max_depth:
        return None
    return _scan(data, max_depth, bound)


def _scan(data: bytes, max_depth: int, bound: int) -> int | None:
    """:func:`cut_offset` tag by tag; stops as soon as the start tags left (of ``bound``) cannot
    take the depth past ``max_depth``."""
    lower = data.lower()
    stack: list[bytes] = []
    open_count: dict[bytes, int] = {}
    pos, end = 0, len(data)
    while pos < end:
        m = _TAG.search(lower, pos)
        if m is None:
            return None
        if m.group(1):  # <!-- comment -->
            close = lower.find(b"-->", m.end())
            pos = end if close < 0 else close + 3
            continue
        name = m.group(3)
        if name is None:  # <!doctype ...>, <?...>
            close = lower.find(b">", m.end())
            pos = end if close < 0 else close + 1
            continue
        pos = m.end()
        if not m.group(2):
            bound -= 1
            if len(stack) + bound < max_depth:  # even if every start tag left opened one
                return None
        if m.group(2):  # an end tag closes its element and every one opened inside it
            if open_count.get(name):
                while True:
                    top = stack.pop()
                    open_count[top] -= 1
                    if top == name:
                        break
            continue
        if name in VOID:
            continue
        if name in _FOREIGN or open_count.get(b"svg") or open_count.get(b"math"):
            close = lower.find(b">", pos)  # <path/> in SVG or MathML opens nothing (<div/> in HTML does)
            if close > 0 and lower[close - 1] == 0x2F:
                pos = close + 1
                continue
        closes = _CLOSES.get(name)
        while stack and ((closes is not None and stack[-1] in closes) or (stack[-1] == b"p" and name in _CLOSES_P)):
            open_count[stack.pop()] -= 1
        if len(stack) >= max_depth:
            return m.start()
        stack.append(name)
        open_count[name] = open_count.get(name, 0) + 1
        if name in RAW_TEXT:  # its text holds no tags: on to its end tag
            close = lower.find(b"</" + name, pos)
            if close < 0:
                return None
            pos = close
    return None
