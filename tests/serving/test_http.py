"""tftk.serving.http, the REST API's HTTP/1.1 server, on its own: a stand-in handler on 127.0.0.1, raw sockets."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

pytest.importorskip("httptools", reason="tftk serve needs the serve extra: pip install -e '.[serve]'")

from tftk.serving.http import HttpLimits, Pending, Request, Response, serve_http  # noqa: E402


class Echo:
    """Answers `METHOD PATH BODYLENGTH BODY`; `/slow` answers from a thread once `release` is set."""

    def __init__(self):
        self.release = threading.Event()
        self.executor = ThreadPoolExecutor(2)
        self.rounds = 0

    def __call__(self, request: Request) -> Response | Pending:
        text = f"{request.method} {request.path} {len(request.body)} ".encode() + request.body
        if request.path == "/slow":
            future: Future = self.executor.submit(self.release.wait, 10)
            return Pending(future, lambda done: Response(200, text, b"text/plain"))
        return Response(200, text, b"text/plain")


class Running:
    """serve_http in a thread with its own event loop."""

    def __init__(self, limits: HttpLimits, grace: float = 5.0):
        self.handler = Echo()
        self.listening = socket.create_server(("127.0.0.1", 0))
        self.port = self.listening.getsockname()[1]
        self.loop = asyncio.new_event_loop()
        self.stop_event: asyncio.Event | None = None
        self.rejected: list[str] = []
        started = threading.Event()

        async def main():
            self.stop_event = asyncio.Event()
            started.set()
            await serve_http(self.listening, self.handler, limits, self.stop_event, grace,
                             on_round=self._round, rejected=self.rejected.append)

        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(main(),), daemon=True)
        self.thread.start()
        started.wait(5)

    def _round(self):
        self.handler.rounds += 1

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        return sock

    def stop(self) -> None:
        self.handler.release.set()
        if self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.stop_event.set)
            self.thread.join(10)
        self.handler.executor.shutdown()


@pytest.fixture
def http():
    servers = []

    def start(**limits) -> Running:
        server = Running(HttpLimits(**{"request_timeout": 2.0, **limits}))
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def read_all(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def read_answers(sock: socket.socket, count: int) -> list[bytes]:
    """`count` answers (head and body) read from a keep-alive connection."""
    data, answers = b"", []
    while len(answers) < count:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if sep:
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            if len(rest) >= length:
                answers.append(head + b"\r\n\r\n" + rest[:length])
                data = rest[length:]
                continue
        chunk = sock.recv(65536)
        assert chunk, f"connection closed after {len(answers)} answers"
        data += chunk
    return answers


def post(path: str, body: bytes, *extra: bytes) -> bytes:
    return b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n%s\r\n%s" % (
        path.encode(), len(body), b"".join(line + b"\r\n" for line in extra), body)


def test_keep_alive_and_pipelined_requests_are_answered_in_order(http):
    server = http()
    with server.connect() as sock:
        sock.sendall(post("/a", b"one"))
        assert read_answers(sock, 1)[0].endswith(b"POST /a 3 one")
        sock.sendall(post("/slow", b"first") + post("/b", b"second"))  # the slow one is answered first
        time.sleep(0.2)
        server.handler.release.set()
        first, second = read_answers(sock, 2)
        assert first.endswith(b"POST /slow 5 first") and second.endswith(b"POST /b 6 second")
    assert server.handler.rounds >= 3


@pytest.mark.parametrize("request_bytes, answer_start, answer_end", [
    (b"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
     b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", b"HTTP/1.1 200 OK\r\n", b"POST /c 5 abcde"),
    (b"GET /%6Dodels?x=1 HTTP/1.0\r\n\r\n", b"HTTP/1.1 200 OK\r\n", b"GET /models 0 "),
    (b"NONSENSE\r\n\r\n", b"HTTP/1.1 400 Bad Request\r\n", b'{"error": "malformed HTTP request"}'),
    (post("/big", b"x" * 50, b"Connection: close"), b"HTTP/1.1 413 Payload Too Large\r\n",
     b'{"error": "request body of 50 bytes exceeds the limit of 40"}'),
    (b"POST /big HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n32\r\n" + b"x" * 50 + b"\r\n0\r\n\r\n",
     b"HTTP/1.1 413 Payload Too Large\r\n", b'{"error": "request body exceeds the limit of 40 bytes"}'),
], ids=["chunked-body", "http-1.0-escaped-path", "malformed", "declared-too-large", "chunked-too-large"])
def test_one_request_one_answer_then_closed(http, request_bytes, answer_start, answer_end):
    server = http(max_body_bytes=40)
    with server.connect() as sock:
        sock.sendall(request_bytes)
        answer = read_all(sock)
    assert answer.startswith(answer_start) and answer.endswith(answer_end), answer
    assert answer.count(b"HTTP/1.1 ") == 1


def test_expect_100_continue_is_answered_before_the_body(http):
    server = http()
    with server.connect() as sock:
        sock.sendall(b"POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(b"data")
        assert read_answers(sock, 1)[0].endswith(b"POST /e 4 data")


def test_slow_heads_and_bodies_get_408_and_idle_connections_close_quietly(http):
    server = http(request_timeout=0.5)
    head, body, idle = server.connect(), server.connect(), server.connect()
    head.sendall(b"POST /h HTTP/1.1\r\nHost: x\r\n")
    body.sendall(post("/b", b"0123456789")[:-5])
    assert read_all(head).endswith(b'{"error": "request head not received within 0.5 s"}')
    assert read_all(body).endswith(b'{"error": "request body not received within 0.5 s"}')
    assert read_all(idle) == b""
    assert sorted(server.rejected) == ["slow_body", "slow_head"]


def test_the_queue_and_connection_bounds_answer_503(http):
    server = http(max_queue=1, max_connections=3)
    waiting = server.connect()
    waiting.sendall(post("/slow", b""))  # holds the one place in the queue
    time.sleep(0.2)
    with server.connect() as sock:
        sock.sendall(post("/a", b"x"))
        assert b"503 Service Unavailable" in read_all(sock) and "queue_full" in server.rejected
    extra = [server.connect(), server.connect()]
    time.sleep(0.2)
    with server.connect() as sock:  # a fourth connection
        assert b"too many connections" in read_all(sock)
    server.handler.release.set()
    assert read_answers(waiting, 1)[0].endswith(b"POST /slow 0 ")
    for sock in [waiting, *extra]:
        sock.close()


def test_stopping_finishes_a_request_still_arriving_and_closes_idle_connections(http):
    server = http()
    arriving, idle = server.connect(), server.connect()
    arriving.sendall(post("/a", b"0123456789")[:-4])
    time.sleep(0.2)
    server.loop.call_soon_threadsafe(server.stop_event.set)
    assert read_all(idle) == b""
    arriving.sendall(b"6789")
    assert read_answers(arriving, 1)[0].endswith(b"POST /a 10 0123456789")
    server.thread.join(5)
    assert not server.thread.is_alive()
