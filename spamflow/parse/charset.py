"""Decoding HTML bodies to text, the way browsers choose an encoding, without ever failing.

Order (WHATWG encoding sniffing, simplified): byte-order mark, then the HTTP
``Content-Type`` charset, then a ``<meta charset>`` in the first 4 KB, then strict UTF-8,
then windows-1252 unless the page is evidently in another legacy encoding
(``spamflow.parse.legacy_charset``).  Labels map as WHATWG says
(``iso-8859-1`` and ``ascii`` mean windows-1252).  Undecodable bytes become U+FFFD and are
counted, never raised.  A declared label that names no text encoding a page can be in (a
NUL or other junk in it, ``base64``, ``rot13``, ``idna``, ``unicode_escape``, ...) is
ignored like an unknown one: the next piece of evidence decides.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from spamflow.parse.legacy_charset import legacy_codec

_META = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.I)
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_WHATWG_ALIASES = {"iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "ascii": "cp1252",
                   "us-ascii": "cp1252", "iso8859-1": "cp1252", "l1": "cp1252", "x-sjis": "shift_jis",
                   "gb2312": "gb18030", "gbk": "gb18030"}
_NOT_PAGE_CODECS = frozenset({"undefined", "idna", "punycode", "unicode-escape", "raw-unicode-escape"})
"""Text codecs by Python's word that no web page is in: they fail on ordinary bytes or read backslashes as escapes."""


@dataclass(frozen=True)
class Decoded:
    text: str
    charset: str  # the Python codec used
    source: str  # bom | http | meta | utf-8 | detected | fallback
    errors: int  # bytes replaced by U+FFFD


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _WHATWG_ALIASES.get(label, label)
    try:
        info = codecs.lookup(label)
    except (LookupError, ValueError):  # ValueError: a NUL in the label
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_PAGE_CODECS:
        return None  # base64, zlib, rot13, ...: bytes.decode refuses them
    return info.name


def charset_from_content_type(content_type: str | None) -> str | None:
    if not content_type:
        return None
    for part in content_type.split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset":
            return value.strip()
    return None


def _decode(body: bytes, codec: str) -> tuple[str, int]:
    text = body.decode(codec, errors="replace")
    return text, (text.count("\ufffd") if "\ufffd" in text else 0)


def decode_html(body: bytes, content_type: str | None = None) -> Decoded:
    """Decode an HTML body; see the module docstring for the order of evidence."""
    for bom, codec in _BOMS:
        if body.startswith(bom):
            text, errors = _decode(body[len(bom):], codec)
            return Decoded(text, codec, "bom", errors)
    for source, label in (("http", charset_from_content_type(content_type)), ("meta", _meta_charset(body))):
        declared = _codec(label)
        if declared and not declared.startswith("utf-16"):  # a page in UTF-16 has a BOM; without one the label lies
            try:
                text, errors = _decode(body, declared)
            except (UnicodeError, LookupError):  # a codec that fails even with errors="replace": not evidence
                continue
            return Decoded(text, declared, source, errors)
    try:
        return Decoded(body.decode("utf-8"), "utf-8", "utf-8", 0)
    except UnicodeDecodeError:
        pass
    codec, source = legacy_codec(body)
    codec = _codec(codec) or "cp1252"
    text, errors = _decode(body, codec)
    return Decoded(text, codec, source, errors)


def _meta_charset(body: bytes) -> str | None:
    match = _META.search(body[:4096])
    return match.group(1).decode("ascii", "replace") if match else None
