"""TLS for the task protocol: connections between tasks encrypted, and both ends proving who they are.

Every task gets a certificate and key signed by the cluster's CA (mutual TLS): a task accepts only
peers presenting a certificate that CA signed, and a session accepts only a task whose certificate
that CA signed for the host name the ClusterSpec gives it. A task with TLS answers a plaintext peer
with one error and closes. The files come from `tf.train.Server(..., tls_cert=, tls_key=, tls_ca=)`
or from the environment (TFTK_CLUSTER_TLS_CERT, TFTK_CLUSTER_TLS_KEY, TFTK_CLUSTER_TLS_CA), which
`grpc://` sessions read too. TLS and the shared secret (`tftk.distributed.auth`) combine: the
challenge then runs inside the encrypted connection.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import ssl
from dataclasses import dataclass

from tftk.distributed import wire
from tftk.framework import errors

__all__ = ["ClusterTLS", "TLS_VARIABLES", "cluster_tls", "accept", "connect", "refusal_message"]

TLS_VARIABLES = {"cert": "TFTK_CLUSTER_TLS_CERT", "key": "TFTK_CLUSTER_TLS_KEY", "ca": "TFTK_CLUSTER_TLS_CA"}
_TLS_RECORD_HANDSHAKE = 0x16  # the first byte of a TLS ClientHello; the plain protocol starts with a length
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ClusterTLS:
    """A task's certificate chain and private key (PEM files) and the cluster CA's certificate(s)."""

    cert: str
    key: str
    ca: str

    def server_context(self) -> ssl.SSLContext:
        """The context a task accepts connections with: its own certificate, peers' checked against the CA."""
        context = self._context(ssl.PROTOCOL_TLS_SERVER)
        context.verify_mode = ssl.CERT_REQUIRED
        return context

    def client_context(self) -> ssl.SSLContext:
        """The context a session connects with (cached per set of files and their modification times)."""
        return _client_context(self, *(_modified(path) for path in (self.cert, self.key, self.ca)))

    def _context(self, protocol: int) -> ssl.SSLContext:
        for what, path in (("cert", self.cert), ("key", self.key), ("ca", self.ca)):
            if not os.path.isfile(path):
                raise ValueError(f"TLS {_NAMES[what]} {path!r} ({TLS_VARIABLES[what]}): no such file")
        context = ssl.SSLContext(protocol)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            context.load_cert_chain(self.cert, self.key)
        except ssl.SSLError as exc:
            raise ValueError(f"TLS certificate {self.cert!r} and key {self.key!r} are not a PEM certificate and "
                             f"its private key ({_reason(exc)})") from None
        try:
            context.load_verify_locations(cafile=self.ca)
        except ssl.SSLError as exc:
            raise ValueError(f"TLS CA file {self.ca!r} ({TLS_VARIABLES['ca']}) holds no PEM certificate "
                             f"({_reason(exc)})") from None
        return context


_NAMES = {"cert": "certificate", "key": "private key", "ca": "CA file"}


def cluster_tls(cert: str | None = None, key: str | None = None, ca: str | None = None) -> ClusterTLS | None:
    """The given files, else the environment's TFTK_CLUSTER_TLS_*; None when none is set (no TLS).

    ValueError when only some are given: TLS needs all three.
    """
    given = {"cert": cert, "key": key, "ca": ca}
    if not any(given.values()):
        given = {what: os.environ.get(variable) or None for what, variable in TLS_VARIABLES.items()}
    missing = [what for what, value in given.items() if not value]
    if len(missing) == 3:
        return None
    if missing:
        raise ValueError("TLS needs a certificate, its key and the cluster CA: "
                         + ", ".join(f"{_NAMES[what]} (tls_{what}= or {TLS_VARIABLES[what]})" for what in missing)
                         + " missing")
    return ClusterTLS(**{what: os.fspath(value) for what, value in given.items()})


def accept(sock: socket.socket, context: ssl.SSLContext, peer: str) -> ssl.SSLSocket | None:
    """The task's side of a new connection: the TLS handshake, or None (peer told why, if plaintext) to close.

    `sock` has the handshake timeout set. A peer speaking the plain protocol gets one error message.
    """
    first = sock.recv(1, socket.MSG_PEEK)
    if not first:
        return None
    if first[0] != _TLS_RECORD_HANDSHAKE:
        wire.recv_message(sock)  # its hello, read whole so the reply is not lost to a reset
        wire.send_message(sock, {"error": "UnauthenticatedError", "message": "this task requires TLS: set "
                                 + ", ".join(TLS_VARIABLES.values()) + " for the session"})
        return None
    secure = context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
    try:
        secure.do_handshake()
    except (ssl.SSLError, OSError) as exc:
        _log.warning("refused a TLS connection from %s: %s", peer, _reason(exc))
        secure.close()
        return None
    return secure


def connect(sock: socket.socket, context: ssl.SSLContext, host: str, address: str) -> ssl.SSLSocket:
    """The session's side: the TLS handshake with task `address`, checking its certificate names `host`."""
    try:
        return context.wrap_socket(sock, server_hostname=host)
    except ssl.SSLCertVerificationError as exc:
        sock.close()
        raise errors.UnauthenticatedError(
            None, None, f"Task {address} presented a certificate the cluster CA does not vouch for "
            f"({exc.verify_message}): sign it with the CA in {TLS_VARIABLES['ca']}, for the host name {host}") \
            from None
    except (ssl.SSLError, OSError) as exc:
        sock.close()
        raise errors.UnavailableError(
            None, None, f"TLS handshake with task {address} failed ({_reason(exc)}): is the task started with "
            "TLS (tls_cert/tls_key/tls_ca or TFTK_CLUSTER_TLS_*)?") from None


def refusal_message(exc: OSError, address: str) -> str:
    """What to tell the user when a task ends the connection right after the TLS handshake: with TLS 1.3
    that is how it rejects our certificate (its alert may be lost to the reset of the closed socket)."""
    return (f"Task {address} closed the TLS connection ({_reason(exc)}): it accepts only certificates signed "
            f"by its cluster CA; check this process's {TLS_VARIABLES['cert']} and {TLS_VARIABLES['ca']}")


def _reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    if isinstance(exc, ssl.SSLError) and reason:
        return reason.lower().replace("_", " ")
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _modified(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


@functools.lru_cache(maxsize=8)
def _client_context(tls: ClusterTLS, *stamps: int) -> ssl.SSLContext:
    """PROTOCOL_TLS_CLIENT verifies the task's certificate and its host name; `stamps` renew the cache."""
    return tls._context(ssl.PROTOCOL_TLS_CLIENT)
