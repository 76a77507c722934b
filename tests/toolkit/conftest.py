"""Fixtures for the toolkit tests: a local HTTP file server (with Range) and tiny real-format files."""

from __future__ import annotations

import gzip
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from tests.scratch_cwd import outside_the_checkout  # noqa: F401 (autouse: no results/ in the checkout)
from tests.toolkit.realformats import idx_bytes


class FileServer:
    """Serves `files[path]` on 127.0.0.1; can drop a transfer mid-file or ignore Range headers."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.drop_once: set[str] = set()  # paths whose next full transfer stops halfway
        self.ignore_range = False
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append((self.path, self.headers.get("Range")))
                body = server.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                start = 0
                match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
                if match and not server.ignore_range:
                    start = int(match.group(1))
                    if start >= len(body):
                        self.send_error(416)
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                if self.path in server.drop_once and start == 0:
                    server.drop_once.discard(self.path)
                    self.wfile.write(body[: len(body) // 2])
                    self.close_connection = True
                    return
                self.wfile.write(body[start:])

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)

    def mirror(self, prefix: str) -> str:
        return f"{self.url}/{prefix}/"


@pytest.fixture
def file_server():
    server = FileServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


@pytest.fixture
def tiny_mnist():
    """Four gzipped IDX files (12 train, 5 test images of 28x28) and their arrays."""
    rng = np.random.default_rng(7)
    arrays = {"train-images-idx3-ubyte.gz": rng.integers(0, 256, (12, 28, 28), dtype=np.uint8),
              "train-labels-idx1-ubyte.gz": rng.integers(0, 10, 12, dtype=np.uint8),
              "t10k-images-idx3-ubyte.gz": rng.integers(0, 256, (5, 28, 28), dtype=np.uint8),
              "t10k-labels-idx1-ubyte.gz": rng.integers(0, 10, 5, dtype=np.uint8)}
    blobs = {name: gzip.compress(idx_bytes(a), mtime=0) for name, a in arrays.items()}
    return arrays, blobs

