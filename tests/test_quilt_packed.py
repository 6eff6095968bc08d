"""The packed field encoding (spamflow_quilt.packed): its size, which bounds the quilt stage's
temporary disk (docs/quilt.md, "Temporary disk"), and that it reads what earlier versions wrote."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from spamflow_quilt.mr_base import tagged, untagged
from spamflow_quilt.packed import pack, unpack


def test_random_hashes_take_base64_of_their_bytes():
    """64-bit hashes do not compress: the payload is 'B' + base64 of the little-endian bytes,
    4/3 of a byte each (hex, before, took 2)."""
    rng = np.random.default_rng(7)
    grams = rng.integers(0, 2**64, 300, dtype=np.uint64)
    ordinals = rng.integers(0, 2**32, 300, dtype=np.uint32)
    field = pack(grams, ordinals)
    expected = b"300:u8,u4:B" + base64.b64encode(grams.astype("<u8").tobytes() + ordinals.astype("<u4").tobytes())
    assert field == expected
    assert len(field) - len(b"300:u8,u4:B") == 4 * 3600 // 3  # 3,600 bytes of columns
    got = unpack(field)
    assert got[0].tolist() == grams.tolist() and got[1].tolist() == ordinals.tolist()


def test_repetitive_triples_are_compressed():
    """Job (c)'s triples repeat their units, sources and grams: 24 bytes a row become under 4
    (hex took 48), and read back exactly."""
    rng = np.random.default_rng(11)
    pool = rng.integers(0, 2**64, 200, dtype=np.uint64)  # a bucket's patch grams
    units = rng.integers(0, 2**64, 40, dtype=np.uint64)
    sources = rng.integers(0, 2**64, 8, dtype=np.uint64)
    rows = 20_000
    reps = np.sort(units[rng.integers(0, len(units), rows)])
    grams, source = pool[rng.integers(0, len(pool), rows)], sources[rng.integers(0, len(sources), rows)]
    field = tagged(b"T", reps, grams, source)
    assert len(field) < 4 * rows
    kind, columns = untagged(field)
    assert kind == b"T"
    assert [c.tolist() for c in columns] == [reps.tolist(), grams.tolist(), source.tolist()]


def test_hex_fields_of_earlier_versions_still_read():
    """Shingle files and job outputs written before (hex payloads) stay valid inputs."""
    old = b"2:u8,u4:010000000000000002000000000000000a00000008000000"
    assert [c.tolist() for c in unpack(old)] == [[1, 2], [10, 8]]
    assert [c.tolist() for c in unpack(b"0:u8:")] == [[]]


@pytest.mark.parametrize("field", [b"2:u8:Z!!!!", b"2:u8:Zm9vYmFy", b"2:u8:BAQAAAA", b"2:u8:0g"])
def test_unreadable_payload_is_a_clear_error(field):
    with pytest.raises(ValueError, match="unreadable payload|holds .* bytes"):
        unpack(field)
