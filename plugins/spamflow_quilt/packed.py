"""Columns of numbers as one field of a line, so that one MapReduce record carries many rows.

Hadoop streaming, mrjob's local runner and Spark all pass lines between tasks, and each
record costs some 10 µs of framework time: a record per gram made the jobs ~15x slower
than the arithmetic they do.  A field is ``<rows>:<dtype>,<dtype>...:<hex>``, the hex being
the columns' little-endian bytes one after another.  Hex is ASCII without tab or newline,
valid UTF-8 for Spark's ``textFile``, and ``binascii`` encodes and decodes it at ~300-500 MB/s,
where base64 decodes at ~180 MB/s and a binary-safe escaping through Latin-1 at ~80 MB/s
(measured in benchmarks/README.md); that outweighs hex's doubling of the bytes.

>>> field = pack(np.array([1, 2], np.uint64), np.array([10, 8], np.uint32))
>>> field
b'2:u8,u4:010000000000000002000000000000000a00000008000000'
>>> [column.tolist() for column in unpack(field)]
[[1, 2], [10, 8]]
>>> [column.tolist() for column in unpack(pack(np.array([], np.uint64)))]
[[]]
"""

from __future__ import annotations

import binascii

import numpy as np


def pack(*columns: np.ndarray) -> bytes:
    """Equal-length 1-d arrays as one field."""
    rows = len(columns[0])
    if any(len(column) != rows for column in columns):
        raise ValueError(f"columns of different lengths: {[len(c) for c in columns]}")
    codes = ",".join(np.dtype(column.dtype).newbyteorder("<").str[1:] for column in columns)
    data = b"".join(np.ascontiguousarray(column, dtype=column.dtype.newbyteorder("<")).tobytes()
                    for column in columns)
    return f"{rows}:{codes}:".encode("ascii") + binascii.hexlify(data)


def unpack(field: bytes) -> list[np.ndarray]:
    """The arrays :func:`pack` wrote (read-only views of one buffer)."""
    rows_text, codes, hex_text = field.split(b":", 2)
    rows = int(rows_text)
    data = binascii.unhexlify(hex_text)
    columns, offset = [], 0
    for code in codes.decode("ascii").split(","):
        dtype = np.dtype("<" + code)
        columns.append(np.frombuffer(data, dtype=dtype, count=rows, offset=offset))
        offset += rows * dtype.itemsize
    if offset != len(data):
        raise ValueError(f"packed field holds {len(data)} bytes, its header says {offset}")
    return columns
