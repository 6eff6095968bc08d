"""Where a run's outputs live: a local directory, or an object store / HDFS URL (``s3://``,
``gs://``, ``hdfs://``, anything fsspec knows).

A local workdir is used as it always was (plain paths, ``os.replace``); this module only
adds what a remote one needs: test it before any stage runs, put and get single objects
(a PUT is atomic: readers see the old object or the new one), and copy a stage directory
up or down with its marker file (``stage.json``) moved last, so that the marker's presence
means the rest is there.  Stages never see a URL: they run in, and read from, a local cache
of the workdir (:func:`mirror_dir`).  Their MapReduce jobs may: a cluster's workers cannot
open the driver's cache, so a stage hands them an upstream file's published URL
(:func:`published_url`), and the tasks read and write parts with the helpers at the end of
this module (standard library and fsspec only, as job code must be).

fsspec is the one layer because remote inputs already use it (:mod:`spamflow.inputs`) and it
speaks S3 (s3fs), GCS, HDFS and local files alike; Luigi's own targets cover fewer stores
and would be a second client to configure.  ``file://`` URLs are plain local paths.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, BinaryIO, cast

from spamflow.errors import SpamflowError

LISTING = "stage-files.json"
"""Written beside ``stage.json`` in a remote stage directory, just before it: every file with its
size and every empty directory, so a download takes exactly what was published (not leftovers of
an upload that crashed) and checks what it got."""
MIRROR_MARKER = "workdir-url.txt"
"""In a remote workdir's local cache: the URL it mirrors (so a path into the cache leads back)."""


class StorageError(SpamflowError):
    """A remote workdir could not be reached, read or written; the message names the URL."""


def is_url(location: str | Path) -> bool:
    """A remote location (``s3://b/p``); a local path or a ``file://`` URL is not."""
    text = str(location)
    return "://" in text and not text.startswith("file://")


def local_path(location: str | Path) -> Path:
    """A local location as a path (``file:///x`` is ``/x``)."""
    text = str(location)
    return Path(text[len("file://"):]) if text.startswith("file://") else Path(location)


def join(location: str, *parts: str) -> str:
    """``location/part/...`` for a URL or a local path alike."""
    return "/".join([location.rstrip("/"), *(p.strip("/") for p in parts)])


_FILESYSTEMS: dict[tuple[str, int], Any] = {}


def filesystem(url: str) -> Any:
    """The fsspec filesystem of ``url``'s scheme, one per process and environment (a new
    endpoint or key in the environment gets a new client); listings are never cached, so
    a marker written or deleted by another machine is seen at once."""
    import fsspec

    protocol = url.split("://", 1)[0]
    key = (protocol, hash(frozenset(os.environ.items())))
    if key not in _FILESYSTEMS:
        try:
            fs = fsspec.filesystem(protocol, skip_instance_cache=True, use_listings_cache=False)
        except TypeError:  # a filesystem without fsspec's listings cache options
            fs = fsspec.filesystem(protocol, skip_instance_cache=True)
        _FILESYSTEMS[key] = fs
    return _FILESYSTEMS[key]


def _error(url: str, what: str, exc: BaseException) -> StorageError:
    reason = str(exc) or type(exc).__name__
    if isinstance(exc, PermissionError):
        reason = f"permission denied ({reason})"
    elif type(exc).__name__ == "NoCredentialsError":
        reason = f"no credentials ({reason}); set AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or a profile"
    return StorageError(f"{url}: cannot {what}: {type(exc).__name__}: {reason}")


def exists(url: str) -> bool:
    try:
        return bool(filesystem(url).exists(url))
    except Exception as exc:  # noqa: BLE001 - every client failure is the same unreachable store
        raise _error(url, "check whether it exists", exc) from exc


def read_bytes(url: str) -> bytes:
    try:
        return bytes(filesystem(url).cat_file(url))
    except Exception as exc:  # noqa: BLE001
        raise _error(url, "read it", exc) from exc


def read_bytes_if_any(url: str) -> bytes | None:
    """The object's bytes, None if there is none (another failure is an error)."""
    try:
        return bytes(filesystem(url).cat_file(url))
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001
        raise _error(url, "read it", exc) from exc


def write_bytes(url: str, data: bytes) -> None:
    """One PUT: readers see the old object or the whole new one."""
    try:
        filesystem(url).pipe_file(url, data)
    except Exception as exc:  # noqa: BLE001
        raise _error(url, "write it", exc) from exc


def remove(url: str) -> None:
    try:
        filesystem(url).rm_file(url)
    except FileNotFoundError:
        pass
    except Exception as exc:  # noqa: BLE001
        raise _error(url, "delete it", exc) from exc


def check_workdir(url: str) -> None:
    """Fail now, naming ``url``, if the workdir's store cannot be reached, has no such bucket,
    has no credentials for us or will not let us write: before any stage runs, not after the
    first one finished.  Writes and deletes one small object, which proves all of it at once."""
    probe = join(url, f".spamflow-write-check-{os.getpid()}")
    try:
        filesystem(url).pipe_file(probe, b"spamflow checks it may write here\n")
    except FileNotFoundError:
        root = url.split("://", 1)[1].split("/", 1)[0]
        raise StorageError(f"{url}: cannot use it as workdir: bucket (or root) {root!r} does not exist; "
                           "create it first") from None
    except Exception as exc:  # noqa: BLE001 - unreachable, no credentials, no permission: said by _error
        raise _error(url, "use it as workdir (writing a test object)", exc) from exc
    remove(probe)


def mirror_dir(url: str, cache_dir: Path) -> Path:
    """The local directory that caches the remote workdir ``url``: ``<cache_dir>/workdirs/<name>``,
    a readable name with a hash of the whole URL (two URLs never share one)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", url.split("://", 1)[-1]).strip("_")[:80]
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:10]
    mirror = cache_dir / "workdirs" / f"{readable}-{digest}"
    mirror.mkdir(parents=True, exist_ok=True)
    marker = mirror / MIRROR_MARKER
    if not marker.is_file():
        marker.write_text(url + "\n", encoding="utf-8")
    return mirror


def mirrored_url(local: str | Path) -> str | None:
    """The URL of the remote workdir whose local cache is ``local``, else None (a plain local
    workdir): how ``run.json`` of a command given ``config.workdir`` reaches the store."""
    marker = Path(local) / MIRROR_MARKER
    if not marker.is_file():
        return None
    return marker.read_text(encoding="utf-8").strip() or None


def published_url(local: str | Path) -> str | None:
    """The URL a file or folder in a remote workdir's local cache is (or is to be) published to:
    the URL of the nearest enclosing cache (:data:`MIRROR_MARKER`) joined with the path below
    it; None for a path in no cache (a local workdir).  How a stage hands cluster workers the
    upstream stage's files, uploaded there before it started, instead of its local copies."""
    path = Path(os.path.abspath(local))
    for folder in (path, *path.parents):
        url = mirrored_url(folder)
        if url is not None:
            return join(url, path.relative_to(folder).as_posix()) if folder != path else url
    return None


def task_location(file: str | Path) -> str:
    """How a MapReduce job's input line names a file its tasks read: a URL (any scheme) as it
    is, a file in a remote workdir's cache as its published URL (workers on any machine reach
    it), any other file as its absolute path."""
    if "://" in str(file):
        return str(file)
    return published_url(file) or str(Path(file).resolve())


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/spamflow``, else ``~/.cache/spamflow``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "spamflow"


def upload_tree(local: Path, url: str, *, last: str, listing: bool = True) -> int:
    """Copy the directory ``local`` to ``url``: every file, then the listing (:data:`LISTING`,
    unless ``listing`` is false), then ``last``.  Files already there are overwritten, none is
    deleted (a concurrent run of the same stage writes the same names).  Returns the bytes sent."""
    fs = filesystem(url)
    files = {p.relative_to(local).as_posix(): p.stat().st_size for p in sorted(local.rglob("*")) if p.is_file()}
    empty = [p.relative_to(local).as_posix() for p in sorted(local.rglob("*")) if p.is_dir() and not any(p.iterdir())]
    if last not in files:
        raise StorageError(f"{local}: no {last} to publish it with")
    order = [rel for rel in files if rel != last]
    try:
        for rel in order:
            fs.put_file(str(local / rel), join(url, rel))
    except Exception as exc:  # noqa: BLE001
        raise _error(url, "upload the stage's files to it", exc) from exc
    if listing:
        contents = {"files": {rel: files[rel] for rel in order}, "empty_dirs": empty}
        write_bytes(join(url, LISTING), json.dumps(contents, indent=1).encode("utf-8"))
    write_bytes(join(url, last), (local / last).read_bytes())
    return sum(files.values())


def download_tree(url: str, local: Path, *, last: str) -> None:
    """Copy the published directory ``url`` into a new local directory ``local`` (which must
    not exist): the files of its listing, each checked for size, then ``last``; a listing-less
    directory (copied there by another tool) is listed instead."""
    fs = filesystem(url)
    try:
        listing = json.loads(read_bytes(join(url, LISTING)))
    except StorageError:
        listing = None
    if listing is None:
        try:
            base = fs._strip_protocol(url).rstrip("/")
            found = {path[len(base) + 1:]: int(info.get("size") or 0)
                     for path, info in fs.find(url, detail=True).items()}
        except Exception as exc:  # noqa: BLE001
            raise _error(url, "list it", exc) from exc
        listing = {"files": {rel: size for rel, size in found.items() if rel not in (last, LISTING)},
                   "empty_dirs": []}
    local.mkdir(parents=True)
    try:
        for rel, size in sorted(listing["files"].items()):
            target = local / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            fs.get_file(join(url, rel), str(target))
            if target.stat().st_size != size:
                raise StorageError(f"{join(url, rel)}: got {target.stat().st_size} bytes, the listing says {size}")
        for rel in listing["empty_dirs"]:
            (local / rel).mkdir(parents=True, exist_ok=True)
    except StorageError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise _error(url, "download the stage's files from it", exc) from exc
    (local / last).write_bytes(read_bytes(join(url, last)))


def replace_dir(new: Path, final: Path) -> None:
    """Make ``new`` the directory ``final``, replacing what is there (a rename; the old one is
    moved aside first and removed after, since a rename cannot replace a non-empty directory)."""
    aside = final.parent / f".{final.name}.old-{os.getpid()}"
    if final.exists():
        os.replace(final, aside)
    os.replace(new, final)
    shutil.rmtree(aside, ignore_errors=True)


# --- used by MapReduce tasks on any machine: standard library and fsspec only -------------

def open_input(location: str) -> BinaryIO:
    """``location`` open for random-access reading (a Parquet part of the page table): a local
    path as a plain file, a URL (``s3://``, ``gs://``, ``hdfs://``) through the same fsspec
    client that wrote the workdir, with the credentials and endpoint of the task's environment
    (``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``, ...).  Errors name the location."""
    if not is_url(location):
        return open(local_path(location), "rb")
    try:
        return cast(BinaryIO, filesystem(location).open(location, "rb"))
    except Exception as exc:  # noqa: BLE001 - every client failure is the same unreadable part
        raise _error(location, "open it for reading", exc) from exc


def put_file(local: Path, url: str) -> None:
    """Upload one local file to ``url`` (a part a MapReduce task wrote in its scratch space)."""
    try:
        filesystem(url).put_file(str(local), url)
    except Exception as exc:  # noqa: BLE001
        raise _error(url, f"upload {local.name} to it", exc) from exc


def download_folder(url: str, local: Path) -> list[str]:
    """Every object directly under ``url`` into the existing folder ``local`` (same names);
    returns the names, sorted.  Nothing there is an empty list."""
    fs = filesystem(url)
    try:
        names = sorted(path.rstrip("/").rsplit("/", 1)[-1] for path in fs.ls(url, detail=False))
    except FileNotFoundError:
        return []
    except Exception as exc:  # noqa: BLE001
        raise _error(url, "list it", exc) from exc
    try:
        for name in names:
            fs.get_file(join(url, name), str(local / name))
    except Exception as exc:  # noqa: BLE001
        raise _error(url, "download its files", exc) from exc
    return names


def remove_tree(url: str) -> None:
    """Delete ``url`` and everything under it; nothing there is fine."""
    try:
        filesystem(url).rm(url, recursive=True)
    except FileNotFoundError:
        pass
    except Exception as exc:  # noqa: BLE001
        raise _error(url, "delete it", exc) from exc
