"""`tf.train.Server`: one task of a cluster, holding the variables placed on it and serving them.

A server listens on its task's port. Sessions of any process in the cluster read and write the
variables placed on this task through it, and run here the ops that update them (Assign,
ApplyAdam, ...), so updates from several workers land on one copy, as on TF1's parameter
servers. Variables outlive sessions: they live as long as the server.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import socketserver
import threading
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from tftk.framework import cancellation
from tftk.client.executor import KernelContext, VariableBox
from tftk.distributed import auth, tls, wire
from tftk.distributed.cluster import ClusterSpec, split_address
from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import Graph, Operation
from tftk.framework.tensor_shape import TensorShape

__all__ = ["Server", "ServerDef", "in_process_server", "op_key", "task_credentials"]

_LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
_WAIT_BUDGET_SECS = 0.5  # how long a dequeue or take_grad waits per request before the client re-asks
_in_process: dict[str, "Server"] = {}  # "host:port" of each running server of this process


def _served(op_type: str) -> bool:
    """Whether a task runs `op_type` for other processes: updates of the state it holds (declared
    `remote` where the op is registered), nothing that reads files or runs arbitrary computation."""
    try:
        return registry.lookup(op_type).remote
    except KeyError:
        return False


def in_process_server(address: str) -> "Server | None":
    """The running server of this process at `address` ("host:port"), if any."""
    return _in_process.get(address)


def task_credentials() -> "tuple[bytes | None, tls.ClusterTLS | None]":
    """The secret and TLS files of a server running in this process (its sessions connect as that task)."""
    for server in list(_in_process.values()):
        if server._secret is not None or server.tls is not None:
            return server._secret, server.tls
    return None, None


def op_key(description: dict) -> str:
    """A stable name for an op description, so each task builds a given op once."""
    return hashlib.sha1(json.dumps(description, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class ServerDef:
    """What a server was started with (TF1's ServerDef fields)."""

    cluster: ClusterSpec
    job_name: str
    task_index: int
    protocol: str = "grpc"


class VariableStore:
    """The variables placed on one task, by name, each with a lock for its updates."""

    def __init__(self):
        self._boxes: dict[str, VariableBox] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def box(self, name: str) -> VariableBox:
        with self._guard:
            if name not in self._boxes:
                self._boxes[name] = VariableBox(name)
                self._locks[name] = threading.Lock()
            return self._boxes[name]

    @contextlib.contextmanager
    def locked(self, names: list[str]) -> Iterator[None]:
        """Hold the locks of `names` (in sorted order, so two updates cannot deadlock)."""
        for name in names:
            self.box(name)
        locks = [self._locks[n] for n in sorted(set(names))]
        for lock in locks:
            lock.acquire()
        try:
            yield
        finally:
            for lock in reversed(locks):
                lock.release()


class _StoreContext(KernelContext):
    """Kernel context of ops run on this task: variable boxes come from the store by name."""

    def __init__(self, store: VariableStore):
        super().__init__(None)
        self._store = store

    def box(self, variable_op: Operation) -> VariableBox:
        return self._store.box(variable_op.get_attr("shared_name"))


class _RemoteOps:
    """Ops other tasks asked this task to run, rebuilt in a private graph and bound once."""

    def __init__(self, store: VariableStore):
        self._store = store
        self._context = _StoreContext(store)
        self._graph = Graph()
        self._bound: dict[str, tuple[Any, list[str], bool]] = {}  # kernel, state names, blocking
        self._lock = threading.Lock()

    def register(self, key: str, description: dict) -> None:
        with self._lock:
            if key in self._bound:
                return
            op_type = description["type"]
            if not _served(op_type):
                raise errors.PermissionDeniedError(
                    None, None, f"{op_type} ({description['name']}) does not run on a task for other processes: "
                    "tasks only update the variables, queues and accumulators they hold. Place the op on the "
                    "task that runs it (e.g. the worker).")
            op = self._build(description)
            kind = registry.lookup(op_type)
            self._bound[key] = (kind.kernel(op, self._context),
                                [s["variable"] for s in description["inputs"] if s["variable"]], kind.blocking)

    def run(self, key: str, inputs: list[np.ndarray]) -> list[np.ndarray | None]:
        if key not in self._bound:
            raise errors.NotFoundError(None, None, f"Op {key} was not registered with this task")
        kernel, variables, blocking = self._bound[key]
        with contextlib.ExitStack() as stack:
            if blocking:  # waits for other requests: never under the variables' locks, and bounded
                stack.enter_context(cancellation.serving_budget(_WAIT_BUDGET_SECS))
            else:
                stack.enter_context(self._store.locked(variables))
            result = kernel(*inputs)
            outputs = list(result) if isinstance(result, tuple) else [result]
            return [None if r is None else np.array(r) for r in outputs]  # copies, under the lock

    def _build(self, description: dict) -> Operation:
        graph = self._graph
        inputs = []
        for spec in description["inputs"]:
            dtype, shape = dtypes.as_dtype(spec["dtype"]), TensorShape(spec["shape"])
            if spec["variable"]:
                attrs = {"shape": shape, "dtype": dtype, "shared_name": spec["variable"]}
                producer = graph.create_op("VariableV2", [], [(dtype, shape)], "variable", attrs)
            else:
                producer = graph.create_op("Placeholder", [], [(dtype, shape)], "input",
                                           {"dtype": dtype, "shape": shape})
            inputs.append(producer.outputs[0])
        outputs = [(dtypes.as_dtype(o["dtype"]), TensorShape(o["shape"])) for o in description["outputs"]]
        attrs = {name: wire.decode_attr(value) for name, value in description["attrs"].items()}
        # the client's name (made unique here), so errors name the op the user built
        return graph.create_op(description["type"], inputs, outputs, description["name"], attrs)


class _Handler(socketserver.BaseRequestHandler):
    """One connection from another task: the handshake, then requests answered in order until it closes.

    A malformed message is answered with one error reply and the connection closed (the stream can
    no longer be trusted); a connection idle for longer than the server's idle timeout is closed
    (sessions reconnect on their next request).
    """

    def handle(self) -> None:
        server: Server = self.server.owner  # type: ignore[attr-defined]
        connection = self.request
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection.settimeout(auth.HANDSHAKE_TIMEOUT_SECS)
        try:
            if server._tls_context is not None:
                connection = tls.accept(connection, server._tls_context, f"{self.client_address[0]}")
                if connection is None:
                    return
                self.server.track(self.request, connection)
            if auth.serve_handshake(connection, server._secret):
                connection.settimeout(server.idle_timeout)
                self._serve(server, connection)
        except (OSError, ValueError):
            return
        finally:
            if connection is not None and connection is not self.request:
                self.server.track(connection, None)
                connection.close()

    def _serve(self, server: "Server", connection: socket.socket) -> None:
        """Answer requests in order until the peer closes, idles too long or sends a malformed message."""
        while True:
            try:
                header, arrays = wire.recv_message(connection)
            except wire.MalformedMessage as exc:
                with contextlib.suppress(OSError):
                    wire.send_message(connection, {"error": "InvalidArgumentError", "message": str(exc)})
                return
            except (ConnectionError, OSError, MemoryError):  # closed, idle too long, or out of memory
                return
            try:
                reply, results = server._answer(header, arrays)
            except cancellation.RetryLater:  # a wait ran out of budget: the client asks again
                reply, results = {"retry": True}, []
            except errors.OpError as exc:
                reply, results = {"error": type(exc).__name__, "message": exc.message}, []
            except Exception as exc:  # a bug or bad request: report it instead of dropping the peer
                reply, results = {"error": "InternalError", "message": f"{type(exc).__name__}: {exc}"}, []
            try:
                wire.send_message(connection, reply, results)
            except TypeError as exc:  # a value that cannot travel (e.g. a queue's state object)
                wire.send_message(connection, {"error": "InvalidArgumentError", "message": str(exc)}, [])
            except OSError:
                return


class _TCPServer(socketserver.ThreadingTCPServer):
    """Threaded server that remembers its open connections, so stopping it ends them too, and refuses
    connections beyond `max_connections` (each costs a thread)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple, handler: type, max_connections: int):
        super().__init__(address, handler)
        self.connections: set[socket.socket] = set()
        self.max_connections = max_connections

    def verify_request(self, request: Any, client_address: Any) -> bool:
        return len(self.connections) < self.max_connections

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        self.connections.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.discard(request)

    def track(self, old: socket.socket, new: socket.socket | None) -> None:
        """Count `new` (a TLS connection wrapping `old`) as the open connection instead of `old`."""
        if new is not None:
            self.connections.add(new)
        self.connections.discard(old)

    def close_connections(self) -> None:
        for connection in list(self.connections):
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class Server:
    """An in-process server for one task of a cluster (TF1's `tf.train.Server`).

    Args:
      server_or_cluster_def: a ClusterSpec, its dict, or a ServerDef.
      job_name, task_index: this task; optional when the cluster has a single job / task.
      protocol: "grpc" (the only one; the name is kept for TF1 programs).
      config: accepted for TF1 programs; sessions take their own ConfigProto.
      start: listen right away.
      secret: the cluster's shared secret (default: the TFTK_CLUSTER_SECRET environment variable);
        with one, only processes that know it may connect (see `tftk.distributed.auth`).
      tls_cert, tls_key, tls_ca: PEM files of this task's certificate, its key and the cluster CA
        (default: the TFTK_CLUSTER_TLS_CERT/_KEY/_CA environment variables); with them, connections
        are TLS, and peers must present a certificate the CA signed (see `tftk.distributed.tls`).
      max_connections, idle_timeout: open connections beyond the cap are refused; one idle for
        `idle_timeout` seconds is closed (defaults 256 and 600).
    A port of 0 in this task's address picks a free port; `target` and `server_def` show it.
    """

    def __init__(self, server_or_cluster_def: Any, job_name: str | None = None, task_index: int | None = None,
                 protocol: str | None = None, config: Any = None, start: bool = True, *,
                 secret: str | bytes | None = None, tls_cert: str | None = None, tls_key: str | None = None,
                 tls_ca: str | None = None, max_connections: int = 256, idle_timeout: float = 600.0):
        if isinstance(server_or_cluster_def, ServerDef):
            definition = server_or_cluster_def
            cluster, job_name, task_index = definition.cluster, definition.job_name, definition.task_index
        else:
            cluster = ClusterSpec(server_or_cluster_def)
        if protocol not in (None, "grpc"):
            raise ValueError(f"Unknown protocol {protocol!r}: tftk servers speak 'grpc' only")
        job_name = _only(cluster.jobs, "job_name", "jobs") if job_name is None else job_name
        if job_name not in cluster.jobs:
            raise ValueError(f"Job {job_name!r} is not in the cluster (jobs: {', '.join(cluster.jobs)}); "
                             "pass one of those as job_name")
        task_index = _only(cluster.task_indices(job_name), "task_index", f"tasks of job {job_name!r}") \
            if task_index is None else task_index
        self._address = cluster.task_address(job_name, task_index)
        self._job, self._task, self._cluster = job_name, task_index, cluster
        self._secret = auth.cluster_secret(secret)
        self.tls = tls.cluster_tls(tls_cert, tls_key, tls_ca)
        self._tls_context = self.tls.server_context() if self.tls is not None else None  # bad files fail here
        self.max_connections, self.idle_timeout = max_connections, idle_timeout
        self.store = VariableStore()
        self._ops = _RemoteOps(self.store)
        self._tcp: _TCPServer | None = None
        self._thread: threading.Thread | None = None
        if start:
            self.start()

    @staticmethod
    def create_local_server(config: Any = None, start: bool = True) -> "Server":
        """A single-task server on a free localhost port (job "local")."""
        return Server({"local": ["localhost:0"]}, "local", 0, config=config, start=start)

    @property
    def target(self) -> str:
        """The session target for this server: `tf.Session(server.target)`."""
        return f"grpc://{self._address}"

    @property
    def server_def(self) -> ServerDef:
        return ServerDef(self._cluster, self._job, self._task)

    def start(self) -> None:
        """Listen on this task's port (idempotent)."""
        if self._tcp is not None:
            return
        host, port = split_address(self._address)
        bind_host = host if host in _LOOPBACK_HOSTS else ""  # TF1 listens on all interfaces
        try:
            self._tcp = _TCPServer((bind_host, port), _Handler, self.max_connections)
        except OSError as exc:
            raise errors.UnavailableError(
                None, None, f"Task /job:{self._job}/task:{self._task} cannot listen on {self._address}: "
                f"{exc.strerror or exc}. Is another server using the port?") from None
        self._tcp.owner = self  # type: ignore[attr-defined]
        if port == 0:
            self._address = f"{host}:{self._tcp.server_address[1]}"
            self._cluster = self._cluster.with_task_address(self._job, self._task, self._address)
        self._thread = threading.Thread(target=self._tcp.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"tftk-server-{self._address}", daemon=True)
        self._thread.start()
        _in_process[self._address] = self

    def join(self) -> None:
        """Block until the server stops (a ps task's main loop)."""
        if self._thread is not None:
            self._thread.join()

    def stop(self) -> None:
        """Stop listening and end open connections (tftk addition; TF1 servers never stop). The
        state it held stays with this object; a new Server on the port starts empty."""
        if self._tcp is None:
            return
        _in_process.pop(self._address, None)
        self._tcp.shutdown()
        self._tcp.server_close()
        self._tcp.close_connections()
        self._tcp = None

    def _answer(self, header: dict, arrays: list) -> tuple[dict, list]:
        method = header.get("method")
        if method == "describe":
            return {"cluster": self._cluster.as_dict(), "job": self._job, "task": self._task}, []
        if method == "read":
            with self.store.locked([header["name"]]):  # a copy, so no update tears what is sent
                value = self.store.box(header["name"]).value
                return {}, [None if value is None else np.array(value)]
        if method == "initialized":
            return {"initialized": self.store.box(header["name"]).initialized}, []
        if method == "write":
            box = self.store.box(header["name"])
            with self.store.locked([header["name"]]):
                box.value = np.array(arrays[0])
            return {}, []
        if method == "register_op":
            self._ops.register(header["key"], header["op"])
            return {}, []
        if method == "run_op":
            return {}, self._ops.run(header["key"], arrays)
        raise errors.InvalidArgumentError(None, None, f"Unknown request {method!r}")

    def __repr__(self) -> str:
        return f"<tftk Server /job:{self._job}/task:{self._task} at {self._address}>"


def _only(choices: list, what: str, among: str) -> Any:
    if len(choices) != 1:
        raise ValueError(f"Pass {what}: the cluster has several {among} ({', '.join(map(str, choices))})")
    return choices[0]
