"""Serve virtual hosts over real HTTP on loopback addresses (127.x.y.z), for tests, the demo
and the benchmark.

Each distinct address gets its own listening socket (on Linux all of 127.0.0.0/8 is
loopback), so a crawler sees one IP per simulated server, and :attr:`LoopbackWeb.pins`
gives the ``resolve:`` map (``host -> address:port``).  Every request is logged with the
server-side arrival time (``time.monotonic()``), so politeness can be measured where it
matters: at the server.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from aiohttp import web


@dataclass
class Reply:
    """What the server sends for one request."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html; charset=utf-8"})
    delay: float = 0.0  # seconds before the status line
    drip: float | None = None  # seconds between single bytes of the body (a slow drip)
    size: int | None = None  # a generated body of this many bytes (streamed; never held in memory)


@dataclass(frozen=True)
class Hit:
    time: float  # time.monotonic() when the request arrived
    ip: str  # the local address it arrived on
    host: str  # the Host header without port
    path: str


Handler = Callable[[str, str], Reply]


class LoopbackWeb:
    """``with LoopbackWeb(handler, {host: ip}) as web:`` serves until the block ends."""

    def __init__(self, handler: Handler, hosts: dict[str, str], ssl_context: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.ssl_context = ssl_context  # serve HTTPS with it
        self.hosts = hosts
        self.ports: dict[str, int] = {}
        self.log: list[Hit] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="loopback-web")
        self._runner: web.AppRunner | None = None

    @property
    def pins(self) -> dict[str, str]:
        return {host: f"{ip}:{self.ports[ip]}" for host, ip in self.hosts.items()}

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        sock = request.transport.get_extra_info("sockname") if request.transport else None
        host = (request.headers.get("Host") or "").rsplit(":", 1)[0].lower()
        self.log.append(Hit(time.monotonic(), sock[0] if sock else "", host, request.path_qs))
        reply = self.handler(host, request.path_qs)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.drip is None and reply.size is None:
            return web.Response(status=reply.status, body=reply.body, headers=reply.headers)
        response = web.StreamResponse(status=reply.status, headers=reply.headers)
        if reply.size is not None:
            response.content_length = reply.size
        await response.prepare(request)
        try:
            if reply.size is not None:
                chunk = b"x" * 65536
                for start in range(0, reply.size, len(chunk)):
                    await response.write(chunk[: reply.size - start])
            else:
                for i in range(len(reply.body)):
                    await response.write(reply.body[i:i + 1])
                    await asyncio.sleep(reply.drip or 0)
            await response.write_eof()
        except (ConnectionResetError, asyncio.CancelledError, RuntimeError):
            pass  # the client hung up (as a crawler capping a body does)
        return response

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        await self._runner.setup()
        for ip in sorted(set(self.hosts.values())):
            site = web.TCPSite(self._runner, ip, 0, ssl_context=self.ssl_context)
            await site.start()
            server = site._server
            assert server is not None and server.sockets  # type: ignore[attr-defined]
            self.ports[ip] = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

    def __enter__(self) -> LoopbackWeb:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
