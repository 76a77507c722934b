"""The `tftk serve` process: model manager, REST (uvicorn) and gRPC servers, graceful shutdown.

SIGTERM or Ctrl-C: stop accepting, finish the requests in flight (up to `grace_seconds`), stop
polling, unload the models, exit 0.
"""

from __future__ import annotations

import importlib.util
import logging
import signal
import socket
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from tftk.user_input import UserInputError
from tftk.serving.api import ServingApi
from tftk.serving.manager import ModelManager, ServedModel
from tftk.serving.metrics import Metrics

__all__ = ["ServerOptions", "run_server"]

_log = logging.getLogger("tftk.serving")


@dataclass(frozen=True)
class ServerOptions:
    """Ports and limits (TF Serving's flag names where it has one)."""

    port: int = 8500  # gRPC; 0 disables
    rest_api_port: int = 8501  # 0 disables
    host: str = "127.0.0.1"
    rest_api_num_threads: int = 64  # a request waiting for its batch holds a thread
    max_body_bytes: int = 8 << 20
    max_queue: int = 256
    request_timeout_seconds: float = 10.0  # a client must send its request head and body within this
    grace_seconds: float = 30.0


def _header_timeout_protocol(seconds: float):
    """uvicorn's httptools protocol, closing with 408 a connection whose request head takes over `seconds`.

    uvicorn times out idle keep-alive connections but not a request head sent byte by byte
    (slow-loris); this timer covers that, from the connection's start and after each response.
    """
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class Protocol(HttpToolsProtocol):
        _head_timer = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(seconds, self._head_timeout)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timeout(self) -> None:
            if not self.transport.is_closing():
                body = b'{"error": "request head not received in time"}'
                self.transport.write(b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
                                     b"connection: close\r\ncontent-length: " + str(len(body)).encode()
                                     + b"\r\n\r\n" + body)
                self.transport.close()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

    return Protocol


def run_server(models: list[ServedModel], options: ServerOptions, batcher=None, poll_wait_seconds: float = 1.0,
               ready=None) -> None:
    """Serve until SIGTERM/SIGINT; `ready(rest_port, grpc_port)` is called once both listen (default: a log line)."""
    missing = [name for name in ("uvicorn", "grpc") if importlib.util.find_spec(name) is None]
    if missing:  # fail before loading models
        raise UserInputError(f"tftk serve needs the serve extra ({', '.join(missing)} missing): "
                             "pip install 'tftk[serve]'")
    manager = ModelManager(models, poll_wait_seconds)
    ready = ready or _log_ready(options)
    metrics = Metrics(lambda: {name: model.versions() for name, model in manager.models.items()})
    if batcher is not None:
        batcher.metrics = metrics
    api = ServingApi(manager, batcher)
    # Ports first, so a port in use fails at once; then the models; then serve.
    listening = _listen(options.host, options.rest_api_port, "REST") if options.rest_api_port else None
    grpc_server = None
    try:
        if options.port:
            from tftk.serving.grpc_api import bind_grpc_server

            grpc_server = bind_grpc_server(api, metrics, options)
        manager.start()
        if grpc_server is not None:
            grpc_server.start()
        if listening is not None:
            _serve_rest(api, metrics, options, ready, listening)
        else:
            ready(0, options.port)
            _wait_for_signal()
    finally:
        if listening is not None:
            listening.close()
        if grpc_server is not None:
            grpc_server.stop(options.grace_seconds).wait()
        if batcher is not None:
            batcher.stop()
        manager.stop()


def _serve_rest(api: ServingApi, metrics: Metrics, options: ServerOptions, ready, listening: socket.socket) -> None:
    import uvicorn

    from tftk.serving.rest import RestApp

    with ThreadPoolExecutor(options.rest_api_num_threads, thread_name_prefix="tftk-rest") as executor:
        app = RestApp(api, metrics, executor, max_body_bytes=options.max_body_bytes, max_queue=options.max_queue,
                      body_timeout=options.request_timeout_seconds)
        config = uvicorn.Config(app, host=options.host, port=options.rest_api_port, lifespan="off", loop=_loop(),
                                http=_header_timeout_protocol(options.request_timeout_seconds), access_log=False,
                                log_level="warning", timeout_graceful_shutdown=int(options.grace_seconds),
                                limit_concurrency=options.max_queue + 64, backlog=2048, proxy_headers=False)
        server = uvicorn.Server(config)
        if ready is not None:
            threading.Thread(target=_announce, args=(server, ready, options), daemon=True).start()
        # uvicorn re-raises the signal that stopped it to the handler it found; make that a no-op so
        # the shutdown continues here (gRPC, batcher, models) and the process exits 0.
        previous = {sig: signal.signal(sig, lambda *_: None) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            server.run(sockets=[listening])
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _listen(host: str, port: int, what: str) -> socket.socket:
    """A listening socket on host:port, or UserInputError naming the address (port in use, bad host)."""
    try:
        address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        listening = socket.socket(address[0], socket.SOCK_STREAM)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(address[4])
        listening.listen(2048)
    except OSError as error:
        raise UserInputError(f"cannot listen for {what} on {host}:{port} ({error.strerror or error})") from None
    return listening


def _loop() -> str:
    """uvloop when installed (the serve extra has it; about twice asyncio's request rate), else asyncio."""
    return "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"


def _log_ready(options: ServerOptions):
    def ready(rest_port: int, grpc_port: int) -> None:
        parts = ([f"REST on http://{options.host}:{rest_port}"] if rest_port else []) + \
                ([f"gRPC on {options.host}:{grpc_port}"] if grpc_port else [])
        _log.info("ready: %s", ", ".join(parts))
    return ready


def _announce(server, ready, options: ServerOptions) -> None:
    """Call `ready` once uvicorn has bound its socket."""
    while not server.started and not server.should_exit:
        threading.Event().wait(0.01)
    if server.started:
        ready(options.rest_api_port, options.port)


def _wait_for_signal() -> None:
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def configure_logging(access_log: str | None) -> None:
    """Server events to stderr; the access log (JSON lines) to `access_log` ('-' for stderr, None: off)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    events = logging.getLogger("tftk.serving")
    events.addHandler(handler)
    events.setLevel(logging.INFO)
    access = logging.getLogger("tftk.serving.access")
    access.propagate = False
    if access_log:
        target = logging.StreamHandler(sys.stderr) if access_log == "-" else logging.FileHandler(access_log)
        target.setFormatter(logging.Formatter("%(message)s"))
        access.addHandler(target)
        access.setLevel(logging.INFO)
    else:
        access.disabled = True
