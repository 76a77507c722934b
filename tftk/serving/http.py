"""HTTP/1.1 for the REST API: connections on an asyncio (uvloop) server, requests parsed by httptools.

Why not an ASGI server (uvicorn before): its per-request machinery (a task, scope dicts,
receive/send coroutines) cost ~25 us of CPU a request more than this (33 vs 9 us for a fixed
answer, measured with wrk), a sixth of what a batched ConvNet request costs in all. Here a
complete request goes straight to the handler, which answers at once or with a `Pending` (a
future and what to make of its result), so a request costs no task and no coroutine, and the
batcher learns when the loop has handed over every request of a round (`on_round`).

What a production front end needs: keep-alive and pipelining (answered in order), `Expect:
100-continue`, chunked bodies (httptools decodes them), a body limit (413, checked on the
declared length before reading), a time limit for the request head and body (408: slow clients
cannot hold a connection), a connection cap (503), and a graceful stop that finishes the requests
in progress (even ones still arriving) while closing idle connections.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Callable
from urllib.parse import unquote

from tftk.serving import stage_times

__all__ = ["Request", "Response", "Pending", "HttpLimits", "HttpConnection", "serve_http"]

_REASONS = {200: b"OK", 400: b"Bad Request", 404: b"Not Found", 405: b"Method Not Allowed",
            408: b"Request Timeout", 413: b"Payload Too Large", 500: b"Internal Server Error",
            503: b"Service Unavailable"}
JSON = b"application/json"


@dataclass(slots=True)  # this and the next two are made per request: not frozen, which costs ~0.6 us an instance
class Request:
    method: str
    path: str
    headers: dict[bytes, bytes]  # names in lower case
    body: bytes
    client: str


@dataclass(slots=True)
class Response:
    status: int
    body: bytes
    content_type: bytes = JSON


@dataclass(slots=True)
class Pending:
    """An answer still being computed: `finish(future)` (on the event loop) makes the Response once it is done."""

    future: Future  # or a tftk.serving.batching.LoopFuture: add_done_callback and result are what is used
    finish: Callable[[Future], Response]


Handler = Callable[[Request], "Response | Pending"]


@dataclass(frozen=True)
class HttpLimits:
    max_body_bytes: int = 8 << 20
    request_timeout: float = 10.0  # seconds a client has for its request head, and again for its body
    max_queue: int = 256  # requests between their head and their answer; more get 503
    max_connections: int = 1024


def error_response(status: int, message: str) -> Response:
    return Response(status, json.dumps({"error": message}).encode())


class _Shared:
    """What the connections of one server share: the handler, limits, callbacks, open connections and the queue."""

    def __init__(self, handler: Handler, limits: HttpLimits, on_round: Callable[[], None],
                 rejected: Callable[[str], None]):
        self.handler, self.limits, self.on_round, self.rejected = handler, limits, on_round, rejected
        self.connections: set[HttpConnection] = set()
        self.queued = 0  # requests admitted and not yet answered
        self.loop_thread = threading.get_ident()  # made on the loop's thread


class HttpConnection(asyncio.Protocol):
    """One client connection: parse requests, hand each complete one to the handler, write answers in order."""

    def __init__(self, shared: _Shared):
        import httptools

        self._shared = shared
        self._handler, self._limits, self._connections = shared.handler, shared.limits, shared.connections
        self._round, self._rejected = shared.on_round, shared.rejected
        self._admitted = 0  # of this connection's requests, those counted in shared.queued
        self._parser = httptools.HttpRequestParser(self)
        self._errors = (httptools.HttpParserError, httptools.HttpParserUpgrade)
        self._transport: asyncio.Transport | None = None
        self._client = ""
        self._deadline: float | None = None  # when the head or body being waited for is late (sweep_deadlines)
        self._ready: deque[tuple[Request, bool]] = deque()  # complete requests waiting their turn
        self._pending: tuple[Pending, bool] | None = None  # the answer being computed, and keep-alive
        self._receiving = False  # a request has begun arriving
        self._head_done = False  # ... and its head is in
        self._discarding = False  # reading the rest of a refused body before closing
        self._url, self._headers, self._body, self._size = b"", {}, [], 0

    # ---- connection ----------------------------------------------------------------------------------
    def connection_made(self, transport) -> None:
        self._transport = transport
        peer = transport.get_extra_info("peername") or ("", 0)
        self._client = f"{peer[0]}:{peer[1]}"
        self._loop = asyncio.get_running_loop()
        if len(self._connections) >= self._limits.max_connections:
            self._rejected("too_many_connections")
            self._write(error_response(503, "server busy: too many connections; retry later"), keep_alive=False,
                        answered=False)
            return
        self._connections.add(self)
        self._arm(self._limits.request_timeout)

    def connection_lost(self, exc) -> None:
        self._shared.queued -= self._admitted
        self._admitted = 0
        self._disarm()
        self._connections.discard(self)
        self._transport = None

    def data_received(self, data: bytes) -> None:
        stage_times.switch("http")
        try:
            self._parser.feed_data(data)
        except self._errors:
            if not self._discarding:
                self._write(error_response(400, "malformed HTTP request"), keep_alive=False, answered=False)
        stage_times.switch("loop")

    @property
    def idle(self) -> bool:
        """No request arriving, waiting or being answered: safe to close when stopping."""
        return not (self._pending or self._receiving or self._ready)

    def close_if_idle(self) -> None:
        if self.idle and self._transport is not None:
            self._transport.close()

    # ---- parser callbacks (httptools) ----------------------------------------------------------------
    def on_message_begin(self) -> None:
        self._receiving, self._head_done = True, False
        self._url, self._headers, self._body, self._size = b"", {}, [], 0

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.lower()] = value

    def on_headers_complete(self) -> None:
        self._head_done = True
        self._arm(self._limits.request_timeout)  # now the body's turn
        declared = self._headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self._limits.max_body_bytes:
            self._refuse(413, "too_large",
                         f"request body of {int(declared)} bytes exceeds the limit of {self._limits.max_body_bytes}")
        elif self._shared.queued >= self._limits.max_queue:
            self._refuse(503, "queue_full",
                         f"server busy: {self._limits.max_queue} requests already queued; retry later")
        else:
            self._shared.queued += 1
            self._admitted += 1
            if self._headers.get(b"expect", b"").lower() == b"100-continue":
                self._transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        if self._discarding:
            return
        self._size += len(body)
        if self._size > self._limits.max_body_bytes:
            self._refuse(413, "too_large", f"request body exceeds the limit of {self._limits.max_body_bytes} bytes")
            return
        self._body.append(body)

    def on_message_complete(self) -> None:
        self._receiving = False
        if self._discarding:
            self._transport.close()
            return
        self._disarm()
        path = self._url.partition(b"?")[0].decode("latin-1")
        request = Request(self._parser.get_method().decode("latin-1"), unquote(path) if "%" in path else path,
                          self._headers, b"".join(self._body), self._client)
        self._ready.append((request, self._parser.should_keep_alive()))
        if self._pending:
            self._transport.pause_reading()  # one pipelined request waits; read no further
        else:
            self._next()

    # ---- answering -----------------------------------------------------------------------------------
    def _next(self) -> None:
        while self._ready and not self._pending and self._transport is not None:
            request, keep_alive = self._ready.popleft()
            self._round()
            try:
                answer = self._handler(request)
            except Exception as error:  # the handler answers its errors itself; this is a bug
                answer = error_response(500, f"{type(error).__name__}: {error}")
            stage_times.switch("http")
            if isinstance(answer, Pending):
                # The future keeps its callbacks, and the callback leads back to the future through
                # _pending: _finish clears it, so no request leaves a cycle for the garbage collector.
                self._pending = answer, keep_alive
                answer.future.add_done_callback(self._computed)
                return
            self._write(answer, keep_alive)

    def _computed(self, future: Future) -> None:
        """The pending answer's future is done: finish on the loop, from the loop's own thread (a batch run
        there) without waking it."""
        if threading.get_ident() == self._shared.loop_thread:
            self._loop.call_soon(self._finish)
        else:
            self._loop.call_soon_threadsafe(self._finish)

    def _finish(self) -> None:
        pending, keep_alive = self._pending
        self._pending = None
        try:
            answer = pending.finish(pending.future)
        except Exception as error:
            answer = error_response(500, f"{type(error).__name__}: {error}")
        if self._transport is not None:
            self._write(answer, keep_alive)
            stage_times.switch("http")
            self._next()
        stage_times.switch("loop")

    def _write(self, answer: Response, keep_alive: bool, answered: bool = True) -> None:
        """Send `answer`; `answered`: it answers an admitted request, which leaves the queue."""
        stage_times.switch("http_write")
        if answered and self._admitted:
            self._admitted -= 1
            self._shared.queued -= 1
        transport = self._transport
        if transport is None:
            return
        head = b"HTTP/1.1 %d %s\r\ncontent-type: %s\r\ncontent-length: %d\r\n" % (
            answer.status, _REASONS.get(answer.status, b"Unknown"), answer.content_type, len(answer.body))
        transport.write(head + (b"\r\n" if keep_alive else b"connection: close\r\n\r\n") + answer.body)
        if not keep_alive:
            transport.close()
        elif self.idle:
            transport.resume_reading()
            self._arm(self._limits.request_timeout)

    def _refuse(self, status: int, reason: str, message: str) -> None:
        """413/503 before the body: answer now, drop the body as it arrives, close when it is in (so the
        client, still sending, reads the answer rather than a reset)."""
        self._rejected(reason)
        self._write(error_response(status, message), keep_alive=True, answered=False)
        self._discarding = True
        self._arm(self._limits.request_timeout)

    # ---- time limits ---------------------------------------------------------------------------------
    # A deadline is a number checked by the server's sweep, not a timer per request: creating and
    # cancelling event-loop timers three times a request cost more than the rest of the HTTP work.
    def _arm(self, seconds: float) -> None:
        self._deadline = self._loop.time() + seconds

    def _disarm(self) -> None:
        self._deadline = None

    def check_deadline(self, now: float) -> None:
        """Called by the sweep: past the deadline, an idle keep-alive connection closes quietly and a
        request that stalls midway gets 408."""
        if self._deadline is None or now < self._deadline:
            return
        self._deadline = None
        if self._transport is None or self._pending:
            return
        if self._receiving and not self._discarding:
            what = "body" if self._head_done else "head"
            self._rejected(f"slow_{what}")
            self._write(error_response(408, f"request {what} not received within {self._limits.request_timeout:g} s"),
                        keep_alive=False, answered=False)
        else:
            self._transport.close()


async def serve_http(sock, handler: Handler, limits: HttpLimits, stop: asyncio.Event, grace_seconds: float,
                     on_round: Callable[[], None] = lambda: None,
                     rejected: Callable[[str], None] = lambda reason: None) -> None:
    """Serve on the listening socket `sock` until `stop` is set, then finish what is in progress (up to
    `grace_seconds`). `on_round` is called before each request is handed over (the batcher's cue);
    `rejected(reason)` counts requests refused before the handler (too_large, queue_full, slow_head,
    slow_body, too_many_connections)."""
    loop = asyncio.get_running_loop()
    shared = _Shared(handler, limits, on_round, rejected)
    connections = shared.connections
    server = await loop.create_server(lambda: HttpConnection(shared), sock=sock, backlog=2048)
    sweep = loop.create_task(_sweep_deadlines(connections, limits.request_timeout))
    await stop.wait()
    server.close()
    deadline = loop.time() + grace_seconds
    while connections and loop.time() < deadline:
        for connection in list(connections):
            connection.close_if_idle()
        await asyncio.sleep(0.05)
    sweep.cancel()
    for connection in list(connections):
        if connection._transport is not None:
            connection._transport.close()


async def _sweep_deadlines(connections: set[HttpConnection], timeout: float) -> None:
    """Check every connection's deadline a few times per timeout (so a 408 comes at most a quarter late)."""
    loop = asyncio.get_running_loop()
    interval = min(max(timeout / 4, 0.01), 1.0)
    while True:
        await asyncio.sleep(interval)
        now = loop.time()
        for connection in list(connections):
            connection.check_deadline(now)
