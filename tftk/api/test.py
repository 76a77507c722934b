"""The `tf.test` namespace: TestCase (sessions per test, assertAllClose and friends), main, the
numeric gradient checks compute_gradient / compute_gradient_error, Benchmark, and small helpers.

Written for TF1 programs' own test files: a TestCase resets the default graph before each test and
hands out a session on it (`self.session()`, `self.cached_session()`, `self.test_session()`).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import time
import unittest
from typing import Any, Callable, Iterator, Sequence
from unittest import mock

import numpy as np

__all__ = ["TestCase", "main", "get_temp_dir", "is_gpu_available", "is_cpu_target_available", "compute_gradient",
           "compute_gradient_error", "Benchmark", "StubOutForTesting", "assert_equal_graph_def", "benchmark_config",
           "mock", "test_src_dir_path", "create_local_cluster"]

_TEMP_DIR: str | None = None


def get_temp_dir() -> str:
    """A temporary directory for this test process (made once, under TEST_TMPDIR when set)."""
    global _TEMP_DIR
    if _TEMP_DIR is None:
        _TEMP_DIR = tempfile.mkdtemp(prefix="tftk-test-", dir=os.environ.get("TEST_TMPDIR"))
    return _TEMP_DIR


def is_gpu_available(cuda_only: bool = False, min_cuda_compute_capability: Any = None) -> bool:
    """False: tftk computes on the CPU only."""
    return False


def is_cpu_target_available(target: str) -> bool:
    """Whether the CPU supports an instruction-set `target` (e.g. 'avx2'), from /proc/cpuinfo's flags."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return False
    return target.lower() in flags


def test_src_dir_path(relative_path: str) -> str:
    """`relative_path` under the source tree of the package (tftk's, where TF's was tensorflow/)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, relative_path)


def benchmark_config() -> Any:
    """A ConfigProto for benchmarks (graph rewrites that would distort timings off)."""
    from tftk.client.config import ConfigProto
    return ConfigProto()


def main(argv: Sequence[str] | None = None) -> None:
    """Run the calling module's tests (unittest's runner), exiting with its status."""
    unittest.main(module="__main__", argv=list(sys.argv if argv is None else argv))


# ---- numeric gradients ---------------------------------------------------------------------------

def _jacobians(x: Any, x_shape: Sequence[int], y: Any, y_shape: Sequence[int], x_init_value: Any, delta: float,
               extra_feed_dict: dict | None) -> tuple[np.ndarray, np.ndarray]:
    import tftk as tf
    session = tf.get_default_session()
    if session is None:
        raise ValueError("compute_gradient needs a default session (use `with tf.Session():`)")
    x_size, y_size = int(np.prod(x_shape)), int(np.prod(y_shape))
    dtype = x.dtype.as_numpy_dtype
    value = np.asarray(x_init_value, dtype) if x_init_value is not None else \
        np.random.default_rng(0).random(x_shape).astype(dtype)
    feed = dict(extra_feed_dict or {})
    theoretical = np.zeros((x_size, y_size))
    dy = tf.placeholder(y.dtype, y_shape)
    (grad,) = tf.gradients(y, [x], grad_ys=dy)
    for j in range(y_size):
        seed = np.zeros(y_size, y.dtype.as_numpy_dtype)
        seed[j] = 1
        if grad is not None:
            g = session.run(grad, {**feed, x: value, dy: seed.reshape(y_shape)})
            theoretical[:, j] = np.asarray(g).reshape(-1)
    numerical = np.zeros((x_size, y_size))
    for i in range(x_size):
        plus, minus = value.copy().reshape(-1), value.copy().reshape(-1)
        plus[i] += delta
        minus[i] -= delta
        y_plus = session.run(y, {**feed, x: plus.reshape(x_shape)})
        y_minus = session.run(y, {**feed, x: minus.reshape(x_shape)})
        numerical[i] = (np.asarray(y_plus, np.float64) - np.asarray(y_minus, np.float64)).reshape(-1) / (2 * delta)
    return theoretical, numerical


def compute_gradient(x: Any, x_shape: Any, y: Any, y_shape: Any, x_init_value: Any = None, delta: float = 1e-3,
                     init_targets: Any = None, extra_feed_dict: dict | None = None) -> Any:
    """(theoretical, numerical) Jacobians [x_size, y_size] of y w.r.t. x (lists of pairs for lists of x)."""
    import tftk as tf
    if init_targets is not None:
        tf.get_default_session().run(init_targets)
    if isinstance(x, (list, tuple)):
        inits = x_init_value if x_init_value is not None else [None] * len(x)
        return [_jacobians(xi, si, y, y_shape, vi, delta, extra_feed_dict) for xi, si, vi in zip(x, x_shape, inits)]
    return _jacobians(x, x_shape, y, y_shape, x_init_value, delta, extra_feed_dict)


def compute_gradient_error(x: Any, x_shape: Any, y: Any, y_shape: Any, x_init_value: Any = None, delta: float = 1e-3,
                           init_targets: Any = None, extra_feed_dict: dict | None = None) -> float:
    """The largest absolute difference between the theoretical and numerical Jacobians."""
    grads = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets, extra_feed_dict)
    pairs = grads if isinstance(grads, list) else [grads]
    return max(float(np.max(np.abs(t - n))) if t.size else 0.0 for t, n in pairs)


# ---- TestCase -------------------------------------------------------------------------------------

class TestCase(unittest.TestCase):
    """unittest.TestCase with a fresh default graph per test, sessions on it, and array assertions."""

    def setUp(self) -> None:
        import tftk as tf
        super().setUp()
        self._cached_session = None
        np.random.seed(87654321)
        tf.reset_default_graph()

    def tearDown(self) -> None:
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None
        super().tearDown()

    def get_temp_dir(self) -> str:
        path = os.path.join(get_temp_dir(), self.id())
        os.makedirs(path, exist_ok=True)
        return path

    @contextlib.contextmanager
    def session(self, graph: Any = None, config: Any = None, use_gpu: bool = False,
                force_gpu: bool = False) -> Iterator[Any]:
        """A new session on `graph` (the default graph), installed as the default session."""
        import tftk as tf
        graph = tf.get_default_graph() if graph is None else graph
        with graph.as_default(), tf.Session(graph=graph, config=config) as sess:
            yield sess

    @contextlib.contextmanager
    def cached_session(self, graph: Any = None, config: Any = None, use_gpu: bool = False,
                       force_gpu: bool = False) -> Iterator[Any]:
        """One session per test, reused by every call (closed at tearDown)."""
        import tftk as tf
        graph = tf.get_default_graph() if graph is None else graph
        if self._cached_session is None or self._cached_session.graph is not graph:
            self._cached_session = tf.Session(graph=graph, config=config)
        with graph.as_default(), self._cached_session.as_default():
            yield self._cached_session

    test_session = cached_session

    def evaluate(self, tensors: Any) -> Any:
        """The values of `tensors` in the default session (or a cached one)."""
        import tftk as tf
        session = tf.get_default_session()
        if session is not None:
            return session.run(tensors)
        with self.cached_session() as sess:
            return sess.run(tensors)

    # -- assertions --

    def _values(self, value: Any) -> np.ndarray:
        import tftk as tf
        if isinstance(value, tf.Tensor):
            value = self.evaluate(value)
        return np.asarray(value)

    def assertAllClose(self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6, msg: str | None = None) -> None:
        if isinstance(a, dict) or isinstance(b, dict):
            self.assertEqual(sorted(a), sorted(b), msg)
            for key in a:
                self.assertAllClose(a[key], b[key], rtol, atol, msg)
            return
        if isinstance(a, (list, tuple)) and a and not np.isscalar(a[0]) and len(a) == len(b) and \
                not isinstance(a[0], (list, tuple)) and any(hasattr(v, "shape") for v in a):
            for x, y in zip(a, b):
                self.assertAllClose(x, y, rtol, atol, msg)
            return
        x, y = self._values(a), self._values(b)
        self.assertEqual(x.shape, y.shape, f"Shape mismatch: expected {x.shape}, got {y.shape}. {msg or ''}")
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=msg or "", equal_nan=True)

    def assertAllCloseAccordingToType(self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6,
                                      float_rtol: float = 1e-6, float_atol: float = 1e-6, half_rtol: float = 1e-3,
                                      half_atol: float = 1e-3, bfloat16_rtol: float = 1e-2,
                                      bfloat16_atol: float = 1e-2, msg: str | None = None) -> None:
        x, y = self._values(a), self._values(b)
        if x.dtype == np.float32 or y.dtype == np.float32 or x.dtype == np.complex64:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if x.dtype == np.float16 or y.dtype == np.float16:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        self.assertAllClose(x, y, rtol, atol, msg)

    def assertAllEqual(self, a: Any, b: Any, msg: str | None = None) -> None:
        x, y = self._values(a), self._values(b)
        self.assertEqual(x.shape, y.shape, f"Shape mismatch: expected {x.shape}, got {y.shape}. {msg or ''}")
        np.testing.assert_array_equal(x, y, err_msg=msg or "")

    def assertNotAllClose(self, a: Any, b: Any, **kwargs: Any) -> None:
        try:
            self.assertAllClose(a, b, **kwargs)
        except AssertionError:
            return
        raise AssertionError("The two values are close at all elements")

    def assertNotAllEqual(self, a: Any, b: Any, msg: str | None = None) -> None:
        try:
            self.assertAllEqual(a, b, msg)
        except AssertionError:
            return
        raise AssertionError(f"Expected unequal values. {msg or ''}")

    def assertNear(self, f1: float, f2: float, err: float, msg: str | None = None) -> None:
        self.assertTrue(f1 == f2 or abs(f1 - f2) <= err, f"{f1} != {f2} +/- {err}{' (' + msg + ')' if msg else ''}")

    def assertArrayNear(self, farray1: Sequence[float], farray2: Sequence[float], err: float,
                        msg: str | None = None) -> None:
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertNDArrayNear(self, ndarray1: Any, ndarray2: Any, err: float, msg: str | None = None) -> None:
        self.assertTrue(np.linalg.norm(np.asarray(ndarray1) - np.asarray(ndarray2)) <= err, msg)

    def _all_compare(self, a: Any, comparison: Callable, what: str) -> None:
        values = self._values(a)
        self.assertTrue(np.all(comparison(values)), f"{what}: {values}")

    def assertAllGreater(self, a: Any, comparison_target: Any) -> None:
        self._all_compare(a, lambda v: v > comparison_target, f"not all greater than {comparison_target}")

    def assertAllLess(self, a: Any, comparison_target: Any) -> None:
        self._all_compare(a, lambda v: v < comparison_target, f"not all less than {comparison_target}")

    def assertAllGreaterEqual(self, a: Any, comparison_target: Any) -> None:
        self._all_compare(a, lambda v: v >= comparison_target, f"not all >= {comparison_target}")

    def assertAllLessEqual(self, a: Any, comparison_target: Any) -> None:
        self._all_compare(a, lambda v: v <= comparison_target, f"not all <= {comparison_target}")

    def assertAllInRange(self, target: Any, lower_bound: Any, upper_bound: Any, open_lower_bound: bool = False,
                         open_upper_bound: bool = False) -> None:
        values = self._values(target)
        low = values > lower_bound if open_lower_bound else values >= lower_bound
        high = values < upper_bound if open_upper_bound else values <= upper_bound
        self.assertTrue(np.all(low & high), f"values outside [{lower_bound}, {upper_bound}]: {values}")

    def assertAllInSet(self, target: Any, expected_set: Any) -> None:
        values = set(self._values(target).reshape(-1).tolist())
        self.assertTrue(values <= set(expected_set), f"{values - set(expected_set)} not in {expected_set}")

    def assertShapeEqual(self, np_array: Any, tf_tensor: Any, msg: str | None = None) -> None:
        self.assertAllEqual(np.shape(np_array), tf_tensor.get_shape().as_list(), msg)

    def assertDeviceEqual(self, device1: str, device2: str, msg: str | None = None) -> None:
        from tftk.framework.device import DeviceSpec
        self.assertEqual(DeviceSpec.from_string(device1 or "").to_string(),
                         DeviceSpec.from_string(device2 or "").to_string(), msg)

    def assertDTypeEqual(self, target: Any, expected_dtype: Any) -> None:
        import tftk as tf
        self.assertEqual(self._values(target).dtype, tf.as_dtype(expected_dtype).as_numpy_dtype)

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type: type, expected_err_re_or_predicate: Any) -> Iterator[None]:
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            predicate = lambda e: re.search(expected_err_re_or_predicate, str(e)) is not None  # noqa: E731
        try:
            yield
        except exception_type as e:
            if not predicate(e):
                raise AssertionError(f"Exception of type {type(e)}: {e} does not match") from e
        else:
            self.fail(f"{exception_type.__name__} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate: Any) -> Any:
        import tftk as tf
        return self.assertRaisesWithPredicateMatch(tf.errors.OpError, expected_err_re_or_predicate)


# ---- benchmarks and stubs ------------------------------------------------------------------------------

class Benchmark:
    """Base class of benchmarks: report_benchmark records (and prints) one result; run_op_benchmark times a fetch."""

    def report_benchmark(self, iters: int | None = None, cpu_time: float | None = None,
                         wall_time: float | None = None, throughput: float | None = None, extras: dict | None = None,
                         name: str | None = None, metrics: list | None = None) -> dict:
        entry = {"name": name or type(self).__name__, "iters": iters, "cpu_time": cpu_time, "wall_time": wall_time,
                 "throughput": throughput, "extras": extras or {}, "metrics": metrics or []}
        self.__dict__.setdefault("reports", []).append(entry)
        print(f"entry {{ name: {entry['name']!r} iters: {iters} wall_time: {wall_time} }}")
        return entry

    def run_op_benchmark(self, sess: Any, op_or_tensor: Any, feed_dict: dict | None = None, burn_iters: int = 2,
                         min_iters: int = 10, store_trace: bool = False, store_memory_usage: bool = True,
                         name: str | None = None, extras: dict | None = None, mbs: int = 0) -> dict:
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict)
        times = []
        for _ in range(min_iters):
            start = time.perf_counter()
            sess.run(op_or_tensor, feed_dict)
            times.append(time.perf_counter() - start)
        wall = float(np.median(times))
        throughput = mbs / wall if mbs and wall else None
        return self.report_benchmark(iters=min_iters, wall_time=wall, throughput=throughput, extras=extras, name=name)


class StubOutForTesting:
    """Replace attributes for the length of a test and put them back: Set, SmartSet, UnsetAll, CleanUp."""

    def __init__(self) -> None:
        self.cache: list = []
        self.stubs: list = []

    def __enter__(self) -> "StubOutForTesting":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.CleanUp()

    def CleanUp(self) -> None:
        self.SmartUnsetAll()
        self.UnsetAll()

    def Set(self, parent: Any, child_name: str, new_child: Any) -> None:
        self.cache.append((parent, getattr(parent, child_name), child_name))
        setattr(parent, child_name, new_child)

    def SmartSet(self, obj: Any, attr_name: str, new_attr: Any) -> None:
        self.stubs.append((obj, attr_name, getattr(obj, attr_name)))
        setattr(obj, attr_name, new_attr)

    def UnsetAll(self) -> None:
        for parent, old_child, child_name in reversed(self.cache):
            setattr(parent, child_name, old_child)
        self.cache = []

    def SmartUnsetAll(self) -> None:
        for obj, attr_name, old_attr in reversed(self.stubs):
            setattr(obj, attr_name, old_attr)
        self.stubs = []


def assert_equal_graph_def(expected: Any, actual: Any, checkpoint_v2: bool = False,
                           hash_table_shared_name: bool = False) -> None:
    """AssertionError naming the first difference unless the GraphDefs hold the same nodes (any order)."""
    for value, what in ((expected, "expected"), (actual, "actual")):
        if not hasattr(value, "node"):
            raise TypeError(f"{what} must be a GraphDef, got {type(value).__name__}")
    want = {n.name: n for n in expected.node}
    got = {n.name: n for n in actual.node}
    if set(want) != set(got):
        raise AssertionError(f"GraphDefs have different nodes: only expected {sorted(set(want) - set(got))}, "
                             f"only actual {sorted(set(got) - set(want))}")
    for name, node in want.items():
        if node.SerializeToString(deterministic=True) != got[name].SerializeToString(deterministic=True):
            raise AssertionError(f"node {name!r} differs:\n{node}\nvs\n{got[name]}")


def _free_localhost_port() -> int:
    """A port the OS reports free on localhost right now (as TF's portpicker does; racy by nature)."""
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def create_local_cluster(num_workers: int, num_ps: int, protocol: str = "grpc", worker_config: Any = None,
                         ps_config: Any = None) -> tuple[list[Any], list[Any]]:
    """Start a "worker"/"ps" cluster of in-process `tf.train.Server`s on free localhost ports.

    Returns (worker servers, ps servers); `tf.Session(workers[0].target)` runs graphs whose
    variables live on "/job:ps/task:i". Stop them with `server.stop()` when done.
    """
    from tftk.distributed.server import Server
    if num_workers < 1 or num_ps < 0:
        raise ValueError(f"create_local_cluster needs num_workers >= 1 and num_ps >= 0, got {num_workers}, {num_ps}")
    cluster = {"worker": [f"localhost:{_free_localhost_port()}" for _ in range(num_workers)]}
    if num_ps:
        cluster["ps"] = [f"localhost:{_free_localhost_port()}" for _ in range(num_ps)]
    workers = [Server(cluster, "worker", i, protocol=protocol, config=worker_config) for i in range(num_workers)]
    ps_servers = [Server(cluster, "ps", i, protocol=protocol, config=ps_config) for i in range(num_ps)]
    return workers, ps_servers
