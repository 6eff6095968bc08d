"""Writing a file so that readers see the old version or the whole new one, never a part.

The content goes to a temporary file beside the target (same filesystem), which then
replaces the target in one ``os.replace``; on an error the temporary file is removed and
the target is left as it was.  A remote target (a URL, :mod:`spamflow.storage`) is written
with one PUT, which object stores make visible whole or not at all.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path to write; on success it becomes ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: str | Path, text: str) -> None:
    from spamflow.storage import is_url, write_bytes

    if is_url(path):
        write_bytes(str(path), text.encode("utf-8"))
        return
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
