"""Input WARC files where users keep them: local paths, ``s3://`` and ``http(s)://`` URLs,
and Common Crawl paths files (``warc.paths.gz``: one path per line, relative to a base URL).

Remote objects are read through fsspec (``http`` via aiohttp, ``s3`` via s3fs): one layer
for both schemes, with the server's own identity of each object (ETag, Last-Modified,
size).  pyarrow.fs was the other candidate but has no HTTP filesystem.  S3 settings come
from the usual AWS variables (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ...).

The WARC readers need a seekable local file (resynchronisation, record offsets), so each
remote file is downloaded to a spool file in the stage's work folder and deleted after.
"""

from __future__ import annotations

import gzip
import uuid
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

REMOTE_SCHEMES = ("s3://", "http://", "https://")


class RemoteInputError(OSError):
    """A remote input could not be listed or read; the message names the URL."""


def is_remote(location: str) -> bool:
    return location.startswith(REMOTE_SCHEMES)


def is_paths_file(location: str) -> bool:
    """A Common Crawl style list of WARC paths (``*.paths`` or ``*.paths.gz``)."""
    return location.endswith((".paths", ".paths.gz"))


def _filesystem(url: str) -> Any:
    import fsspec

    # a fresh instance: fsspec's instance cache would keep the endpoint, credentials and
    # listings of an earlier call (a changed object must show its new ETag)
    return fsspec.filesystem(url.split("://", 1)[0], skip_instance_cache=True)


def _error(url: str, exc: BaseException) -> RemoteInputError:
    return RemoteInputError(f"{url}: {type(exc).__name__}: {exc}")


def remote_identity(url: str) -> dict[str, Any]:
    """What the server says identifies the object's content: size, and ETag and
    Last-Modified where it sends them.  A changed object gets a new identity."""
    try:
        info = _filesystem(url).info(url)
    except Exception as exc:  # noqa: BLE001 - every client failure is the same bad input
        raise _error(url, exc) from exc
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


def remote_identities(urls: list[str]) -> list[dict[str, Any] | RemoteInputError]:
    """:func:`remote_identity` of each URL (or its error), in order, without one request after
    another: the objects of an ``s3://`` folder come from one listing of the folder (1,000
    per request), the rest from ``HEAD_WORKERS`` requests at a time.  A Common Crawl paths
    file names ~90,000 files; one by one that was an hour of planning."""
    found: dict[str, dict[str, Any] | RemoteInputError] = {}
    by_folder: dict[str, list[str]] = {}
    for url in urls:
        if url.startswith("s3://"):
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
    try:
        entries = _filesystem(folder).ls(folder, detail=True)
    except Exception:  # noqa: BLE001 - each member is then asked on its own, with its own error
        return {}
    by_name = {"s3://" + str(entry["name"]).removeprefix("s3://"): entry for entry in entries
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


def read_paths_file(location: str, base_url: str | None) -> list[str]:
    """The WARC locations a paths file lists: each non-empty line joined to ``base_url``
    (a line that is already a URL is kept as it is)."""
    try:
        if is_remote(location):
            raw = _filesystem(location).cat_file(location)
        else:
            raw = Path(location).read_bytes()
        text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    except Exception as exc:  # noqa: BLE001
        raise _error(location, exc) from exc
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if is_remote(line):
            out.append(line)
        elif base_url is None:
            raise RemoteInputError(f"{location}: relative path {line!r} and no input.base_url to join it to")
        else:
            out.append(base_url.rstrip("/") + "/" + line.lstrip("/"))
    return out


FIRST_HEAD_BYTES = 1 << 16
"""How much of a remote file ingest reads first to find its first WARC-Date."""
HEAD_BYTES = 1 << 20
"""How much it reads next, when the first head does not settle it."""


@contextmanager
def head_copy(location: str, spool_dir: Path, nbytes: int = HEAD_BYTES) -> Iterator[Path]:
    """A local file holding the first ``nbytes`` of ``location`` (the file itself if local), for
    looking at a remote file's first records without downloading all of it; deleted on exit."""
    if not is_remote(location):
        yield Path(location)
        return
    spool_dir.mkdir(parents=True, exist_ok=True)
    spool = spool_dir / f"{zlib.crc32(location.encode()):08x}-{uuid.uuid4().hex[:12]}-head"  # files read at once
    try:
        try:
            with _filesystem(location).open(location, "rb", block_size=nbytes) as fh:
                spool.write_bytes(fh.read(nbytes))
        except Exception as exc:  # noqa: BLE001
            raise _error(location, exc) from exc
        yield spool
    finally:
        spool.unlink(missing_ok=True)


@contextmanager
def local_copy(location: str, spool_dir: Path) -> Iterator[Path]:
    """A local path to read ``location`` from: itself if local, else a spool file in
    ``spool_dir`` holding the downloaded object, deleted on exit."""
    if not is_remote(location):
        yield Path(location)
        return
    spool_dir.mkdir(parents=True, exist_ok=True)
    name = location.rstrip("/").rsplit("/", 1)[-1] or "object"
    spool = spool_dir / f"{zlib.crc32(location.encode()):08x}-{uuid.uuid4().hex[:12]}-{name}"
    try:
        try:
            _filesystem(location).get_file(location, str(spool))  # streamed: one plain GET, no range requests
        except Exception as exc:  # noqa: BLE001
            raise _error(location, exc) from exc
        yield spool
    finally:
        spool.unlink(missing_ok=True)
