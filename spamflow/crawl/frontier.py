"""Per-host FIFO queues whose memory does not grow with the URLs they hold.

A :class:`HostQueue` (BUbiNG's visit state queue) keeps a short in-memory head, a list of
blocks spilled to one shared append-only file, and an in-memory tail that becomes a block
once full.  Order is head, blocks, tail: first in, first out.  Entries are bytes (the path
and query with depth and redirect hops), so a pending URL costs its bytes on disk and
nothing in memory unless it is in a head or tail.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from typing import BinaryIO


class SpillFile:
    """One append-only file of blocks; a block is read back once, by its owner."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh: BinaryIO = open(path, "w+b")  # noqa: SIM115 (closed by close())
        self.bytes_written = 0

    def write(self, entries: list[bytes]) -> tuple[int, int, int]:
        data = b"\n".join(entries) + b"\n"
        self._fh.seek(0, os.SEEK_END)
        offset = self._fh.tell()
        self._fh.write(data)
        self.bytes_written += len(data)
        return offset, len(data), len(entries)

    def read(self, pointer: tuple[int, int, int]) -> list[bytes]:
        offset, size, _ = pointer
        self._fh.seek(offset)
        return self._fh.read(size).split(b"\n")[:-1]

    def close(self) -> None:
        self._fh.close()
        self.path.unlink(missing_ok=True)


class HostQueue:
    """FIFO of one host's pending entries: ``head`` in memory, spilled blocks, ``tail``."""

    __slots__ = ("head", "blocks", "tail", "spill", "head_size", "block_size", "size")

    def __init__(self, spill: SpillFile | None, head_size: int = 32, block_size: int = 256) -> None:
        self.head: deque[bytes] = deque()
        self.blocks: deque[tuple[int, int, int]] = deque()
        self.tail: list[bytes] = []
        self.spill = spill
        self.head_size = head_size
        self.block_size = block_size
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def append(self, entry: bytes) -> None:
        self.size += 1
        if self.spill is None or (not self.blocks and not self.tail and len(self.head) < self.head_size):
            self.head.append(entry)
            return
        self.tail.append(entry)
        if len(self.tail) >= self.block_size:
            self.blocks.append(self.spill.write(self.tail))
            self.tail = []

    def appendleft(self, entry: bytes) -> None:
        self.size += 1
        self.head.appendleft(entry)

    def popleft(self) -> bytes:
        if not self.head:
            if self.blocks:
                assert self.spill is not None
                self.head.extend(self.spill.read(self.blocks.popleft()))
            else:
                self.head.extend(self.tail)
                self.tail = []
        self.size -= 1
        return self.head.popleft()

    def in_memory(self) -> int:
        return len(self.head) + len(self.tail)
