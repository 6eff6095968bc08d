"""Writing a file so that readers see the old version or the whole new one, never a part.

The content goes to a temporary file beside the target (same filesystem), which then
replaces the target in one ``os.replace``; on an error the temporary file is removed and
the target is left as it was.  A remote target (a URL, :mod:`spamflow.storage`) is written
with one PUT, which object stores make visible whole or not at all.
"""

from __future__ import annotations

from pathlib import Path

from spamflow.storage import Location, atomic_path

__all__ = ["atomic_path", "write_text_atomic"]


def write_text_atomic(path: str | Path, text: str) -> None:
    """``path`` (a local path or a URL: :meth:`spamflow.storage.Location.write_bytes`) holds
    ``text`` (UTF-8), old or new, never a part."""
    Location.of(path).write_bytes(text.encode("utf-8"))
