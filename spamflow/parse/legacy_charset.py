"""The encoding of a page that declares none and is not UTF-8.

WHATWG's answer is the locale's legacy encoding, windows-1252 for Western Europe and the
Americas.  charset-normalizer alone is unreliable here: on a short French, Spanish or
Portuguese text it often answers windows-1250 (every byte string is valid in both), and
"crème à la" comes out "crčme ŕ la".  So windows-1252 wins unless the page is evidently in
another encoding.  The evidence is the page's text runs (between tags) that hold a byte of
0x80 or more: markup and scripts are ASCII and say nothing.

1. Fewer than ``MIN_EVIDENCE`` non-ASCII letters (or symbols inside words, or bytes
   windows-1252 leaves undefined): windows-1252 (too little to go on).
2. Read as windows-1252, ``WESTERN_FIT`` of the non-ASCII letters are those of one Western
   language (a symbol between letters such as ``Za¿ó³æ``, and a byte windows-1252 leaves
   undefined, count against): windows-1252.
3. A Latin legacy encoding (``LATIN_CODECS``: windows-1250, ISO-8859-2, ...) whose reading
   is confident: 90 % of its non-ASCII letters are of one Central European, Baltic or
   Turkish language (a letter standing alone does not count: none of them has such a
   one-letter word), more than the best Western language's share under windows-1252, and
   on the bytes where the two readings differ that language fits at least as well as the
   best Western one (a French page naming Czech towns stays windows-1252).  The best fit
   wins.
4. If the text does not look Latin (its words do not mix ASCII and other letters) or it
   decodes in a CJK multi-byte encoding: charset-normalizer's candidates, for the first
   64 KB of text runs and then for the page's first 64 KB (each misleads it on some
   pages), that browsers know (``WEB_CODECS``: no DOS or Mac code pages), in its order;
   the first that decodes without error, with 90 % of its non-ASCII letters in one
   non-Latin script (Cyrillic, Greek, Hebrew, Arabic, Thai, or Chinese, Japanese and
   Korean characters; not half-width katakana) and at most ``MIXED`` of those words
   mixing in ASCII letters (a Western text read as Cyrillic mixes nearly all), wins.
5. Otherwise windows-1252.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from charset_normalizer import from_bytes

SAMPLE_BYTES = 65536
MIN_EVIDENCE = 10
WESTERN_FIT = 0.97
FIT = 0.9
MIXED = 0.2

_HIGH_BYTES = re.compile(rb"[\x80-\xff]+")
_DELIMITER = re.compile(rb"[<>\n]")
_CODE = re.compile(rb"<(script|style)\b.*?</\1\s*>", re.I | re.S)
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_WORD = re.compile(r"[^\W\d_]+")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_WORD_JOINERS = "’‘·–—\u00ad"  # apostrophes, Catalan's middle dot, dashes, soft hyphen

# Non-ASCII letters of languages written in windows-1252, with common loan letters.
WESTERN = {
    "french": "àâæçéèêëîïôœùûüÿ",
    "spanish": "áéíñóúüªº",
    "portuguese": "áâãàçéêíóôõúüªº",
    "italian": "àèéìíîòóùúªº",
    "catalan": "àçèéíïòóúü",
    "german": "äöüßéàèç",
    "dutch": "áéíóúàèêëïöüç",
    "danish-norwegian": "æøåéèóòôü",
    "swedish": "åäöéü",
    "finnish-estonian": "äöåõüšž",
    "icelandic-faroese": "áéíóúýþæöðø",
}
# Non-ASCII letters of other Latin-script languages with a legacy encoding of their own.
OTHER_LATIN = {
    "czech": "áčďéěíňóřšťúůýž",
    "slovak": "áäčďéíĺľňóôŕšťúýž",
    "polish": "ąćęłńóśźż",
    "hungarian": "áéíóöőúüű",
    "slovene-croatian": "čćđšž",
    "romanian": "ăâîșşțţ",
    "lithuanian": "ąčęėįšųūž",
    "latvian": "āčēģīķļņšūž",
    "turkish": "çğıİöşüâîû",
}
# Latin-script legacy encodings browsers know, besides windows-1252: tried directly.
LATIN_CODECS = ("cp1250", "iso8859_2", "cp1257", "iso8859_13", "cp1254", "iso8859_16", "iso8859_4", "iso8859_3")
# Multi-byte ones: a Western text almost never decodes in them without an error.
CJK_CODECS = ("cp932", "euc_jp", "gb18030", "big5", "cp949")
_NON_LATIN = {"CYRILLIC", "GREEK", "HEBREW", "ARABIC", "THAI", "EAST-ASIAN"}
_EAST_ASIAN = {"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL", "BOPOMOFO", "FULLWIDTH",
               "IDEOGRAPHIC"}
# The legacy encodings of the WHATWG Encoding Standard (what browsers decode), by Python
# name, less the Western ones (windows-1252 is the fallback); charset-normalizer also
# offers DOS and Mac code pages no web page can be in.
WEB_CODECS = {"cp866", "iso8859_2", "iso8859_3", "iso8859_4", "iso8859_5", "iso8859_6", "iso8859_7", "iso8859_8",
              "iso8859_10", "iso8859_13", "iso8859_14", "iso8859_16", "koi8_r", "koi8_u", "cp874", "cp1250",
              "cp1251", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258", "mac_cyrillic", "gb18030",
              "gbk", "gb2312", "big5", "big5hkscs", "euc_jp", "euc_jis_2004", "iso2022_jp", "shift_jis",
              "shift_jis_2004", "cp932", "euc_kr", "cp949"}


def text_runs(body: bytes) -> bytes:
    """The runs of text between tags (and line ends) that hold a non-ASCII byte, one a line;
    not inside ``<script>`` or ``<style>`` (code, not language).  Each stretch of the body is
    scanned at most twice, so this is linear."""
    body = _CODE.sub(b"<>", body)
    runs, end = [], 0
    for match in _HIGH_BYTES.finditer(body):
        if match.start() < end:
            continue  # in the run already taken
        start = max(body.rfind(d, end, match.start()) for d in (b"<", b">", b"\n")) + 1
        stop = _DELIMITER.search(body, match.end())
        end = stop.start() if stop else len(body)
        runs.append(body[start:end])
    return b"\n".join(runs)


def _in_word_symbol(text: str, i: int, c: str) -> bool:
    """A non-ASCII non-letter between two letters (``Za¿ó³æ``), or U+FFFD: mojibake."""
    if c == "\ufffd":
        return True
    return (not c.isalpha() and not c.isspace() and c not in _WORD_JOINERS
            and 0 < i < len(text) - 1 and text[i - 1].isalpha() and text[i + 1].isalpha())


def _lower(c: str) -> str:
    low = c.lower()
    return low if len(low) == 1 else c  # "İ".lower() is two code points: keep "İ"


def _judged(text: str, where: list[int] | None = None, lone: bool = True) -> tuple[Counter[str], int, int]:
    """The non-ASCII letters of ``text`` (lower-cased, counted; without letters standing
    alone between non-letters unless ``lone``), how many letters that leaves out, and the
    in-word symbols; only at the offsets ``where`` if given."""
    spots = [(i, text[i]) for i in where] if where is not None else [
        (m.start(), m.group()) for m in _NON_ASCII.finditer(text)]
    letters: Counter[str] = Counter()
    left_out = symbols = 0
    for i, c in spots:
        if not c.isalpha():
            symbols += _in_word_symbol(text, i, c)
        elif lone or (i > 0 and text[i - 1].isalpha()) or (i + 1 < len(text) and text[i + 1].isalpha()):
            letters[_lower(c)] += 1
        else:
            left_out += 1
    return letters, left_out, symbols


def language_fit(text: str, alphabets: dict[str, str], where: list[int] | None = None, lone: bool = True) -> float:
    """The largest share of the text's non-ASCII letters and in-word symbols that are
    letters of one language of ``alphabets`` (a letter standing alone counts only if
    ``lone``: no Central European language has a one-letter word that is not ASCII);
    only at the offsets ``where`` if given.  1.0 when there is nothing to judge."""
    letters, left_out, symbols = _judged(text, where, lone)
    total = sum(letters.values()) + left_out + symbols
    if not total:
        return 1.0
    return max(sum(letters[c] for c in alphabet) for alphabet in alphabets.values()) / total


def _evidence(text: str) -> int:
    """Non-ASCII letters, in-word symbols and U+FFFD: what a language fit judges."""
    letters, _, symbols = _judged(text)
    return sum(letters.values()) + symbols


def _mixed_share(text: str) -> float:
    """The share of words with a non-ASCII letter that also hold an ASCII one: a few in a
    Russian or Greek text, nearly all in a German one read as Cyrillic."""
    mixed = total = 0
    for word in _WORD.findall(text):
        if not word.isascii():
            total += 1
            mixed += _ASCII_LETTER.search(word) is not None
    return mixed / total if total else 1.0


def _script(c: str) -> str:
    word = unicodedata.name(c, "?").split()[0]
    return "EAST-ASIAN" if word in _EAST_ASIAN else word


def _confident(text: str, western: str, western_fit: float) -> bool:
    scripts: Counter[str] = Counter(_script(c) for c in _NON_ASCII.findall(text) if c.isalpha())
    total = sum(scripts.values())
    if not total:
        return False
    script, n = scripts.most_common(1)[0]
    if n < FIT * total:
        return False
    if script in _NON_LATIN:
        return _mixed_share(text) <= MIXED
    if script != "LATIN" or len(text) != len(western):  # Latin candidates are single-byte
        return False
    fit = language_fit(text, OTHER_LATIN, lone=False)
    if fit < FIT or fit <= western_fit:
        return False
    differ = [m.start() for m in _NON_ASCII.finditer(western) if text[m.start()] != m.group()]
    return language_fit(text, OTHER_LATIN, differ, lone=False) >= language_fit(western, WESTERN, differ)


def _decodes(data: bytes, codec: str) -> bool:
    try:
        data.decode(codec)
    except UnicodeDecodeError:
        return False
    return True


def _latin(runs: bytes, western: str, western_fit: float) -> str | None:
    """The Latin legacy encoding that reads the text best, if one is confident."""
    best, best_fit = None, 0.0
    for codec in LATIN_CODECS:
        try:
            text = runs.decode(codec)
        except UnicodeDecodeError:  # ISO-8859-3 leaves a few bytes undefined
            continue
        fit = language_fit(text, OTHER_LATIN, lone=False)
        if fit > best_fit and _confident(text, western, western_fit):
            best, best_fit = codec, fit
    return best


def _detected(runs: bytes, body: bytes, western: str, western_fit: float) -> str | None:
    """charset-normalizer's first confident candidate that browsers know."""
    for evidence in (runs[:SAMPLE_BYTES], body[:SAMPLE_BYTES]):
        for match in from_bytes(evidence):
            codec = match.encoding
            if codec not in WEB_CODECS:  # a Western one is the fallback already
                continue
            try:
                text = runs.decode(codec)
            except (UnicodeDecodeError, LookupError):
                continue
            if _confident(text, western, western_fit):
                return codec
    return None


def legacy_codec(body: bytes) -> tuple[str, str]:
    """(Python codec, how it was chosen: ``fallback`` or ``detected``) for a body that
    declares no charset and is not UTF-8; see the module docstring."""
    runs = text_runs(body)
    western = runs.decode("cp1252", errors="replace")
    if _evidence(western) < MIN_EVIDENCE:
        return "cp1252", "fallback"
    western_fit = language_fit(western, WESTERN)
    if western_fit >= WESTERN_FIT:
        return "cp1252", "fallback"
    codec = _latin(runs, western, western_fit)
    if codec is None and (_mixed_share(western) <= MIXED or any(_decodes(runs, c) for c in CJK_CODECS)):
        codec = _detected(runs, body, western, western_fit)
    return (codec, "detected") if codec else ("cp1252", "fallback")
