"""Reading a crawl back, independently of the crawler: every WARC record through warcio,
digests recomputed with hashlib, the error log as plain JSON lines."""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator


@dataclass
class Stored:
    url: str
    status: int
    ip: str
    body: bytes  # the payload as transferred (after de-chunking)
    truncated: str | None
    headers: dict[str, str]


def sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def read_crawl(directory: Path) -> list[Stored]:
    """All response records of ``directory/warc``, checking every record on the way:
    WARC/1.1, warcinfo first in each file, a request for every response, digests right."""
    responses: list[Stored] = []
    for path in sorted((directory / "warc").glob("*.warc.gz")):
        types: list[str] = []
        ids: set[str] = set()
        concurrent: list[str] = []
        with open(path, "rb") as fh:
            for record in ArchiveIterator(fh, check_digests="raise"):
                head = record.rec_headers
                assert head.protocol == "WARC/1.1", path
                assert head.get_header("WARC-Date") and head.get_header("WARC-Record-ID")
                types.append(record.rec_type)
                ids.add(head.get_header("WARC-Record-ID"))
                if record.rec_type == "request":
                    concurrent.append(head.get_header("WARC-Concurrent-To"))
                    assert record.http_headers.protocol == "GET" and record.http_headers.statusline.endswith(" HTTP/1.1")
                if record.rec_type != "response":
                    continue
                payload = record.raw_stream.read()
                assert head.get_header("WARC-Payload-Digest") == sha1_b32(payload)
                assert head.get_header("WARC-IP-Address")
                responses.append(Stored(head.get_header("WARC-Target-URI"), int(record.http_headers.get_statuscode()),
                                        head.get_header("WARC-IP-Address"), payload, head.get_header("WARC-Truncated"),
                                        {k.lower(): v for k, v in record.http_headers.headers}))
        assert types and types[0] == "warcinfo", path
        assert Counter(types)["request"] == Counter(types)["response"], path
        assert all(c in ids for c in concurrent), path
    return responses


def read_errors(directory: Path) -> list[dict]:
    path = directory / "errors.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
