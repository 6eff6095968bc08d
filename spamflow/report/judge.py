"""``spamflow judge``: a page served on 127.0.0.1 that shows one host, quilt, cluster or campaign
at a time with its evidence and records spam / not spam / unsure (Najork's labelling tool).

Any web page the labeller has open can send requests to 127.0.0.1, so the server trusts only
requests that can only come from its own page: Host must be the address and port it serves
(DNS rebinding cannot read the evidence), a write must carry no foreign Origin, a JSON content
type (a cross-site form or ``text/plain`` fetch cannot send one without a CORS preflight, which
is never answered) and the token of this start, which only the page itself can read.  Bodies are
capped and shallow, so a request cannot exhaust memory or the parser's stack."""

from __future__ import annotations

import hmac
import json
import secrets
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any

from spamflow.report.evidence import Evidence
from spamflow.report.labels import LabelStore
from spamflow.report.sections import environment

STATIC = {"/assets/report.css": "text/css", "/assets/judge.js": "text/javascript"}
TOKEN_HEADER = "X-Spamflow-Token"
MAX_BODY = 16 * 1024  # a verdict is {"key": ..., "label": ...}: well under 1 KiB
MAX_DEPTH = 4  # a verdict is one flat object
DRAIN = 1024 * 1024  # a refused body up to this size is read and dropped, so its sender gets the answer
SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    # no other page may frame this one and click its buttons for the labeller
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
}


class Refused(Exception):
    """A request answered with ``status`` and ``{"error": message}``, nothing written."""

    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def item_json(items: list[Evidence]) -> bytes:
    return json.dumps([{"key": e.key, "kind": e.kind, "title": e.title, "html": e.html, "anchor": e.anchor}
                       for e in items]).encode("utf-8")


def nesting_depth(text: str) -> int:
    """How deep ``[`` and ``{`` nest in JSON text, outside strings (checked before parsing, which
    would recurse once per level)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_verdict(raw: bytes) -> tuple[str, str]:
    """``(key, label)`` from a request body, or :class:`Refused` (400) saying what is wrong."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(HTTPStatus.BAD_REQUEST, f"body is not UTF-8: {exc}") from exc
    if nesting_depth(text) > MAX_DEPTH:
        raise Refused(HTTPStatus.BAD_REQUEST, f"body nests JSON deeper than {MAX_DEPTH} levels")
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise Refused(HTTPStatus.BAD_REQUEST, f"body is not JSON: {exc}") from exc
    if not isinstance(body, dict) or not isinstance(body.get("key"), str) or not isinstance(body.get("label"), str):
        raise Refused(HTTPStatus.BAD_REQUEST, 'body must be {"key": "<item>", "label": "<label>"} with strings')
    return body["key"], body["label"]


def make_server(items: list[Evidence], store: LabelStore, port: int = 0, title: str = "") -> ThreadingHTTPServer:
    """A server bound to 127.0.0.1 only (``port`` 0: any free port); call ``serve_forever``.
    Its write token is new at each start and is served only inside the page."""
    token = secrets.token_urlsafe(32)
    page = environment().get_template("judge.html.j2").render(
        title=title, labels_path=str(store.csv), token=token, token_header=TOKEN_HEADER).encode()
    payload = item_json(items)
    keys = {e.key for e in items}

    class Handler(BaseHTTPRequestHandler):
        timeout = 30  # a client that announces a body and never sends it does not hold a thread

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            pass

        def _send(self, body: bytes, content_type: str, status: HTTPStatus = HTTPStatus.OK) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type + "; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            for name, value in SECURITY_HEADERS.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _error(self, refused: Refused) -> None:
            self._send(json.dumps({"error": str(refused)}).encode(), "application/json", refused.status)

        def _check_host(self) -> None:
            """DNS rebinding: a foreign name resolving to 127.0.0.1 sends its own name as Host."""
            hosts = self.headers.get_all("Host") or [""]
            given = hosts[0].strip().lower()
            if len(hosts) != 1 or given != own:
                raise Refused(HTTPStatus.FORBIDDEN, f"Host {given!r} is not {own}: open http://{own}/")

        def _announced(self) -> int | None:
            value = self.headers.get("Content-Length")
            digits = (value or "").strip()
            return int(digits) if digits.isascii() and digits.isdigit() else None

        def _drain(self) -> None:
            """Read (in chunks, never kept) a refused body the client is sending, up to DRAIN bytes:
            closing with it unread would reset the connection before the client reads the answer."""
            left = self._announced() or 0
            if left > DRAIN:
                return
            while left > 0:
                chunk = self.rfile.read(min(left, 64 * 1024))
                if not chunk:
                    return
                left -= len(chunk)

        def _body_length(self) -> int:
            value = self.headers.get("Content-Length")
            if value is None:
                raise Refused(HTTPStatus.LENGTH_REQUIRED, "a write needs a Content-Length")
            length = self._announced()
            if length is None:
                raise Refused(HTTPStatus.BAD_REQUEST, f"Content-Length {value!r} is not a number of bytes")
            if length > MAX_BODY:
                raise Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                              f"body of {length} bytes is over the {MAX_BODY} byte limit")
            return length

        def _check_write(self) -> None:
            origin = self.headers.get("Origin")
            if origin is not None and origin.strip().lower() != f"http://{own}":
                raise Refused(HTTPStatus.FORBIDDEN, f"Origin {origin!r} is not http://{own}")
            media = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if media != "application/json":
                raise Refused(HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                              f"Content-Type {media or 'none'!r} is not application/json")
            given = self.headers.get(TOKEN_HEADER)
            if given is None:
                raise Refused(HTTPStatus.FORBIDDEN, f"no {TOKEN_HEADER} header: write from the judging page")
            if not hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode()):
                raise Refused(HTTPStatus.FORBIDDEN,
                              f"wrong {TOKEN_HEADER} (a page from an earlier start? reload it)")

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            try:
                self._check_host()
            except Refused as refused:
                self._error(refused)
                return
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
            self.close_connection = True
            body = None
            try:
                self._check_host()
                if self.path != "/api/label":
                    raise Refused(HTTPStatus.NOT_FOUND, f"no {self.path}: writes go to /api/label")
                self._check_write()
                body = self.rfile.read(self._body_length())
                key, label = parse_verdict(body)
                if key not in keys:
                    raise Refused(HTTPStatus.BAD_REQUEST, f"no item {key!r}")
                try:
                    store.add(key, label)
                except ValueError as exc:
                    raise Refused(HTTPStatus.BAD_REQUEST, str(exc)) from exc
            except Refused as refused:
                if body is None:
                    self._drain()
                self._error(refused)
                return
            self._send(json.dumps({"ok": True, "key": key, "label": label}).encode(), "application/json")

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    # the only Host (and, after http://, Origin) answered; browsers leave out port 80
    own = "127.0.0.1" if server.server_port == 80 else f"127.0.0.1:{server.server_port}"
    return server
