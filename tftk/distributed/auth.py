"""Who may talk to a task: a shared-secret HMAC challenge when a connection opens.

The client says hello, the server answers with a random challenge, the client proves it knows the
secret with HMAC-SHA256(secret, challenge). Anything else first (a malformed message, a request
without hello) gets the connection closed without a reply.
A task started with a secret (the `TFTK_CLUSTER_SECRET` environment variable, or `Server(secret=...)`)
closes any connection that cannot answer, before reading a single request; sessions take the secret
from the same variable. The secret never travels, and a recorded answer is useless for the next
connection's challenge. It authenticates, it does not encrypt: on an untrusted network, also give the
tasks TLS (`tftk.distributed.tls`), inside which the challenge then runs.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import socket
import ssl

from tftk.distributed import tls, wire
from tftk.framework import errors

__all__ = ["SECRET_VARIABLE", "cluster_secret", "serve_handshake", "client_handshake"]

SECRET_VARIABLE = "TFTK_CLUSTER_SECRET"
HANDSHAKE_TIMEOUT_SECS = 10.0  # a connection that does not answer the challenge in time is closed


def cluster_secret(secret: str | bytes | None = None) -> bytes | None:
    """The given secret, else the environment's TFTK_CLUSTER_SECRET, else None (no authentication)."""
    value = secret if secret is not None else os.environ.get(SECRET_VARIABLE) or None
    return value.encode() if isinstance(value, str) else value


def _proof(secret: bytes, challenge: str) -> str:
    return hmac.new(secret, bytes.fromhex(challenge), hashlib.sha256).hexdigest()


def serve_handshake(sock: socket.socket, secret: bytes | None) -> bool:
    """The server's side: challenge, check the answer; False (after telling the peer why) to close."""
    hello, _ = wire.recv_message(sock)
    if hello.get("method") != "hello":
        return False
    challenge = secrets.token_hex(32)
    wire.send_message(sock, {"hello": "tftk-task", "challenge": challenge, "auth": secret is not None})
    answer, _ = wire.recv_message(sock)
    if secret is not None:
        proof = answer.get("proof")
        if not isinstance(proof, str) or not hmac.compare_digest(proof, _proof(secret, challenge)):
            reason = ("this task requires the cluster secret: set " + SECRET_VARIABLE) if proof is None \
                else "wrong cluster secret"
            wire.send_message(sock, {"error": "UnauthenticatedError", "message": reason})
            return False
    wire.send_message(sock, {"welcome": True})
    return True


def client_handshake(sock: socket.socket, secret: bytes | None, address: str) -> None:
    """The client's side: answer the task's challenge; UnauthenticatedError if it refuses us."""
    try:
        wire.send_message(sock, {"method": "hello"})
        hello, _ = wire.recv_message(sock)
        if "error" in hello:  # e.g. a task with TLS answering a plaintext hello
            raise errors.UnauthenticatedError(None, None,
                                              f"Task {address} refused the connection: {hello.get('message')}")
        challenge = hello.get("challenge")
        if hello.get("hello") != "tftk-task" or not isinstance(challenge, str):
            raise errors.UnavailableError(None, None, f"{address} is not a tftk task (unexpected greeting)")
        wire.send_message(sock, {"proof": None if secret is None else _proof(secret, challenge)})
        reply, _ = wire.recv_message(sock)
    except (OSError, ValueError) as exc:
        if isinstance(sock, ssl.SSLSocket) and isinstance(exc, OSError) and not isinstance(exc, TimeoutError):
            # with TLS 1.3 a task rejects our certificate after the handshake: its alert or close arrives here
            raise errors.UnauthenticatedError(None, None, tls.refusal_message(exc, address)) from None
        raise errors.UnavailableError(None, None, f"Handshake with task {address} failed: {exc}") from None
    if "error" in reply:
        raise errors.UnauthenticatedError(None, None, f"Task {address} refused the connection: {reply['message']}")
