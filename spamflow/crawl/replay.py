"""Serve WARC files over HTTP on loopback, each host on its ``WARC-IP-Address``.

The demo crawls its own synthetic web this way: every ``response`` record becomes the
reply for its URL (status, headers, body as stored); a ``revisit`` record replays the body
of the record it refers to, as a 200 (the crawler sends no conditional requests).  A URL
with no record gets a plain-text 404, which is not a page.
"""

from __future__ import annotations

from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from spamflow.crawl.loopback import Reply
from spamflow.crawl.urls import normalize

_HOP_HEADERS = {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive", "date", "server"}
NOT_FOUND = Reply(status=404, body=b"not found", headers={"Content-Type": "text/plain"})


class WarcReplay:
    """Replies for the records of ``files``; ``earlier`` are files revisits may refer to."""

    def __init__(self, files: list[Path], earlier: list[Path] = ()) -> None:  # type: ignore[assignment]
        self.replies: dict[tuple[str, str], Reply] = {}
        self.hosts: dict[str, str] = {}
        by_id: dict[str, Reply] = {}
        for path in list(earlier):
            self._load(path, by_id, serve=False)
        for path in files:
            self._load(path, by_id, serve=True)

    def _load(self, path: Path, by_id: dict[str, Reply], serve: bool) -> None:
        with open(path, "rb") as fh:
            for record in ArchiveIterator(fh):
                if record.rec_type not in ("response", "revisit") or record.http_headers is None:
                    continue
                head = record.rec_headers
                url = normalize(head.get_header("WARC-Target-URI") or "")
                if url is None:
                    continue
                http = record.http_headers
                headers = {k: v for k, v in http.headers if k.lower() not in _HOP_HEADERS}
                if record.rec_type == "response":
                    reply = Reply(int(http.get_statuscode()), record.content_stream().read(), headers)
                    by_id[head.get_header("WARC-Record-ID")] = reply
                else:
                    old = by_id.get(head.get_header("WARC-Refers-To") or "")
                    if old is None:
                        continue
                    reply = Reply(200, old.body, old.headers)
                if serve:
                    host = url.split("/", 3)[2]
                    self.replies[(host, url.split("/", 3)[3] if url.count("/") >= 3 else "")] = reply
                    self.hosts[host] = head.get_header("WARC-IP-Address") or "127.0.0.1"

    def __call__(self, host: str, path: str) -> Reply:
        return self.replies.get((host, path.lstrip("/")), NOT_FOUND)

    def home_pages(self) -> list[str]:
        return [f"http://{host}/" for host in sorted(self.hosts)]
