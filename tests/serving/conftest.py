"""Fixtures for `tftk serve` tests: small trained runs and a real server process on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("httptools", reason="tftk serve needs the serve extra: pip install -e '.[serve]'")

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"


def train(run: Path, config: str = "digits_mlp.yaml", steps: int = 100, save_every: int = 50, *extra: str) -> Path:
    """Train (or resume) `run` to `steps` with tftk train, checkpointing every `save_every` steps."""
    from tftk.cli import app

    result = CliRunner().invoke(app, ["train", "--config", str(CONFIGS / config), "--max-iter", str(steps),
                                      "--random-seed", "3", "--result-dir", str(run), f"save_every={save_every}",
                                      "batch_size=20", "results_root=" + str(run.parent), *extra])
    assert result.exit_code == 0, result.output + result.stderr
    return run


@pytest.fixture(scope="session")
def mlp_run(tmp_path_factory) -> Path:
    return train(tmp_path_factory.mktemp("runs") / "mlp", steps=100, save_every=50)


@pytest.fixture(scope="session")
def convnet_run(tmp_path_factory) -> Path:
    return train(tmp_path_factory.mktemp("runs") / "convnet", "digits_convnet.yaml", steps=20, save_every=10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcess:
    """`tftk serve ARGS` in a child process; its stderr lines are collected in `lines`."""

    def __init__(self, *args: str, grpc: bool = False, timeout: float = 60.0):
        self.rest_port = free_port()
        self.grpc_port = free_port() if grpc else 0
        command = [sys.executable, "-c", "from tftk.cli import main; main()", "serve",
                   "--rest-api-port", str(self.rest_port), *args]
        if "--port" not in args:
            command += ["--port", str(self.grpc_port)] if _has_port_flag() else []
        env = dict(os.environ, NUMBA_CACHE_DIR=os.environ.get("NUMBA_CACHE_DIR", str(ROOT / ".venv" / "numba-cache")))
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                                        env=env, cwd=ROOT)
        self.lines: list[str] = []
        self._ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self._ready.wait(timeout) or self.process.poll() is not None:
            self.stop()
            raise AssertionError("server did not start:\n" + "".join(self.lines))
        self.url = f"http://127.0.0.1:{self.rest_port}"

    def _read(self) -> None:
        for line in self.process.stderr:
            self.lines.append(line)
            if "tftk.serving: ready: " in line:
                self._ready.set()
        self._ready.set()

    def request(self, method: str, path: str, body=None, raw: bytes | None = None, timeout: float = 30.0):
        """(status, parsed JSON or text) of one HTTP request."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.url + path, data=data, method=method)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, payload = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, payload = error.code, error.read()
        try:
            return status, json.loads(payload)
        except ValueError:
            return status, payload.decode()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def wait_for(self, condition, timeout: float = 30.0, what: str = "condition"):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}:\n" + "".join(self.lines[-30:]))


def _has_port_flag() -> bool:
    from tftk.cli import app
    import typer.main

    command = typer.main.get_command(app).commands["serve"]
    return any("--port" in param.opts for param in command.params)


@pytest.fixture()
def serve():
    """serve(*args) starts a server; every server started is stopped after the test."""
    started: list[ServerProcess] = []

    def start(*args: str, **options) -> ServerProcess:
        server = ServerProcess(*args, **options)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
