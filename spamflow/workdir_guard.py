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
import os
from pathlib import Path

from spamflow import storage
from spamflow.errors import ConfigError

MARKER = ".spamflow-workdir"
"""In a workdir spamflow made or took over: says so (its text is a line for a curious reader)."""
MARKER_TEXT = b"spamflow made this folder its workdir: stages/, run.json and report/ are written here\n"
OWN_NAMES = frozenset({MARKER, "run.json", "stages"})
"""Names whose presence says an earlier spamflow run wrote the folder (with run.json checked)."""
_PROBE_PREFIX = ".spamflow-write-check-"  # storage.check_workdir's probe, if a crash left one


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


def claim_workdir(location: str | Path, *, force: bool = False, where: str = "<config>") -> None:
    """Make sure ``location`` (a local folder or a remote workdir's URL) may be written by a run,
    and mark it as spamflow's; raise :class:`ConfigError` (exit 2) naming it and saying why if
    it is a non-empty folder spamflow did not make, unless ``force``."""
    if storage.is_url(location):
        _claim_remote(str(location), force=force, where=where)
    else:
        _claim_local(storage.local_path(location), force=force, where=where)


def _claim_local(folder: Path, *, force: bool, where: str) -> None:
    marker = folder / MARKER
    if marker.is_file():
        return
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{where}: workdir: {folder} is a file, not a folder")
    check_writable(folder, where=where)
    names = [p.name for p in folder.iterdir()] if folder.is_dir() else []
    if names and not force and not _local_is_own(folder, names):
        raise _refusal(where, str(folder), names)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        marker.write_bytes(MARKER_TEXT)
    except OSError as exc:
        raise ConfigError(f"{where}: workdir: cannot write {marker}: {exc.strerror or exc}") from None


def check_writable(location: str | Path, *, where: str = "<config>") -> None:
    """Raise :class:`ConfigError` naming the folder and the reason if a run could not write the
    local workdir ``location``: it, or the nearest folder above it that exists (where it would be
    made), must take a new file.  Proved by creating and removing a probe file, since
    permission bits do not tell (root, read-only mounts, immutable folders, ACLs).  A remote
    workdir is checked when the config is loaded (:func:`spamflow.storage.check_workdir`)."""
    if storage.is_url(location):
        return
    folder = Path(location)
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        what = "is a file, not a folder" if existing == folder else f"cannot be made: {existing} is a file"
        raise ConfigError(f"{where}: workdir: {folder} {what}")
    probe = existing / f"{_PROBE_PREFIX}{os.getpid()}"
    try:
        probe.write_bytes(b"")
    except OSError as exc:
        made = "" if existing == folder else f" (it would be made in {existing})"
        raise ConfigError(f"{where}: workdir: {folder} is not writable{made}: cannot create a file in "
                          f"{existing}: {exc.strerror or exc}; give a workdir you can write") from None
    probe.unlink(missing_ok=True)


def _local_is_own(folder: Path, names: list[str]) -> bool:
    if (folder / "stages").is_dir():
        return True
    if "run.json" in names:
        try:
            return _is_own_manifest((folder / "run.json").read_bytes())
        except OSError:
            return False
    return False


def _claim_remote(url: str, *, force: bool, where: str) -> None:
    marker = storage.join(url, MARKER)
    try:
        fs = storage.filesystem(url)
        try:
            listed = fs.ls(url, detail=False)
        except FileNotFoundError:
            listed = []
    except Exception as exc:  # noqa: BLE001 - an unreachable store is said as such, naming the URL
        raise ConfigError(f"{where}: workdir: {url}: cannot list it: {type(exc).__name__}: {exc}") from None
    names = [str(p).rstrip("/").rsplit("/", 1)[-1] for p in listed]
    names = [n for n in names if n and not n.startswith(_PROBE_PREFIX)]
    if MARKER in names:
        return
    own = "stages" in names or ("run.json" in names
                                and _is_own_manifest(storage.read_bytes_if_any(storage.join(url, "run.json"))))
    if names and not force and not own:
        raise _refusal(where, url, names)
    storage.write_bytes(marker, MARKER_TEXT)


FORCE_HELP = ("write into the workdir even if it is a non-empty folder spamflow did not create (as the config's "
              "workdir_force: true); without it such a folder is refused, so a run never overwrites your own files")


def add_force_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--force``: the config's ``workdir_force: true`` for this command."""
    p.add_argument("--force", action="store_true", default=None, help=FORCE_HELP)
