"""TLS between tasks (issue 14 item 8): mutual certificates from one CA, plaintext peers refused, and one clear
line for a bad file or a peer another CA signed. The certificates are made here with the openssl CLI."""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tftk as tf
from tftk.distributed import auth, remote, tls
from tftk.distributed.remote import Channel
from tftk.distributed.server import Server

from tests.distributed.conftest import free_port

_TASK_NAMES = "subjectAltName=DNS:localhost,IP:127.0.0.1"


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _make_ca(folder: Path, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={name}", cwd=folder)


def _make_cert(folder: Path, name: str, ca: str, names: str = _TASK_NAMES) -> None:
    """`name`.pem / `name`.key: a certificate `ca` signed, for server and client use, valid for `names`."""
    (folder / f"{name}.ext").write_text(f"{names}\nbasicConstraints=CA:FALSE\n"
                                        "extendedKeyUsage=serverAuth,clientAuth\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", f"{name}.key",
             "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=folder)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
             "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext", cwd=folder)


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Path:
    """A cluster CA with task certificates for localhost, a second CA with its own, and oddities."""
    if shutil.which("openssl") is None:
        pytest.skip("the TLS tests make their certificates with the openssl command, which is not installed")
    folder = tmp_path_factory.mktemp("pki")
    _make_ca(folder, "ca")
    _make_ca(folder, "other-ca")
    _make_cert(folder, "task", "ca")
    _make_cert(folder, "worker", "ca")
    _make_cert(folder, "stranger", "other-ca")
    _make_cert(folder, "elsewhere", "ca", names="subjectAltName=DNS:ps0.example.org")
    (folder / "garbage.pem").write_text("not a certificate\n")
    return folder


def _files(pki: Path, cert: str, ca: str = "ca") -> dict[str, str]:
    return {"tls_cert": str(pki / f"{cert}.pem"), "tls_key": str(pki / f"{cert}.key"), "tls_ca": str(pki / f"{ca}.pem")}


def _use(monkeypatch, files: dict[str, str] | None) -> None:
    """Set (or clear) the session side's TFTK_CLUSTER_TLS_* variables."""
    for what, variable in tls.TLS_VARIABLES.items():
        if files is None:
            monkeypatch.delenv(variable, raising=False)
        else:
            monkeypatch.setenv(variable, files[f"tls_{what}"])


@pytest.fixture
def task(pki, monkeypatch):
    """A task with TLS on a free localhost port. Sessions here stand for other processes: they use the
    environment only, not the files of the task running in this process."""
    monkeypatch.delenv(auth.SECRET_VARIABLE, raising=False)
    _use(monkeypatch, None)
    monkeypatch.setattr(remote, "task_credentials", lambda: (None, None))
    started = []

    def start(cert: str = "task", **options) -> str:
        server = Server({"local": ["localhost:0"]}, "local", 0, **{**_files(pki, cert), **options})
        started.append(server)
        return server.target[len("grpc://"):]

    yield start
    for server in started:
        server.stop()


def test_a_session_reads_a_variable_over_tls(pki, task, monkeypatch):
    address = task()
    _use(monkeypatch, _files(pki, "worker"))
    channel = Channel(address)
    assert isinstance(channel._sock, ssl.SSLSocket) and channel._sock.version() in ("TLSv1.2", "TLSv1.3")
    assert channel.call("describe")[0]["task"] == 0
    channel.close()
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        with tf.Session("grpc://" + address) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(v.assign_add([0.5, 0.5]))
            assert sess.run(v).tolist() == [1.5, 2.5]


@pytest.mark.parametrize("server_cert, session_cert, session_ca, error, message", [
    ("task", None, None, tf.errors.UnauthenticatedError, "this task requires TLS: set TFTK_CLUSTER_TLS_CERT"),
    (None, "worker", "ca", tf.errors.UnavailableError, r"TLS handshake with task .* failed .*is the task started "
                                                       "with TLS"),
    ("task", "stranger", "ca", tf.errors.UnauthenticatedError, "closed the TLS connection .*: it accepts only "
                                                               "certificates signed by its cluster CA"),
    ("task", "stranger", "other-ca", tf.errors.UnauthenticatedError,
     "presented a certificate the cluster CA does not vouch for .*(self-signed|unable to get local issuer)"),
    ("elsewhere", "worker", "ca", tf.errors.UnauthenticatedError,
     "does not vouch for .*Hostname mismatch.* for the host name localhost"),
], ids=["plaintext-session", "plaintext-task", "session-from-another-ca", "task-from-another-ca", "wrong-host-name"])
def test_a_peer_that_cannot_prove_itself_is_refused_in_one_line(pki, task, monkeypatch, server_cert, session_cert,
                                                                 session_ca, error, message):
    if server_cert is None:
        server = Server({"local": ["localhost:0"]}, "local", 0)
        address = server.target[len("grpc://"):]
    else:
        address = task(server_cert)
    _use(monkeypatch, None if session_cert is None else _files(pki, session_cert, session_ca))
    try:
        with pytest.raises(error, match=message) as raised:
            Channel(address, timeout_secs=2)
        assert "\n" not in raised.value.message
    finally:
        if server_cert is None:
            server.stop()
    _use(monkeypatch, _files(pki, "worker"))
    if server_cert == "task":  # the task still serves the peers it trusts
        assert Channel(address).call("describe")[0]["task"] == 0


@pytest.mark.parametrize("files, message", [
    ({"tls_cert": "task.pem", "tls_key": "task.key"}, r"TLS needs .*: CA file \(tls_ca= or TFTK_CLUSTER_TLS_CA\) "
                                                      "missing"),
    ({"tls_cert": "absent.pem", "tls_key": "task.key", "tls_ca": "ca.pem"}, r"TLS certificate '.*absent.pem' "
                                                                           r"\(TFTK_CLUSTER_TLS_CERT\): no such file"),
    ({"tls_cert": "task.pem", "tls_key": "worker.key", "tls_ca": "ca.pem"}, "are not a PEM certificate and its "
                                                                           "private key .*key values mismatch"),
    ({"tls_cert": "garbage.pem", "tls_key": "task.key", "tls_ca": "ca.pem"}, "are not a PEM certificate"),
    ({"tls_cert": "task.pem", "tls_key": "task.key", "tls_ca": "garbage.pem"}, r"TLS CA file '.*garbage.pem' "
                                                                              r"\(TFTK_CLUSTER_TLS_CA\) holds no PEM"),
], ids=["partial", "missing-file", "key-of-another-cert", "garbage-cert", "garbage-ca"])
def test_bad_tls_files_are_one_line_at_the_start(pki, monkeypatch, files, message):
    given = {key: str(pki / name) for key, name in files.items()}
    with pytest.raises(ValueError, match=message) as raised:  # the task refuses to start
        Server({"local": [f"localhost:{free_port()}"]}, "local", 0, **given)
    assert "\n" not in str(raised.value)
    monkeypatch.delenv(auth.SECRET_VARIABLE, raising=False)
    for what, variable in tls.TLS_VARIABLES.items():  # the same files given to a session
        monkeypatch.setenv(variable, given.get(f"tls_{what}", ""))
    with pytest.raises(ValueError, match=message):
        Channel(f"localhost:{free_port()}", timeout_secs=0)


def test_tls_and_the_secret_combine(pki, task, monkeypatch):
    address = task(secret="s3cret")
    _use(monkeypatch, _files(pki, "worker"))
    with pytest.raises(tf.errors.UnauthenticatedError, match="requires the cluster secret"):
        Channel(address)
    monkeypatch.setenv(auth.SECRET_VARIABLE, "s3cret")
    assert Channel(address).call("describe")[0]["task"] == 0


def test_a_tls_connection_the_task_closed_when_idle_is_made_again(pki, task, monkeypatch):
    address = task(idle_timeout=0.3)
    _use(monkeypatch, _files(pki, "worker"))
    channel = Channel(address)
    first = channel._sock
    assert channel.call("describe")[0]["task"] == 0
    time.sleep(0.8)  # the task closes the idle connection; the next call reconnects, over TLS again
    assert channel.call("describe")[0]["task"] == 0
    assert channel._sock is not first and isinstance(channel._sock, ssl.SSLSocket)
    channel.close()


def test_sessions_use_the_credentials_of_the_task_their_process_runs(pki, monkeypatch):
    monkeypatch.delenv(auth.SECRET_VARIABLE, raising=False)
    _use(monkeypatch, None)
    server = Server({"local": ["localhost:0"]}, "local", 0, secret="s3cret", **_files(pki, "task"))
    try:
        channel = Channel(server.target[len("grpc://"):])  # no environment: the task's own secret and files
        assert isinstance(channel._sock, ssl.SSLSocket) and channel.call("describe")[0]["task"] == 0
        channel.close()
    finally:
        server.stop()


@pytest.mark.slow
def test_a_worker_session_uses_its_own_task_s_tls_against_a_ps_in_another_process(pki, monkeypatch):
    """A ps in a child process, TLS from the environment; the worker passes its files as arguments only."""
    monkeypatch.delenv(auth.SECRET_VARIABLE, raising=False)
    _use(monkeypatch, None)
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    environment = {tls.TLS_VARIABLES[what[len("tls_"):]]: path for what, path in _files(pki, "task").items()}
    code = f"import tftk as tf; tf.train.Server({cluster!r}, job_name='ps', task_index=0).join()"
    child = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, **environment})
    try:
        worker = Server(cluster, "worker", 0, **_files(pki, "worker"))
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(2.0, name="w")
            with tf.Session(worker.target) as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(v.assign_add(1.0))
                assert sess.run(v) == 3.0
        worker.stop()
    finally:
        child.kill()
        child.wait()
