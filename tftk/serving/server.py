"""The `tftk serve` process: model manager, REST (tftk.serving.http) and gRPC servers, graceful shutdown.

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
    stage_times: bool = False  # count CPU time by request stage in /metrics (tftk.serving.stage_times)
    scheduler_slice_micros: int = 100  # the REST loop's and batch threads' slice (tftk.serving.scheduling); 0: default


def run_server(models: list[ServedModel], options: ServerOptions, batcher=None, poll_wait_seconds: float = 1.0,
               ready=None) -> None:
    """Serve until SIGTERM/SIGINT; `ready(rest_port, grpc_port)` is called once both listen (default: a log line)."""
    missing = [name for name in ("httptools", "grpc") if importlib.util.find_spec(name) is None]
    if missing:  # fail before loading models
        raise UserInputError(f"tftk serve needs the serve extra ({', '.join(missing)} missing): "
                             "pip install 'tftk[serve]'")
    if options.stage_times:
        from tftk.serving import stage_times

        stage_times.enable()
    manager = ModelManager(models, poll_wait_seconds, freeze=True)
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
        _shorten_slices(options, batcher)  # once the ports are ours, before the threads that inherit it start
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


def _shorten_slices(options: ServerOptions, batcher) -> None:
    """A short scheduler slice for the threads requests wait on: this one (it runs the REST event loop) and the
    batch threads. Threads this one starts later (gRPC's, the executor's, the poll thread) inherit it."""
    from tftk.serving.scheduling import request_slice

    if options.scheduler_slice_micros <= 0:
        return
    threads = [threading.get_native_id()] + (batcher.thread_ids if batcher is not None else [])
    if request_slice(threads, options.scheduler_slice_micros):
        _log.info("scheduler slice of the event loop and batch threads: %d us", options.scheduler_slice_micros)
    else:
        _log.info("scheduler slice unchanged (this system cannot set one per thread)")


def _serve_rest(api: ServingApi, metrics: Metrics, options: ServerOptions, ready, listening: socket.socket) -> None:
    """The REST API on an event loop (uvloop when installed) in this thread, until SIGTERM or SIGINT."""
    import asyncio

    from tftk.serving.http import HttpLimits, serve_http
    from tftk.serving.rest import RestApp

    loop = _new_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    limits = HttpLimits(options.max_body_bytes, options.request_timeout_seconds, options.max_queue,
                        max_connections=options.max_queue + 64)
    batcher = api.batcher
    on_round = (lambda: batcher.hold_for_round(loop)) if batcher is not None else (lambda: None)
    try:
        with ThreadPoolExecutor(options.rest_api_num_threads, thread_name_prefix="tftk-rest") as executor:
            app = RestApp(api, metrics, executor)
            loop.call_soon(ready, options.rest_api_port, options.port)
            loop.run_until_complete(serve_http(listening, app, limits, stop, options.grace_seconds, on_round,
                                               lambda reason: metrics.rejected("rest", reason)))
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        loop.close()


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


def _new_loop():
    """A uvloop event loop when installed (the serve extra has it; about twice asyncio's request rate),
    else asyncio's."""
    import asyncio

    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _log_ready(options: ServerOptions):
    def ready(rest_port: int, grpc_port: int) -> None:
        parts = ([f"REST on http://{options.host}:{rest_port}"] if rest_port else []) + \
                ([f"gRPC on {options.host}:{grpc_port}"] if grpc_port else [])
        _log.info("ready: %s", ", ".join(parts))
    return ready


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
    else:  # a level, not `disabled`: logging.config.dictConfig (as other libraries call it) re-enables loggers
        access.setLevel(logging.CRITICAL + 1)
