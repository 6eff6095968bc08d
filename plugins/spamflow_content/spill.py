"""A pass's per-batch results on local disk, read back by the next pass batch by batch.

The in-process stage reads the pages twice: the first pass finds the corpus's popular words
and candidate terms, the second needs them.  Everything the second pass needs of a batch
that does not depend on them (its stemmed (document, term) counts, its encoded words, the
measures that need no corpus list) is written here by the first and read back in the same
order, so the second neither reads, encodes nor stems the pages again.  Memory stays one
batch; the disk holds a few int32 a word occurrence (temporary, removed with the folder).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pyarrow as pa


class Spill:
    """Tables of a few named kinds, one of each kind a batch: each kind its own Arrow IPC
    stream file (``<kind>.arrow``) under ``folder``, uncompressed."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._writers: dict[str, pa.ipc.RecordBatchStreamWriter] = {}
        self._sinks: dict[str, pa.OSFile] = {}
        self._kinds: list[str] = []
        self.batches = 0

    def write(self, **tables: pa.Table) -> None:
        """One batch: a table of each kind (the same kinds every batch)."""
        if self.batches == 0:
            self._kinds = sorted(tables)
        if sorted(tables) != self._kinds:
            raise ValueError(f"Spill.write: kinds {sorted(tables)}, expected {self._kinds}")
        for kind, table in tables.items():
            if kind not in self._writers:
                self._sinks[kind] = pa.OSFile(str(self.folder / f"{kind}.arrow"), "wb")
                self._writers[kind] = pa.ipc.new_stream(self._sinks[kind], table.schema)
            # one record batch per table, an empty one included, so every kind has one per batch
            batch = pa.RecordBatch.from_arrays([c.combine_chunks() for c in table.columns], schema=table.schema)
            self._writers[kind].write_batch(batch)
        self.batches += 1

    def close(self) -> None:
        """Finish writing (``read`` does it first)."""
        for kind, writer in self._writers.items():
            writer.close()
            self._sinks[kind].close()
        self._writers.clear()
        self._sinks.clear()

    def read(self) -> Iterator[dict[str, pa.RecordBatch]]:
        """The batches in the order written, each as its tables by kind."""
        self.close()
        with ExitStack() as stack:
            readers = {kind: pa.ipc.open_stream(stack.enter_context(pa.OSFile(str(self.folder / f"{kind}.arrow"))))
                       for kind in self._kinds}
            for _ in range(self.batches):
                yield {kind: reader.read_next_batch() for kind, reader in readers.items()}
