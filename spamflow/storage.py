"""Where a run's files live: a local directory, or an object store / HDFS URL (``s3://``,
``gs://``, ``hdfs://``, anything fsspec knows), and where its inputs are (also ``http(s)://``).

This module is the one place that knows a local path from a URL (a test reads every other
module for it): :class:`Location` is a filesystem and a path inside it, built once where a
config value or a stage directory enters, and the rest of spamflow joins, opens, lists,
publishes and identifies it without asking which kind it is.

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

import glob
import hashlib
import json
import os
import re
import shutil
import tempfile
import uuid
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
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


class RemoteInputError(OSError):
    """A remote input could not be listed or read; the message names the URL."""


def is_url(location: str | Path) -> bool:
    """A remote location (``s3://b/p``); a local path or a ``file://`` URL is not."""
    text = str(location)
    return "://" in text and not text.startswith("file://")


WRITE_PROBE_PREFIX = ".spamflow-write-check-"
"""The name of the file or object a workdir check writes and removes (one a crash left is
not the user's)."""


def needs_hadoop_command(location: str) -> bool:
    """Is ``location`` reached only through the ``hadoop`` command (an ``hdfs://`` URL, as
    mrjob's Hadoop filesystem reads it)?"""
    return str(location).startswith("hdfs://")


def local_path(location: str | Path) -> Path:
    """A local location as a path (``file:///x`` is ``/x``)."""
    text = str(location)
    return Path(text[len("file://"):]) if text.startswith("file://") else Path(location)


def join(location: str, *parts: str) -> str:
    """``location/part/...`` for a URL or a local path alike."""
    return "/".join([location.rstrip("/"), *(p.strip("/") for p in parts)])


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary local path to write; on success it becomes ``path`` (one ``os.replace``
    from beside it, same filesystem); on an error it is removed and ``path`` left as it was.
    (:mod:`spamflow.atomic` is its public home.)"""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def url_under(base_url: str | None, line: str) -> str | None:
    """``line`` of a paths file as a URL: a URL as it is, a relative path joined to
    ``base_url``; None for a relative path and no base."""
    if is_url(line):
        return line
    return None if base_url is None else base_url.rstrip("/") + "/" + line.lstrip("/")


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
    probe = join(url, f"{WRITE_PROBE_PREFIX}{os.getpid()}")
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


# --- the seam: a Location is a filesystem and a path inside it ---------------------------

class Location:
    """A file or folder spamflow reads or writes: a local path, or a URL of any store fsspec
    knows (``s3://``, ``gs://``, ``hdfs://``, ``http(s)://``).  Built once where a config value
    or a stage directory enters (:meth:`of`); the code below joins, opens, lists, publishes
    and identifies it without asking which kind it is.  Only this class (and this module)
    knows the difference: a local location keeps plain paths and ``os`` calls (its fast
    path), a remote one goes through fsspec with errors that name the URL.

    The same idea as fsspec's ``url_to_fs`` (a URL to a filesystem and a path) and datatrove's
    ``DataFolder`` (a folder object that carries its filesystem), kept to what spamflow does
    with files.  Its text (:meth:`__str__`) is what run.json and ``stage.json`` record."""

    __slots__ = ("_remote", "_text")

    def __init__(self, text: str, *, _remote: bool) -> None:
        self._text = text
        self._remote = _remote

    @classmethod
    def of(cls, value: str | Path | Location, base: Path | None = None) -> Location:
        """``value`` as a location: a URL as written (``file://`` URLs are local paths), a local
        path as given or, when relative and ``base`` is given, under ``base``."""
        if isinstance(value, Location):
            return value
        if is_url(value):
            return cls(str(value), _remote=True)
        path = local_path(value)
        if base is not None and not path.is_absolute():
            path = base / path
        return cls(str(path), _remote=False)

    # -- naming ---------------------------------------------------------------------------
    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Location({self._text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Location) and other._text == self._text

    def __hash__(self) -> int:
        return hash(self._text)

    @property
    def name(self) -> str:
        return self._text.rstrip("/").rsplit("/", 1)[-1]

    @property
    def parent(self) -> Location:
        if self._remote:
            return Location(self._text.rstrip("/").rsplit("/", 1)[0], _remote=True)
        return Location(str(Path(self._text).parent), _remote=False)

    def join(self, *parts: str) -> Location:
        """``self/part/...``: a path joined as ``pathlib`` joins it, a URL with ``/``."""
        if self._remote:
            return Location(join(self._text, *parts), _remote=True)
        return Location(str(Path(self._text, *parts)), _remote=False)

    def resolved(self) -> Location:
        """The absolute form (symlinks resolved) of a local path; a URL as it is."""
        return self if self._remote else Location(str(Path(self._text).resolve()), _remote=False)

    def native(self) -> str | Path:
        """As the older ``str | Path`` APIs return it: a ``Path`` for a local location, the URL
        text for a remote one."""
        return self._text if self._remote else Path(self._text)

    def on_this_machine(self) -> Path | None:
        """The file or folder itself when it is on this machine (reading it costs no
        request), else None."""
        return None if self._remote else Path(self._text)

    # -- reading and writing --------------------------------------------------------------
    def exists(self) -> bool:
        return exists(self._text) if self._remote else Path(self._text).exists()

    def is_dir(self) -> bool:
        if not self._remote:
            return Path(self._text).is_dir()
        try:
            return bool(filesystem(self._text).isdir(self._text))
        except Exception as exc:  # noqa: BLE001 - every client failure is the same unreachable store
            raise _error(self._text, "check whether it is a folder", exc) from exc

    def read_bytes(self) -> bytes:
        """The file's bytes: ``FileNotFoundError`` (local) or :class:`StorageError` (remote)."""
        return read_bytes(self._text) if self._remote else Path(self._text).read_bytes()

    def read_bytes_if_any(self) -> bytes | None:
        """The file's bytes, None if there is no such file."""
        if self._remote:
            return read_bytes_if_any(self._text)
        try:
            return Path(self._text).read_bytes()
        except FileNotFoundError:
            return None

    def write_bytes(self, data: bytes) -> None:
        """Replace the file whole, atomically: readers see the old one or all of the new one
        (a rename beside it locally, one PUT on an object store)."""
        if self._remote:
            write_bytes(self._text, data)
            return
        with atomic_path(self._text) as tmp:
            tmp.write_bytes(data)

    def names(self) -> list[str]:
        """The names directly inside this folder; none if it does not exist.  A local file is
        ``NotADirectoryError``; a store that cannot be listed, :class:`StorageError`."""
        if not self._remote:
            folder = Path(self._text)
            if folder.exists() and not folder.is_dir():
                raise NotADirectoryError(self._text)
            return [p.name for p in folder.iterdir()] if folder.is_dir() else []
        try:
            listed = filesystem(self._text).ls(self._text, detail=False)
        except FileNotFoundError:
            return []
        except Exception as exc:  # noqa: BLE001
            raise _error(self._text, "list it", exc) from exc
        return [n for n in (str(p).rstrip("/").rsplit("/", 1)[-1] for p in listed) if n]

    def mkdir(self) -> None:
        """Make the folder (an object store has no folders: nothing to do)."""
        if not self._remote:
            Path(self._text).mkdir(parents=True, exist_ok=True)

    def open(self) -> BinaryIO:
        """Open for (random-access) reading: :func:`open_input`."""
        return open_input(self._text)

    @contextmanager
    def writing(self) -> Iterator[Path]:
        """A local path to write this file at: the file itself, or for a remote location a
        scratch file uploaded whole when the block ends (if it was written), since an object
        store has no appends."""
        if not self._remote:
            yield Path(self._text)
            return
        with tempfile.TemporaryDirectory(prefix="spamflow-part-") as scratch:
            local = Path(scratch) / self.name
            yield local
            if local.exists():
                put_file(local, self._text)

    # -- input files --------------------------------------------------------------------
    def files(self) -> list[Location]:
        """The files this input names, sorted: an existing file is itself (even named like a
        glob: ``crawl[1].warc.gz``), else the files its glob pattern matches; a URL names
        itself (the store is asked about it when the run is planned)."""
        if self._remote:
            return [self]
        if Path(self._text).is_file():
            return [self]
        return [Location(str(p), _remote=False)
                for p in sorted(Path(p) for p in glob.glob(self._text, recursive=True) if Path(p).is_file())]

    def is_folder(self) -> bool:
        """A folder of files: a local directory, or a prefix of a store that lists (``s3://``,
        ``gs://``, ``hdfs://``, ...).  An ``http(s)://`` URL is a file: a web server's index
        page is no listing to trust (and asking would download a file to find out)."""
        if not self._remote:
            return Path(self._text).is_dir()
        if self._text.split("://", 1)[0] in ("http", "https"):
            return False
        try:
            return bool(_input_filesystem(self._text).isdir(self._text))
        except Exception as exc:  # noqa: BLE001
            raise _input_error(self._text, exc) from exc

    def find(self) -> list[Location]:
        """Every file under this folder, at any depth, sorted; names starting with ``.`` (and
        what is under them) are left out, as hidden."""
        if not self._remote:
            root = Path(self._text)
            found = [p for p in root.rglob("*")
                     if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)]
            return [Location(str(p), _remote=False) for p in sorted(found)]
        fs = _input_filesystem(self._text)
        try:
            paths = fs.find(self._text)
        except Exception as exc:  # noqa: BLE001
            raise _input_error(self._text, exc) from exc
        base = fs._strip_protocol(self._text).rstrip("/")
        urls = [join(self._text, str(p)[len(base) + 1:]) for p in sorted(paths)
                if str(p).startswith(base + "/") and not any(part.startswith(".")
                                                              for part in str(p)[len(base) + 1:].split("/"))]
        return [Location(url, _remote=True) for url in urls]

    def head_bytes(self, nbytes: int) -> bytes:
        """The first ``nbytes`` of the file (fewer if it is shorter): one range request for a
        remote object.  :class:`RemoteInputError` names it if it cannot be read."""
        try:
            if not self._remote:
                with open(self._text, "rb") as fh:
                    return fh.read(nbytes)
            with _input_filesystem(self._text).open(self._text, "rb", block_size=nbytes) as fh:
                return bytes(fh.read(nbytes))
        except Exception as exc:  # noqa: BLE001
            raise _input_error(self._text, exc) from exc

    def input_identity(self) -> dict[str, Any]:
        """What ingest's parameters record of an input file, so that a changed file makes a new
        ingest: its path with size and mtime; for a remote object its URL, ``mtime_ns`` 0 and
        what the store says identifies it (:func:`remote_identity`).  Many at once:
        :func:`input_identities`."""
        return input_identities([self])[0]

    @contextmanager
    def local_copy(self, spool_dir: Path) -> Iterator[Path]:
        """A local path to read this file from: itself if local, else a spool file in
        ``spool_dir`` holding the downloaded object, deleted on exit (the WARC readers need a
        seekable local file)."""
        if not self._remote:
            yield Path(self._text)
            return
        spool_dir.mkdir(parents=True, exist_ok=True)
        spool = spool_dir / f"{zlib.crc32(self._text.encode()):08x}-{uuid.uuid4().hex[:12]}-{self.name or 'object'}"
        try:
            try:
                _input_filesystem(self._text).get_file(self._text, str(spool))  # one plain GET, no range requests
            except Exception as exc:  # noqa: BLE001
                raise _input_error(self._text, exc) from exc
            yield spool
        finally:
            spool.unlink(missing_ok=True)

    @contextmanager
    def head_copy(self, spool_dir: Path, nbytes: int) -> Iterator[tuple[Path, bool]]:
        """A local file holding the first ``nbytes`` of this file, and whether that is all of
        it (a local file is itself, whole), for looking at a remote file's first records
        without downloading all of it; deleted on exit."""
        if not self._remote:
            yield Path(self._text), True
            return
        spool_dir.mkdir(parents=True, exist_ok=True)
        spool = spool_dir / f"{zlib.crc32(self._text.encode()):08x}-{uuid.uuid4().hex[:12]}-head"
        try:
            try:
                with _input_filesystem(self._text).open(self._text, "rb", block_size=nbytes) as fh:
                    data = fh.read(nbytes)
            except Exception as exc:  # noqa: BLE001
                raise _input_error(self._text, exc) from exc
            spool.write_bytes(data)
            yield spool, len(data) < nbytes
        finally:
            spool.unlink(missing_ok=True)

    def read_input_bytes(self) -> bytes:
        """The whole input file (a paths file); :class:`RemoteInputError` names it if it cannot
        be read."""
        try:
            if self._remote:
                return bytes(_input_filesystem(self._text).cat_file(self._text))
            return Path(self._text).read_bytes()
        except Exception as exc:  # noqa: BLE001
            raise _input_error(self._text, exc) from exc

    # -- workdirs and stage directories --------------------------------------------------
    def check_workdir(self) -> None:
        """Fail now, naming the URL, if this remote workdir cannot be written
        (:func:`check_workdir`); a local folder is checked when a command claims it
        (:mod:`spamflow.workdir_guard`)."""
        if self._remote:
            check_workdir(self._text)

    def check_writable(self) -> None:
        """Raise :class:`StorageError` naming the folder and the reason if a run could not
        write this local workdir: it, or the nearest folder above it that exists (where it
        would be made), must take a new file.  Proved by creating and removing a probe file,
        since permission bits do not tell (root, read-only mounts, immutable folders, ACLs).
        A remote workdir is checked when the config is loaded (:meth:`check_workdir`)."""
        if self._remote:
            return
        folder = Path(self._text)
        existing = folder
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            what = "is a file, not a folder" if existing == folder else f"cannot be made: {existing} is a file"
            raise StorageError(f"{folder} {what}")
        probe = existing / f"{WRITE_PROBE_PREFIX}{os.getpid()}"
        try:
            probe.write_bytes(b"")
        except OSError as exc:
            made = "" if existing == folder else f" (it would be made in {existing})"
            raise StorageError(f"{folder} is not writable{made}: cannot create a file in {existing}: "
                               f"{exc.strerror or exc}; give a workdir you can write") from None
        probe.unlink(missing_ok=True)

    def working_dir(self, cache_dir: Path) -> Path:
        """The local folder stages run in and read from: a local workdir itself, a remote
        one's cache under ``cache_dir`` (:func:`mirror_dir`)."""
        return mirror_dir(self._text, cache_dir) if self._remote else Path(self._text)

    @property
    def url(self) -> str | None:
        """A remote workdir's URL (``Config.workdir_url``), None for a local folder."""
        return self._text if self._remote else None

    def published(self) -> Location:
        """Where this location's content is published: a URL itself; a file or folder in a
        remote workdir's local cache, its URL there (:func:`published_url`); any other local
        path itself.  Run.json of a command given the cache is the bucket's."""
        if self._remote:
            return self
        url = published_url(self._text)
        return self if url is None else Location(url, _remote=True)

    def publish_dir(self, tmp: Path, *, last: str, cache: Path) -> None:
        """Make the finished local folder ``tmp`` this directory's content, ``last`` (the marker,
        ``stage.json``) seen last: locally one rename onto ``cache`` (which is this folder);
        remotely an upload with ``last`` last, then ``tmp`` kept as the cached copy ``cache``."""
        if self._remote:
            upload_tree(tmp, self._text, last=last)
        replace_dir(tmp, cache)

    def fetch_dir(self, cache: Path, *, last: str) -> tuple[Path, bytes]:
        """This published directory as the local folder ``cache`` and its ``last`` file's bytes:
        downloaded unless ``cache`` holds the same ``last`` (a local directory is its own
        cache: nothing to copy)."""
        published = self.join(last).read_bytes()
        cached = cache / last
        if not (cached.is_file() and cached.read_bytes() == published):
            tmp = cache.parent / f".{cache.name}.fetch-{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            try:
                download_tree(self._text, tmp, last=last)
                replace_dir(tmp, cache)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        return cache, published


def local_files(locations: list[Location]) -> list[Path]:
    """The local ones of ``locations``, as paths."""
    return [Path(loc._text) for loc in locations if not loc._remote]


def _input_filesystem(url: str) -> Any:
    import fsspec

    # a fresh instance: fsspec's instance cache would keep the endpoint, credentials and
    # listings of an earlier call (a changed object must show its new ETag)
    return fsspec.filesystem(url.split("://", 1)[0], skip_instance_cache=True)


def _input_error(url: str, exc: BaseException) -> RemoteInputError:
    return RemoteInputError(f"{url}: {type(exc).__name__}: {exc}")


def remote_identity(url: str) -> dict[str, Any]:
    """What the server says identifies the object's content: size, and ETag and
    Last-Modified where it sends them.  A changed object gets a new identity."""
    try:
        info = _input_filesystem(url).info(url)
    except Exception as exc:  # noqa: BLE001 - every client failure is the same bad input
        raise _input_error(url, exc) from exc
    return _identity_of(url, info)


def _identity_of(url: str, info: dict[str, Any]) -> dict[str, Any]:
    size = info.get("size")
    if size is None:
        raise RemoteInputError(f"{url}: the server reports no size")
    etag = info.get("ETag") or info.get("etag")
    modified = info.get("LastModified") or info.get("Last-Modified") or info.get("last_modified")
    if isinstance(modified, datetime):  # a listing's has milliseconds, HeadObject's whole seconds
        modified = modified.replace(microsecond=0)
    return {"bytes": int(size), "etag": str(etag) if etag else None,
            "last_modified": str(modified) if modified else None}


HEAD_WORKERS = 16
"""Requests in flight at once when planning asks an HTTP server about many files."""
LISTED_SCHEMES = ("s3",)
"""Stores whose folder listing gives each object the same identity as asking for it alone."""


def remote_identities(urls: list[str]) -> list[dict[str, Any] | RemoteInputError]:
    """:func:`remote_identity` of each URL (or its error), in order, without one request after
    another: the objects of an ``s3://`` folder come from one listing of the folder (1,000
    per request), the rest from ``HEAD_WORKERS`` requests at a time.  A Common Crawl paths
    file names ~90,000 files; one by one that was an hour of planning."""
    from concurrent.futures import ThreadPoolExecutor

    found: dict[str, dict[str, Any] | RemoteInputError] = {}
    by_folder: dict[str, list[str]] = {}
    for url in urls:
        if url.split("://", 1)[0] in LISTED_SCHEMES:
            by_folder.setdefault(url.rsplit("/", 1)[0], []).append(url)
    for folder, members in by_folder.items():
        if len(members) > 1:
            found.update(_listed(folder, members))
    rest = [url for url in dict.fromkeys(urls) if url not in found]
    if rest:
        with ThreadPoolExecutor(HEAD_WORKERS) as pool:
            found.update(zip(rest, pool.map(_identity_or_error, rest)))
    return [found[url] for url in urls]


def _listed(folder: str, members: list[str]) -> dict[str, dict[str, Any] | RemoteInputError]:
    """Identities of ``members`` found in one listing of ``folder``; a member the listing lacks
    (or a listing that fails) is left to be asked for on its own."""
    scheme = folder.split("://", 1)[0] + "://"
    try:
        entries = _input_filesystem(folder).ls(folder, detail=True)
    except Exception:  # noqa: BLE001 - each member is then asked on its own, with its own error
        return {}
    by_name = {scheme + str(entry["name"]).removeprefix(scheme): entry for entry in entries
               if entry.get("type") == "file"}
    out: dict[str, dict[str, Any] | RemoteInputError] = {}
    for url in members:
        if url in by_name:
            try:
                out[url] = _identity_of(url, by_name[url])
            except RemoteInputError as exc:
                out[url] = exc
    return out


def _identity_or_error(url: str) -> dict[str, Any] | RemoteInputError:
    try:
        return remote_identity(url)
    except RemoteInputError as exc:
        return exc


def input_identities(locations: list[Location]) -> list[dict[str, Any]]:
    """:meth:`Location.input_identity` of each input, in order: local files by ``stat`` (an
    ``OSError`` if one is gone), remote objects by :func:`remote_identities` (many at once);
    one the server cannot describe keeps its error (``bytes`` -1, ``error``) for ingest to
    count, or fail on with ``--strict``."""
    remote = [str(loc) for loc in locations if loc._remote]
    identities = dict(zip(remote, remote_identities(remote)))
    out: list[dict[str, Any]] = []
    for loc in locations:
        if loc._remote:
            identity = identities[str(loc)]
            described = {"bytes": -1, "error": str(identity)} if isinstance(identity, RemoteInputError) \
                else identity
            out.append({"path": str(loc), "mtime_ns": 0, **described})
            continue
        path = Path(loc._text)
        st = path.stat()
        out.append({"path": str(path.resolve()), "bytes": st.st_size, "mtime_ns": st.st_mtime_ns})
    return out


# --- used by MapReduce tasks on any machine: standard library and fsspec only -------------

def open_input(location: str) -> BinaryIO:
    """``location`` open for random-access reading (a Parquet part of the page table): a local
    path as pyarrow's own file (``pyarrow.OSFile``, what the Parquet readers read fastest), a
    URL (``s3://``, ``gs://``, ``hdfs://``) through the same fsspec client that wrote the
    workdir, with the credentials and endpoint of the task's environment (``AWS_ACCESS_KEY_ID``,
    ``AWS_ENDPOINT_URL``, ...).  Errors name the location.  The MapReduce jobs' readers of
    page-table parts call it with the plain string of their input line, whatever it is."""
    if not is_url(location):
        import pyarrow as pa  # every job that reads a part has pyarrow; the driver never calls this

        return cast(BinaryIO, pa.OSFile(str(local_path(location)), "rb"))
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
