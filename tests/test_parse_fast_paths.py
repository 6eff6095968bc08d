"""The parse's fast paths give what the plain definitions give, and are faster than them
(measured as a ratio in the same process, best of several rounds, so it holds on a busy
machine): words() against the regular expression that defined a word before."""

from __future__ import annotations

import functools
import re
import sys
import tarfile
import time
import unicodedata
from collections.abc import Callable

import pytest
from selectolax.lexbor import LexborHTMLParser

from spamflow.parse.html_text import INVISIBLE_TAGS
from spamflow.words import words

from conftest import SHARED_DATA

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@functools.cache
def _word_regex(astral: bool) -> re.Pattern[str]:
    top = sys.maxunicode + 1 if astral else 0x10000
    marks = "".join(re.escape(chr(c)) for c in range(top) if unicodedata.category(chr(c)) in ("Mn", "Mc", "Me"))
    return re.compile(f"[\\w{marks}]+")


def regex_words(text: str) -> list[str]:
    """The definition of a word as spamflow wrote it first: runs of ``\\w`` (minus ``_``)
    and combining marks after NFC and lower-casing, found by ``re``."""
    text = unicodedata.normalize("NFC", text).lower().replace("_", " ")
    astral_mark = any(unicodedata.category(c)[0] == "M" for c in set(_ASTRAL.findall(text)))
    return _word_regex(astral_mark).findall(text)


EDGE_CASES = [
    "", " ", "_", "a_b", "__init__", "Don't re-use e-mail_addresses!", "Ärger über 3,5 Mio. Straße",
    "हिन्दी भाषा, Cafe\u0301 İstanbul", "𑀅𑀲𑁄𑀓 (Brahmi)", "\u212a\u212b Kelvin Ångström", "x\x1cy\x1dz\x1e\x1fw",
    "a\x85b\xa0c\u2028d\u3000e\u200bf", "日本語。テキスト、です！", "emoji 😀 and 🇩🇪 flags", "lone \ud800 surrogate",
    "«quoted» — “typographic” ‘marks’ … ©2026", "١٢٣ arabic digits ٤٥", "ﬁ ligature ǅ titlecase", "x\u0301\u0302 y",
    "tab\there\nnewline\r\nend", "\U0001d400\U0001d7ce math alnum", "\U000e0100 variation selector alone",
    "superscript² ½ fractions Ⅻ roman", "ÆØÅ æøå ΣΑΣ σας",
]


def test_words_match_the_regular_expression_definition_on_edge_cases():
    for text in EDGE_CASES:
        assert words(text) == regex_words(text), text


def _real_texts(limit: int = 250) -> list[str]:
    tarball = SHARED_DATA / "html-trafilatura-eval" / "trafilatura-tests-html.tar.xz"
    if not tarball.exists():
        pytest.skip(f"needs {tarball} (the shared real-data folder beside the repo); it is absent here")
    texts = []
    with tarfile.open(tarball) as tar:
        for member in tar:
            if member.isfile() and member.name.endswith(".html"):
                tree = LexborHTMLParser(tar.extractfile(member).read())  # type: ignore[union-attr]
                tree.strip_tags(INVISIBLE_TAGS)
                root = tree.body or tree.root
                texts.append(root.text(deep=True, separator=" ") if root is not None else "")
                if len(texts) >= limit:
                    break
    return texts


def _best_seconds(fn: Callable[[], object], rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def test_words_of_real_pages_match_the_definition_and_are_faster():
    texts = _real_texts()
    assert sum(not t.isascii() for t in texts) > 100  # the non-ASCII path is what is measured
    for text in texts:
        assert words(text) == regex_words(text)
    fast = _best_seconds(lambda: [words(t) for t in texts])
    plain = _best_seconds(lambda: [regex_words(t) for t in texts])
    assert plain / fast > 1.3, f"words() {fast:.3f} s, the regular expression {plain:.3f} s"
