"""The task protocol under hostile input (issue 14 item 8): memory only as data arrives, malformed messages
answered or closed without a traceback, a connection cap, an idle timeout, and shared-secret authentication."""

from __future__ import annotations

import json
import socket
import struct
import time

import pytest

import tftk as tf
from tftk.distributed import auth, remote, wire
from tftk.distributed.remote import Channel
from tftk.distributed.server import Server


@pytest.fixture
def make_server():
    started = []

    def make(**options):
        server = Server({"local": ["localhost:0"]}, "local", 0, **options)
        started.append(server)
        return server, server.target[len("grpc://"):]

    yield make
    for server in started:
        server.stop()


def _raw(address: str, secret: bytes | None = None) -> socket.socket:
    """A connection that passed the handshake, for sending hand-made bytes."""
    host, port = address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=5)
    auth.client_handshake(sock, secret, address)
    return sock


def _rss() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))


def test_a_huge_announced_array_costs_nothing_until_its_data_arrives(make_server):
    _, address = make_server()
    before = _rss()
    connections = []
    for _ in range(3):
        sock = _raw(address)
        head = json.dumps({"method": "write", "name": "v", "arrays": [{"dtype": "<f4", "shape": [1 << 28]}]}).encode()
        sock.sendall(struct.pack("<Q", len(head)) + head + b"\0" * 1000)  # 1 GiB announced, 1000 bytes sent
        connections.append(sock)
    time.sleep(0.5)
    assert _rss() - before < 50 << 20
    for sock in connections:
        sock.close()


@pytest.mark.parametrize("head", [b"42", b"[" * 100_000 + b"]" * 100_000, b'{"arrays": 3}', b"\xff\xfe",
                                  b'{"method": "read", "arrays": [{"dtype": "O", "shape": [1]}]}',
                                  b'{"method": "read", "arrays": [{"bytes": ["zz"], "shape": [1]}]}'],
                         ids=["number", "deep-nesting", "arrays-not-a-list", "not-utf8", "object-dtype", "bad-hex"])
def test_a_malformed_message_is_answered_then_closed_without_traceback(make_server, capfd, head):
    _, address = make_server()
    with _raw(address) as sock:
        sock.sendall(struct.pack("<Q", len(head)) + head)
        reply, _ = wire.recv_message(sock)
        assert reply["error"] == "InvalidArgumentError"
        assert sock.recv(1) == b""
    assert Channel(address).call("describe")[0]["task"] == 0  # the server still serves others
    assert "Traceback" not in capfd.readouterr().err


def test_connections_beyond_the_cap_are_refused(make_server):
    _, address = make_server(max_connections=2)
    kept = [_raw(address), _raw(address)]
    with pytest.raises(tf.errors.UnavailableError, match="Handshake with task"):
        _raw(address)
    kept[0].close()
    time.sleep(0.2)
    _raw(address).close()  # a slot came free
    kept[1].close()


def test_an_idle_connection_is_closed_and_a_session_reconnects(make_server):
    server, address = make_server(idle_timeout=0.3)
    with server_variable(server) as (sess, v):
        assert sess.run(v) == 3.0
        time.sleep(0.8)  # the task closed the session's idle connection
        assert sess.run(v) == 3.0
    sock = _raw(address)
    time.sleep(0.8)
    assert sock.recv(1) == b""


class server_variable:
    """A session on `server` holding a variable v = 3 placed on it."""

    def __init__(self, server):
        self.server = server

    def __enter__(self):
        self.graph = tf.Graph()
        with self.graph.as_default():
            v = tf.Variable(3.0, name="v")
            init = tf.global_variables_initializer()
        self.sess = tf.Session(self.server.target, graph=self.graph)
        self.sess.run(init)
        return self.sess, v

    def __exit__(self, *exc):
        self.sess.close()


def test_a_task_with_a_secret_refuses_whoever_cannot_prove_it(make_server, monkeypatch):
    server, address = make_server(secret="s3cret")
    monkeypatch.delenv(auth.SECRET_VARIABLE, raising=False)
    monkeypatch.setattr(remote, "task_credentials", lambda: (None, None))  # sessions of another process
    with pytest.raises(tf.errors.UnauthenticatedError, match="requires the cluster secret: set TFTK_CLUSTER_SECRET"):
        Channel(address)
    monkeypatch.setenv(auth.SECRET_VARIABLE, "guess")
    with pytest.raises(tf.errors.UnauthenticatedError, match="wrong cluster secret"):
        Channel(address)
    monkeypatch.setenv(auth.SECRET_VARIABLE, "s3cret")
    with server_variable(server) as (sess, v):  # grpc:// sessions take the secret from the environment
        assert sess.run(v) == 3.0


def test_a_proof_answers_one_challenge_only():
    proof = auth._proof(b"s3cret", "00" * 32)
    assert proof != auth._proof(b"s3cret", "01" * 32) and proof != auth._proof(b"other", "00" * 32)
    assert len(bytes.fromhex(proof)) == 32
