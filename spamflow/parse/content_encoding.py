"""HTTP ``Content-Encoding`` of archived bodies: teach warcio brotli (``br``) and ``zstd``.

warcio decodes ``gzip`` and ``deflate`` bodies itself.  It would decode ``br`` too, but its
hook sets an attribute on ``brotli.Decompressor`` that current brotli (1.1+) no longer
allows, so every brotli body failed as an unreadable record; and it knows no ``zstd``.
Both are common on the web since ~2017 (brotli) and 2024 (zstd, sent by Chrome and
Firefox).  :func:`install` registers decoders for both in warcio's table of decompressors;
importing ``spamflow.parse.warc_records`` calls it.  The decoders have the interface warcio's
``BufferedReader`` expects: ``decompress(bytes) -> bytes`` and ``unused_data``.
"""

from __future__ import annotations

import brotli
import zstandard
from warcio.bufferedreaders import BufferedReader, gzip_decompressor


class BrotliDecoder:
    """A brotli stream as warcio reads it."""

    def __init__(self) -> None:
        self._inner = brotli.Decompressor()
        self.unused_data: bytes | None = None  # brotli streams carry nothing after their end

    def decompress(self, data: bytes) -> bytes:
        if self._inner.is_finished():
            return b""  # bytes after the end of the stream are not body
        return self._inner.process(data)


class ZstdDecoder:
    """A zstd stream (RFC 8878, ``Content-Encoding: zstd``) as warcio reads it."""

    def __init__(self) -> None:
        self._inner = zstandard.ZstdDecompressor().decompressobj()
        self.unused_data: bytes | None = None

    def decompress(self, data: bytes) -> bytes:
        if self._inner.eof:
            return b""
        return self._inner.decompress(data)


ENCODINGS = {"br": BrotliDecoder, "zstd": ZstdDecoder, "x-gzip": gzip_decompressor}  # x-gzip: RFC 9110 8.4.1.3


def install() -> None:
    """Register the decoders with warcio (idempotent)."""
    BufferedReader.DECOMPRESSORS.update(ENCODINGS)


def decodable(encoding: str | None) -> bool:
    """Whether a body with this ``Content-Encoding`` is decoded before it is parsed."""
    value = (encoding or "").strip().lower()
    return not value or value == "identity" or value in BufferedReader.get_supported_decompressors()
