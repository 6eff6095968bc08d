"""HTTP ``Content-Encoding`` of archived bodies: teach warcio brotli (``br``) and ``zstd``.

warcio decodes ``gzip`` and ``deflate`` bodies itself.  It would decode ``br`` too, but its
hook sets an attribute on ``brotli.Decompressor`` that current brotli (1.1+) no longer
allows, so every brotli body failed as an unreadable record; and it knows no ``zstd``.
Both are common on the web since ~2017 (brotli) and 2024 (zstd, sent by Chrome and
Firefox).  :func:`install` registers decoders for both in warcio's table of decompressors;
importing ``spamflow.parse.warc_records`` calls it.  The decoders have the interface warcio's
``BufferedReader`` expects: ``decompress(bytes) -> bytes`` and ``unused_data``.

**Bounded output.**  A few KB of brotli or zstd can inflate to gigabytes (a "bomb").  warcio
hands a decoder its input 16 KB at a time and keeps whatever one call returns, so a decoder
with no output limit can take the process's whole memory in one call.  Each decoder made
here stops once it has produced its limit: :func:`output_limit` sets it for the decoders
made inside it (the parse stage sets ``parse.max_bytes + 1``, so a body longer than the page
limit is cut there and counted as a ``truncated`` page, as a gzip body is), and
:data:`DEFAULT_OUTPUT_LIMIT` bounds every other reader.  Past the limit a decoder returns
nothing more: the rest of the body is skipped at its compressed size.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import brotli
import zstandard
from warcio.bufferedreaders import BufferedReader, gzip_decompressor

DEFAULT_OUTPUT_LIMIT = 64 << 20
"""Most bytes one decoder produces when no :func:`output_limit` is in force."""

_ZSTD_FEED = 64
"""zstd input is fed this many bytes at a time (or more, see ``ZstdDecoder``): a zstd block
of up to 128 KiB can be written in 4 bytes, so one slice inflates to at most ~2 MiB."""

_limits = threading.local()


@contextmanager
def output_limit(limit: int) -> Iterator[None]:
    """Decoders made inside this block (by warcio, when a record's ``content_stream`` is
    opened) stop after ``limit`` bytes of output."""
    before = getattr(_limits, "value", None)
    _limits.value = limit
    try:
        yield
    finally:
        _limits.value = before


def current_limit() -> int:
    value = getattr(_limits, "value", None)
    return DEFAULT_OUTPUT_LIMIT if value is None else value


class BrotliDecoder:
    """A brotli stream as warcio reads it, producing at most its output limit."""

    def __init__(self) -> None:
        self._inner = brotli.Decompressor()
        self.unused_data: bytes | None = None  # brotli streams carry nothing after their end
        self.left = current_limit()  # bytes it may still produce
        self.stopped = False  # the limit was reached: the rest of the stream is skipped

    def decompress(self, data: bytes) -> bytes:
        if self.stopped or self._inner.is_finished():
            return b""  # bytes after the end of the stream (or past the limit) are not body
        out = self._inner.process(data, output_buffer_limit=self.left)
        self.left -= len(out)
        self.stopped = self.left <= 0  # the decoder may hold more: it is never asked for it
        return out


class ZstdDecoder:
    """A zstd stream (RFC 8878, ``Content-Encoding: zstd``) as warcio reads it, producing at
    most its output limit.  zstandard's decompressobj has no output bound, so input is fed a
    slice at a time and decoding stops once the limit is passed."""

    def __init__(self) -> None:
        self._inner = zstandard.ZstdDecompressor().decompressobj()
        self.unused_data: bytes | None = None
        self.left = current_limit()
        self.stopped = False

    def decompress(self, data: bytes) -> bytes:
        if self.stopped or self._inner.eof:
            return b""
        parts = []
        view = memoryview(data)
        pos = 0
        while pos < len(view) and not self._inner.eof:
            step = max(_ZSTD_FEED, self.left >> 15)  # <= ~left bytes of output per slice
            out = self._inner.decompress(view[pos:pos + step])
            pos += step
            parts.append(out)
            self.left -= len(out)
            if self.left <= 0:
                self.stopped = True
                break
        return b"".join(parts)


ENCODINGS = {"br": BrotliDecoder, "zstd": ZstdDecoder, "x-gzip": gzip_decompressor}  # x-gzip: RFC 9110 8.4.1.3


def install() -> None:
    """Register the decoders with warcio (idempotent)."""
    BufferedReader.DECOMPRESSORS.update(ENCODINGS)


def decodable(encoding: str | None) -> bool:
    """Whether a body with this ``Content-Encoding`` is decoded before it is parsed."""
    value = (encoding or "").strip().lower()
    return not value or value == "identity" or value in BufferedReader.get_supported_decompressors()
