"""Columns of numbers as one field of a line, so that one MapReduce record carries many rows.

Hadoop streaming, mrjob's local runner and Spark all pass lines between tasks, and each
record costs some 10 µs of framework time: a record per gram made the jobs ~15x slower
than the arithmetic they do.  A field is ``<rows>:<dtype>,<dtype>...:<payload>``, the
payload encoding the columns' little-endian bytes one after another as

* ``Z`` + base64 of their zstd (level 1) frame, when that is shorter: job (c)'s triples
  repeat grams and pages across units and shrink ~12x against hex, its unit rows ~4x;
* ``B`` + base64 of the bytes themselves otherwise (random 64-bit hashes do not compress),
  1.33 bytes a byte;
* hex (no marker), 2 bytes a byte: what this module wrote before (docs/quilt.md, "Temporary
  disk"); still read, so earlier shingle files and job outputs stay valid.

All three are ASCII without tab, space, colon or newline (valid UTF-8 for Spark's
``textFile``).  Hex decodes ~2x faster than base64, but the jobs' temporary data, which every
runner writes and the local runner sorts, is most of the quilt stage's cost at scale.

>>> field = pack(np.array([1, 2], np.uint64), np.array([10, 8], np.uint32))
>>> field
b'2:u8,u4:BAQAAAAAAAAACAAAAAAAAAAoAAAAIAAAA'
>>> [column.tolist() for column in unpack(field)]
[[1, 2], [10, 8]]
>>> [column.tolist() for column in unpack(b'2:u8,u4:010000000000000002000000000000000a00000008000000')]
[[1, 2], [10, 8]]
>>> len(pack(np.zeros(1000, np.uint64))) < 40, int(unpack(pack(np.zeros(1000, np.uint64)))[0].sum())
(True, 0)
>>> [column.tolist() for column in unpack(pack(np.array([], np.uint64)))]
[[]]
"""

from __future__ import annotations

import binascii

import numpy as np
import zstandard

ZSTD_LEVEL = 1
"""zstd's fastest regular level: ~300-600 MB/s here, and as small as level 3 on triples."""

_compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL)  # one per process: contexts are reused
_decompressor = zstandard.ZstdDecompressor()


def pack(*columns: np.ndarray) -> bytes:
    """Equal-length 1-d arrays as one field."""
    rows = len(columns[0])
    if any(len(column) != rows for column in columns):
        raise ValueError(f"columns of different lengths: {[len(c) for c in columns]}")
    codes = ",".join(np.dtype(column.dtype).newbyteorder("<").str[1:] for column in columns)
    data = b"".join(np.ascontiguousarray(column, dtype=column.dtype.newbyteorder("<")).tobytes()
                    for column in columns)
    return f"{rows}:{codes}:".encode("ascii") + encode(data)


def encode(data: bytes) -> bytes:
    """A payload: ``Z`` + base64 of zstd when shorter, else ``B`` + base64; empty for no bytes."""
    if not data:
        return b""
    compressed = _compressor.compress(data)
    if len(compressed) < len(data):
        return b"Z" + binascii.b2a_base64(compressed, newline=False)
    return b"B" + binascii.b2a_base64(data, newline=False)


def decode(payload: bytes) -> bytes:
    """The bytes :func:`encode` (or the hex of earlier versions) wrote."""
    marker = payload[:1]
    if marker == b"Z":
        return _decompressor.decompress(binascii.a2b_base64(payload[1:]))
    if marker == b"B":
        return binascii.a2b_base64(payload[1:])
    return binascii.unhexlify(payload)


def unpack(field: bytes) -> list[np.ndarray]:
    """The arrays :func:`pack` wrote (read-only views of one buffer)."""
    rows_text, codes, payload = field.split(b":", 2)
    rows = int(rows_text)
    try:
        data = decode(payload)
    except (binascii.Error, zstandard.ZstdError) as error:
        raise ValueError(f"packed field of {rows} rows: unreadable payload {payload[:20]!r}...: {error}") from None
    columns, offset = [], 0
    for code in codes.decode("ascii").split(","):
        dtype = np.dtype("<" + code)
        columns.append(np.frombuffer(data, dtype=dtype, count=rows, offset=offset))
        offset += rows * dtype.itemsize
    if offset != len(data):
        raise ValueError(f"packed field holds {len(data)} bytes, its header says {offset}")
    return columns
