"""The client side of a session on a cluster: where each variable lives and how to reach it.

`ClusterContext` is the kernel context of a `Session("grpc://host:port")`. Ops run in the calling
process; a variable lives on the task its device names (the session's own task when it names
none), and the ops that update it run on that task. Variables of a server in this process are
used directly; others are read, written and updated over a connection to their task.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any, Callable

import numpy as np

from tftk.framework import cancellation
from tftk.client.executor import KernelContext
from tftk.client.plan import state_name, variable_of
from tftk.distributed import auth, tls, wire
from tftk.distributed.cluster import ClusterSpec, split_address
from tftk.distributed.server import in_process_server, op_key, task_credentials
from tftk.framework import errors
from tftk.framework.device import DeviceSpec
from tftk.framework.ops import Operation

__all__ = ["ClusterContext", "parse_target"]

_CONNECT_TIMEOUT_SECS = 30.0


def parse_target(target: str) -> str:
    """The "host:port" of a "grpc://host:port" session target."""
    scheme, sep, address = target.partition("://")
    if not sep or scheme != "grpc" or split_address(address) is None:
        raise ValueError(f"Session target {target!r} is not understood: use '' for an in-process session "
                         "or 'grpc://host:port' (e.g. server.target) for a task of a cluster")
    return address


class Channel:
    """One connection to a task; requests from several threads take turns."""

    def __init__(self, address: str, timeout_secs: float = _CONNECT_TIMEOUT_SECS):
        self.address = address
        self._lock = threading.Lock()
        self._registered: set[str] = set()
        self._closed = False
        self._sock = _connect(address, timeout_secs)

    def call(self, method: str, arrays: list = (), **fields: Any) -> tuple[dict, list]:
        with self._lock:
            try:
                try:
                    wire.send_message(self._sock, {"method": method, **fields}, list(arrays))
                    reply, results = wire.recv_message(self._sock)
                except wire.ConnectionClosed as closed:  # the task closed an idle connection before this request
                    if self._closed:
                        raise
                    self._sock.close()
                    try:
                        self._sock = _connect(self.address, 0.0)  # one attempt: a stopped task stays lost
                    except errors.UnavailableError:
                        raise closed from None
                    wire.send_message(self._sock, {"method": method, **fields}, list(arrays))
                    reply, results = wire.recv_message(self._sock)
            except (OSError, ConnectionError) as exc:
                if self._closed:  # our session closed it under a waiting call
                    raise errors.CancelledError(None, None, f"The session closed its connection to task "
                                                f"{self.address} during the call") from None
                raise errors.UnavailableError(None, None, f"Lost the connection to task {self.address}: {exc}") \
                    from None
        if "error" in reply:
            error_class = getattr(errors, reply["error"], errors.InternalError)
            raise error_class(None, None, f"{reply['message']} (on task {self.address})")
        return reply, results

    def register(self, key: str, description: dict) -> None:
        if key not in self._registered:
            self.call("register_op", key=key, op=description)
            self._registered.add(key)

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes a call waiting in another thread
        self._sock.close()


def _credentials() -> tuple[bytes | None, tls.ClusterTLS | None]:
    """The cluster secret and TLS files to connect with: the environment's (TFTK_CLUSTER_SECRET,
    TFTK_CLUSTER_TLS_*), else those of a task this process runs."""
    secret, files = auth.cluster_secret(), tls.cluster_tls()
    if secret is None and files is None:
        return task_credentials()
    return secret, files


def _connect(address: str, timeout_secs: float) -> socket.socket:
    """Connect (over TLS when configured) and answer the task's challenge, retrying the connection
    while the task starts up (as TF1 waits for its workers)."""
    host, port = split_address(address)
    secret, files = _credentials()
    context = files.client_context() if files is not None else None  # bad files fail before connecting
    deadline = time.monotonic() + timeout_secs
    delay = 0.05
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=max(1.0, timeout_secs))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                if context is not None:
                    sock = tls.connect(sock, context, host, address)
                auth.client_handshake(sock, secret, address)
            except errors.OpError:
                sock.close()
                raise
            sock.settimeout(None)
            return sock
        except OSError as exc:
            if time.monotonic() + delay > deadline:
                raise errors.UnavailableError(
                    None, None, f"Cannot reach task {address}: {exc.strerror or exc}. Start its "
                    "tf.train.Server first, or check the address in the ClusterSpec") from None
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


class RemoteBox:
    """A variable living on another task: reading `value` fetches it, assigning sends it."""

    __slots__ = ("name", "_channel")

    def __init__(self, channel: Callable[[], Channel], name: str):
        self.name = name
        self._channel = channel  # the calling thread's connection to the task

    @property
    def value(self) -> np.ndarray | None:
        array = self._channel().call("read", name=self.name)[1][0]
        if array is not None:
            array.flags.writeable = False  # a copy: writing it would not reach the task
        return array

    @value.setter
    def value(self, array: np.ndarray) -> None:
        self._channel().call("write", [array], name=self.name)

    @property
    def initialized(self) -> bool:
        """Asked of the task without transferring the value."""
        return self._channel().call("initialized", name=self.name)[0]["initialized"]


class ClusterContext(KernelContext):
    """Kernel context placing variables (and their updates) on the tasks their devices name."""

    def __init__(self, session: Any, target: str, timeout_secs: float = _CONNECT_TIMEOUT_SECS):
        super().__init__(session)
        self._timeout = timeout_secs
        self._channels: dict[tuple[str, int], Channel] = {}
        self._channels_lock = threading.Lock()
        master = parse_target(target)
        server = in_process_server(master)
        if server is not None:
            definition = server.server_def
            self.cluster, self.job, self.task = definition.cluster, definition.job_name, definition.task_index
        else:
            described = self._channel(master).call("describe")[0]
            self.cluster = ClusterSpec({job: {int(i): a for i, a in tasks.items()} if isinstance(tasks, dict)
                                        else tasks for job, tasks in described["cluster"].items()})
            self.job, self.task = described["job"], described["task"]

    def box(self, variable_op: Operation) -> Any:
        box = self.boxes.get(variable_op)
        if box is None:
            address = self._address_of(variable_op)
            server = in_process_server(address)
            box = server.store.box(state_name(variable_op)) if server is not None \
                else RemoteBox(lambda: self._channel(address), state_name(variable_op))
            self.boxes[variable_op] = box
        return box

    def bind(self, op: Operation, kind: Any, donor: int | None) -> Any:
        """Ops updating state of another process run on its task; all others run here."""
        refs = kind.ref_inputs
        tasks = {self._address_of(variable_of(op.inputs[i])) for i in refs}
        if len(tasks) > 1:
            raise errors.InvalidArgumentError(
                None, op, f"{op.name} ({op.type}) takes state held on several tasks ({', '.join(sorted(tasks))}): "
                "create it on one task (e.g. with tf.colocate_with, or the reader beside its queue)")
        if not tasks or in_process_server(next(iter(tasks))) is not None:
            return super().bind(op, kind, donor)
        return self._remote_kernel(op, refs, tasks.pop())

    def close(self) -> None:
        with self._channels_lock:
            channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            channel.close()

    def _remote_kernel(self, op: Operation, refs: tuple, address: str):
        description = {
            "type": op.type,
            "name": op.name,
            "attrs": {name: _encoded_attr(op, name, value) for name, value in op.attrs.items()},
            "inputs": [{"dtype": t.dtype.name, "shape": t.shape.as_tuple(),
                        "variable": state_name(variable_of(t)) if i in refs else None}
                       for i, t in enumerate(op.inputs)],
            "outputs": [{"dtype": t.dtype.name, "shape": t.shape.as_tuple()} for t in op.outputs],
        }
        key = op_key(description)
        self._channel(address).register(key, description)
        n_outputs = len(op.outputs)

        def kernel(*inputs: np.ndarray) -> Any:
            channel = self._channel(address)  # this thread's connection: a waiting op blocks no other thread
            channel.register(key, description)
            started = time.monotonic()
            while True:
                reply, outputs = channel.call("run_op", list(inputs), key=key)
                if not reply.get("retry"):
                    break
                cancellation.raise_if_cancelled(op, self, started)
            if n_outputs == 0:
                return None
            return outputs[0] if n_outputs == 1 else tuple(outputs)
        return kernel

    def _address_of(self, variable_op: Operation) -> str:
        spec = DeviceSpec.from_string(variable_op.device or "")
        job = spec.job if spec.job is not None else self.job
        task = spec.task if spec.task is not None else (self.task if job == self.job else 0)
        if job not in self.cluster.jobs:
            raise errors.InvalidArgumentError(
                None, variable_op, f"Cannot place {variable_op.name} on {variable_op.device}: the cluster has "
                f"no job {job!r} (jobs: {', '.join(self.cluster.jobs)})")
        try:
            return self.cluster.task_address(job, task)
        except ValueError as exc:
            raise errors.InvalidArgumentError(None, variable_op, f"Cannot place {variable_op.name} on "
                                              f"{variable_op.device}: {exc}") from None

    def _channel(self, address: str) -> Channel:
        """This thread's connection to `address` (one per thread, so blocking calls do not queue)."""
        key = (address, threading.get_ident())
        channel = self._channels.get(key)
        if channel is None:
            if self.closed.is_set():
                raise errors.CancelledError(None, None, f"The session is closed: no new connection to {address}")
            channel = Channel(address, self._timeout)  # connects (maybe retrying) outside the lock
            with self._channels_lock:
                self._channels[key] = channel
        return channel


def _encoded_attr(op: Operation, name: str, value: Any) -> Any:
    try:
        return wire.encode_attr(value)
    except TypeError as exc:
        raise errors.UnimplementedError(None, op, f"{op.name} ({op.type}) cannot run on another task: {exc}") \
            from None
