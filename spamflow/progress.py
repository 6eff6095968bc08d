"""Progress bars: one rule for every stage and command, as docs/config.md says.

The setting is ``False`` (``--no-progress``: never), ``True`` (``--progress``: always) or
``None`` (the default: only when the bar's stream, stderr, is a terminal), so logs, pipes
and captured output never fill with bar fragments.  Every tqdm bar is made here.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import IO, Any, TypeVar

from tqdm import tqdm

T = TypeVar("T")


def progress_on(setting: bool | None, stream: IO[str] | None = None) -> bool:
    """Whether to draw bars: the setting when it is given, else whether ``stream``
    (default stderr) is a terminal."""
    if setting is not None:
        return bool(setting)
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def progress_bar(iterable: Iterable[T] | None = None, *, setting: bool | None, **kwargs: Any) -> tqdm[T]:
    """A tqdm bar on stderr, drawn only if ``progress_on(setting)``; the other keyword
    arguments go to tqdm (``total``, ``desc``, ``unit``, ...)."""
    file = kwargs.pop("file", None) or sys.stderr
    return tqdm(iterable, file=file, disable=not progress_on(setting, file), **kwargs)
