"""Distributed tests: a fresh graph each, free localhost ports, and ps tasks in child processes."""

import socket
import subprocess
import sys

import pytest

import tftk as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        return sock.getsockname()[1]


def local_cluster(**jobs: int) -> dict:
    """{job: [n localhost addresses on free ports]}, e.g. local_cluster(ps=1, worker=2)."""
    return {job: [f"localhost:{free_port()}" for _ in range(n)] for job, n in jobs.items()}


@pytest.fixture
def spawn_task():
    """Start `tf.train.Server(cluster, job, task).join()` in a child process; killed at teardown."""
    children = []

    def spawn(cluster: dict, job: str, task: int) -> subprocess.Popen:
        code = ("import tftk as tf; "
                f"tf.train.Server({cluster!r}, job_name={job!r}, task_index={task}).join()")
        child = subprocess.Popen([sys.executable, "-c", code])
        children.append(child)
        return child

    yield spawn
    for child in children:
        child.kill()
        child.wait()


@pytest.fixture
def servers():
    """In-process servers started by a test, stopped at teardown."""
    started = []

    def start(cluster, job: str, task: int) -> tf.train.Server:
        server = tf.train.Server(cluster, job_name=job, task_index=task)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
