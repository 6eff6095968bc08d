"""Undeclared legacy-encoded pages, decoded: the windows-1252 fallback on real pages.
The figure of docs/parse.md ("Charset") and docs/quality.md.

Run from the repository root (6 CPU-minutes; 45 minutes of wall time on a loaded
shared machine when run under ``nice``)::

    PYTHONPATH=.:plugins .venv/bin/python benchmarks/eval_charset_real.py

Every HTML page of ``../shared/data/html-trafilatura-eval`` and
``../shared/data/html-mozilla-readability`` is decoded as parse decodes it (its own
declaration), its ``<meta charset>`` / ``http-equiv`` declaration is removed, and it is
written in the legacy encoding of its text:

* pages whose non-ASCII letters are at least half East Asian: Shift_JIS when they hold kana,
  else EUC-KR when they hold Hangul, else GB18030;
* otherwise the first of windows-1252, -1250, -1254, -1257, -1251, -1253, -1255, -1256,
  -874 that can write at least 99 % of its non-ASCII letters (German, French, Spanish ...
  land on windows-1252; Czech, Polish, Hungarian on windows-1250);
* pages with no non-ASCII letter are left out (in ASCII they are valid UTF-8, which parse
  reads before any guess), as are pages no listed encoding writes.

Characters the encoding lacks are dropped first, so the expected text is the legacy bytes
read in that encoding.  A page is **right** when ``decode_html`` (no Content-Type, as a
server that declares nothing) returns exactly that text.  The same bytes are also read by
the rule before the fallback (commit 8d7ab9a's parent: charset-normalizer's first guess on
the first 64 KB, else windows-1252), for comparison.
"""

from __future__ import annotations

import argparse
import re
import sys
import tarfile
import time
import unicodedata
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO)]

from spamflow.parse.charset import _codec, decode_html  # noqa: E402

DATA = REPO.parent / "shared" / "data"
ARCHIVES = [DATA / "html-trafilatura-eval" / "trafilatura-tests-html.tar.xz",
            DATA / "html-mozilla-readability" / "readability-test-pages.tar.xz"]
LATIN_AND_OTHERS = ["cp1252", "cp1250", "cp1254", "cp1257", "cp1251", "cp1253", "cp1255", "cp1256", "cp874"]
META_CHARSET = re.compile(r"<meta[^>]+?charset\s*=[^>]*>", re.I)  # as tests/test_charset.py removes it


def legacy_encoding(text: str) -> str | None:
    """The legacy encoding a server of this page's language would have used, or None."""
    letters = [c for c in text if ord(c) > 127 and c.isalpha()]
    if not letters:
        return None
    names = Counter(unicodedata.name(c, "").split(" ")[0] for c in letters)
    if 2 * (names["HIRAGANA"] + names["KATAKANA"] + names["HANGUL"] + names["CJK"]) >= len(letters):
        # an East Asian page (not a Western one whose language menu says 中文 or 한국어)
        if names["HIRAGANA"] or names["KATAKANA"]:
            return "shift_jis"
        return "euc_kr" if names["HANGUL"] else "gb18030"
    for codec in LATIN_AND_OTHERS:
        kept = sum(1 for c in letters if c.encode(codec, "ignore"))
        if kept >= 0.99 * len(letters):
            return codec
    return None


def old_rule(body: bytes) -> str:
    """The decoding before the windows-1252 fallback: charset-normalizer's first guess."""
    from charset_normalizer import from_bytes

    try:
        body.decode("utf-8")
        return body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    best = from_bytes(body[:65536]).best()
    codec = _codec(best.encoding) if best else None
    return body.decode(codec or "cp1252", errors="replace")


def pages():
    for archive in ARCHIVES:
        with tarfile.open(archive) as tar:
            for member in sorted(tar.getmembers(), key=lambda m: m.name):
                if member.isfile() and member.name.endswith(".html"):
                    yield f"{archive.parent.name}:{member.name}", tar.extractfile(member).read()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-old", action="store_true", help="skip the rule before (charset-normalizer)")
    ap.add_argument("--show", type=int, default=10, help="pages to list per kind of failure")
    a = ap.parse_args()
    missing = [str(p) for p in ARCHIVES if not p.exists()]
    if missing:
        raise SystemExit(f"needs ../shared/data: missing {', '.join(missing)}")
    t0 = time.time()
    total, skipped = 0, Counter()
    right, old_right, by_codec, old_wrong_by_codec, wrong = Counter(), Counter(), Counter(), Counter(), []
    for name, raw in pages():
        total += 1
        text = META_CHARSET.sub("", decode_html(raw, "text/html").text)
        codec = legacy_encoding(text)
        if codec is None:
            skipped["ascii" if not any(ord(c) > 127 and c.isalpha() for c in text) else "no legacy encoding"] += 1
            continue
        legacy = text.encode(codec, "ignore")
        expected = legacy.decode(codec)
        by_codec[codec] += 1
        decoded = decode_html(legacy, None)
        if decoded.text == expected:
            right[codec] += 1
        else:
            wrong.append((name, codec, decoded.charset))
        if not a.no_old:
            if old_rule(legacy) == expected:
                old_right[codec] += 1
            else:
                old_wrong_by_codec[codec] += 1
    n = sum(by_codec.values())
    print(f"{total} HTML pages read; left out: {dict(skipped)}; evaluated: {n} ({time.time() - t0:.0f} s)")
    print(f"{'encoding':10} {'pages':>6} {'right now':>10} {'right before':>13}")
    for codec, count in by_codec.most_common():
        before = "-" if a.no_old else str(old_right[codec])
        print(f"{codec:10} {count:6d} {right[codec]:10d} {before:>13}")
    before = "-" if a.no_old else f"{sum(old_right.values())} (garbled {sum(old_wrong_by_codec.values())})"
    print(f"{'all':10} {n:6d} {sum(right.values()):10d} {before:>13}")
    for name, codec, got in wrong[:a.show]:
        print(f"  wrong now: {name}: written in {codec}, read as {got}")


if __name__ == "__main__":
    main()
