"""``spamflow judge``: a page served on 127.0.0.1 that shows one host, quilt, cluster or campaign
at a time with its evidence and records spam / not spam / unsure (Najork's labelling tool)."""

from __future__ import annotations

import json
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any

from spamflow.report.labels import LabelStore
from spamflow.report.sections import Evidence, environment

KINDS = ("host", "quilt", "cluster", "campaign")
STATIC = {"/assets/report.css": "text/css", "/assets/judge.js": "text/javascript"}


def item_json(items: list[Evidence]) -> bytes:
    return json.dumps([{"key": e.key, "kind": e.kind, "title": e.title, "html": e.html, "anchor": e.anchor}
                       for e in items]).encode("utf-8")


def make_server(items: list[Evidence], store: LabelStore, port: int = 0, title: str = "") -> ThreadingHTTPServer:
    """A server bound to 127.0.0.1 only (``port`` 0: any free port); call ``serve_forever``."""
    page = environment().get_template("judge.html.j2").render(title=title, labels_path=str(store.csv)).encode()
    payload = item_json(items)
    keys = {e.key for e in items}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            pass

        def _send(self, body: bytes, content_type: str, status: HTTPStatus = HTTPStatus.OK) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type + "; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            path = self.path.split("?")[0]
            if path == "/":
                self._send(page, "text/html")
            elif path in STATIC:
                name = path.rsplit("/", 1)[1]
                self._send((resources.files("spamflow.report") / "static" / name).read_bytes(), STATIC[path])
            elif path == "/api/items":
                self._send(payload, "application/json")
            elif path == "/api/labels":
                self._send(json.dumps(store.labels).encode(), "application/json")
            else:
                self._send(b"not found", "text/plain", HTTPStatus.NOT_FOUND)

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            if self.path != "/api/label":
                self._send(b"not found", "text/plain", HTTPStatus.NOT_FOUND)
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                if body["key"] not in keys:
                    raise ValueError(f"no item {body['key']!r}")
                store.add(body["key"], body["label"])
            except (ValueError, KeyError, TypeError) as exc:
                self._send(json.dumps({"error": str(exc)}).encode(), "application/json", HTTPStatus.BAD_REQUEST)
                return
            self._send(json.dumps({"ok": True, "key": body["key"], "label": body["label"]}).encode(),
                       "application/json")

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)
