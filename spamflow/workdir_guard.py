"""A run writes only into a workdir that is spamflow's: one it made (marked by
:data:`MARKER`), an empty or new folder (it then marks it), or one an earlier spamflow
version wrote (its own ``run.json`` or a ``stages/`` folder; it is marked now).  Any other
non-empty folder is the user's own: a run there would overwrite files such as ``run.json`` or
``report/index.html`` without a word, so it is refused unless the user says so (``--force``
or ``workdir_force: true``).

A remote workdir (``s3://bucket/prefix``) is checked the same way on the store, by one
listing of the prefix; the marker is an object there.  Its local cache is spamflow's own
(:func:`spamflow.storage.mirror_dir`) and is not checked.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from spamflow.errors import ConfigError
from spamflow.storage import WRITE_PROBE_PREFIX, Location, StorageError

MARKER = ".spamflow-workdir"
"""In a workdir spamflow made or took over: says so (its text is a line for a curious reader)."""
MARKER_TEXT = b"spamflow made this folder its workdir: stages/, run.json and report/ are written here\n"
OWN_NAMES = frozenset({MARKER, "run.json", "stages"})
"""Names whose presence says an earlier spamflow run wrote the folder (with run.json checked)."""


def _is_own_manifest(data: bytes | None) -> bool:
    """Is this spamflow's run.json (a JSON object with a ``stages`` mapping)?"""
    if data is None:
        return False
    try:
        record = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(record, dict) and isinstance(record.get("stages"), dict)


def _refusal(where: str, location: str, others: list[str]) -> ConfigError:
    shown = ", ".join(sorted(others)[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    return ConfigError(
        f"{where}: workdir: {location} is a non-empty folder spamflow did not create (it holds {shown}); a run "
        "writes stages/, run.json and report/ there and would overwrite files of those names. Give a new or "
        f"empty folder, or say it may be used: `--force` on the command line (run, demo, crawl, train, score, "
        "evaluate, quilt-sweep, hss similar, report), or `workdir_force: true` in the config "
        f"(spamflow then marks it with {MARKER})")


def claim_workdir(location: str | Path | Location, *, force: bool = False, where: str = "<config>") -> None:
    """Make sure ``location`` (a local folder or a remote workdir's URL) may be written by a run,
    and mark it as spamflow's; raise :class:`ConfigError` (exit 2) naming it and saying why if
    it is a non-empty folder spamflow did not make, unless ``force``.  A remote one is looked
    at with one listing of its prefix; its marker is an object there."""
    folder = Location.of(location)
    check_writable(folder, where=where)
    try:
        names = [n for n in folder.names() if not n.startswith(WRITE_PROBE_PREFIX)]
    except NotADirectoryError:
        raise ConfigError(f"{where}: workdir: {folder} is a file, not a folder") from None
    except StorageError as exc:  # an unreachable store is said as such, naming the URL
        raise ConfigError(f"{where}: workdir: {exc}") from None
    if MARKER in names:
        return
    if names and not force and not _is_own(folder, names):
        raise _refusal(where, str(folder), names)
    marker = folder.join(MARKER)
    try:
        folder.mkdir()
        marker.write_bytes(MARKER_TEXT)
    except OSError as exc:
        raise ConfigError(f"{where}: workdir: cannot write {marker}: {exc.strerror or exc}") from None


def check_writable(location: str | Path | Location, *, where: str = "<config>") -> None:
    """Raise :class:`ConfigError` naming the folder and the reason if a run could not write the
    workdir ``location`` (:meth:`spamflow.storage.Location.check_writable`: a local one, or
    the nearest folder above it that exists, must take a new file; a remote one was checked
    when the config was loaded)."""
    try:
        Location.of(location).check_writable()
    except StorageError as exc:
        raise ConfigError(f"{where}: workdir: {exc}") from None


def _is_own(folder: Location, names: list[str]) -> bool:
    """Did an earlier spamflow run write ``folder`` (its ``stages/`` folder, or its run.json)?"""
    if "stages" in names and folder.join("stages").is_dir():
        return True
    if "run.json" in names:
        try:
            return _is_own_manifest(folder.join("run.json").read_bytes_if_any())
        except OSError:
            return False
    return False


FORCE_HELP = ("write into the workdir even if it is a non-empty folder spamflow did not create (as the config's "
              "workdir_force: true); without it such a folder is refused, so a run never overwrites your own files")


def add_force_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--force``: the config's ``workdir_force: true`` for this command."""
    p.add_argument("--force", action="store_true", default=None, help=FORCE_HELP)
