"""`Session` and `InteractiveSession`: variable state per session, plans cached per fetch/feed set."""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Any, Iterator

import numpy as np

from tftk.client import executor, run_state, streams
from tftk.client.allocator import keep_freed_buffers
from tftk.client.config import ConfigProto, apply_thread_limits
from tftk.client.threads import ROWS, SHARE, SPLIT, StepTimes
from tftk.framework import errors, nest
from tftk.framework.ops import (Graph, Operation, Tensor, _default_session_stack,
                                get_default_graph)
from tftk.kernels import placement, work_sharing

__all__ = ["Session", "InteractiveSession", "BaseSession"]


class _FetchStructure:
    """Flattens nested fetches to a list of graph elements and rebuilds results in their shape."""

    def __init__(self, graph: Graph, fetches: Any):
        self._fetches = fetches
        self._single = isinstance(fetches, (Tensor, Operation))  # the common case: no walk
        leaves = [fetches] if self._single else nest.flatten(fetches, expand_composites=True)
        self.elements: list[Tensor | Operation] = [_fetch_element(graph, leaf) for leaf in leaves]

    def build(self, values: list[Any]) -> Any:
        if self._single:
            return values[0]
        return nest.pack_sequence_as(self._fetches, values, expand_composites=True)


def _fetch_element(graph: Graph, fetch: Any) -> Tensor | Operation:
    """The graph element one leaf of the fetches names (a Tensor, an Operation or a name)."""
    if fetch is None:
        raise TypeError("Fetch argument None has invalid type <class 'NoneType'>: a fetch "
                        "must be a Tensor, an Operation, or a name in the graph.")
    if not (isinstance(fetch, (Tensor, Operation, str)) or hasattr(fetch, "_as_graph_element")):
        raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}: a fetch must be "
                        "a Tensor, an Operation, a name string, or a list/tuple/dict of those.")
    try:
        return graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
    except KeyError as exc:
        raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                         f"({exc.args[0]})") from None
    except ValueError as exc:
        raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                         f"({exc})") from None


def _as_fetch_value(value: Any) -> Any:
    """Fetched values as TF1 returns them: numpy scalars for 0-d arrays, bytes for strings."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    return value


class BaseSession:
    """A session holds variable values for one graph and runs plans over it."""

    def __init__(self, target: str = "", graph: Graph | None = None, config: ConfigProto | None = None):
        self._graph = graph if graph is not None else get_default_graph()
        self._config = config if config is not None else ConfigProto()
        keep_freed_buffers()
        if target:  # a task of a cluster: variables live on the tasks their devices name
            from tftk.distributed.remote import ClusterContext
            timeout = self._config.operation_timeout_in_ms / 1000 if self._config.operation_timeout_in_ms > 0 else 30.0
            self._context: executor.KernelContext = ClusterContext(self, target, timeout)
        else:
            self._context = executor.KernelContext(self)
        if self._config.operation_timeout_in_ms > 0:
            self._context.timeout_secs = self._config.operation_timeout_in_ms / 1000
        self._target = target
        # a plan's steps may run in two streams (`tftk.client.streams`), or its batch in slices on two threads
        # (`tftk.client.rows`), unless the config asks for one inter-op thread (ops one at a time); not in
        # a cluster, whose connections each thread would share
        self._streams_allowed = not target and self._config.inter_op_parallelism_threads != 1
        self._plans: dict[Any, executor.Plan] = {}
        self._step_times: dict[int, StepTimes] = {}  # id of a cached plan -> its measured steps
        self._plans_version = self._graph.version
        self._closed = False
        self._placed: set[Operation] = set()
        self._default_cm: Any = None

    graph = property(lambda self: self._graph)
    graph_def = property(lambda self: self._graph.as_graph_def())
    sess_str = property(lambda self: self._target)

    def list_devices(self) -> list[str]:
        return [executor.CPU_DEVICE]

    @contextlib.contextmanager
    def as_default(self) -> Iterator["BaseSession"]:
        _default_session_stack.push(self)
        try:
            with self._graph.as_default():
                yield self
        finally:
            _default_session_stack.pop(self)

    def close(self) -> None:
        self._closed = True
        self._context.closed.set()
        self._plans.clear()
        self._step_times.clear()
        self._context.boxes.clear()
        self._context.close()
        work_sharing.stop_helper()

    def __enter__(self) -> "BaseSession":
        self._default_cm = self.as_default()
        self._default_cm.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        cm, self._default_cm = self._default_cm, None
        cm.__exit__(*exc)
        self.close()

    def run(self, fetches: Any, feed_dict: dict | None = None, options: Any = None,
            run_metadata: Any = None) -> Any:
        """Run the ops `fetches` need, feeding `feed_dict`, and return the fetched values."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        structure = _FetchStructure(self._graph, fetches)
        feed_tensors, feed_values = self._feeds(feed_dict)
        fetch_tensors = [e for e in structure.elements if isinstance(e, Tensor)]
        targets = [e for e in structure.elements if isinstance(e, Operation)]
        tracing = bool(options is not None and getattr(options, "trace_level", 0) and run_metadata is not None)
        # traced runs time (and the debugger inspects) every graph op, so their plans are not fused
        plan = self._plan(tuple(fetch_tensors), tuple(targets), tuple(feed_tensors), fuse=not tracing)
        outputs = self._execute(plan, feed_values, run_metadata if tracing else None)
        by_element = dict(zip(fetch_tensors, outputs))
        values = [None if isinstance(e, Operation) else _as_fetch_value(by_element[e])
                  for e in structure.elements]
        return structure.build(values)

    def _execute(self, plan: executor.Plan, feed_values: list[np.ndarray], run_metadata: Any = None) -> Any:
        """The plan's outputs for checked feed values (traced into `run_metadata` when given), as one run
        with state of its own (`tftk.client.run_state`): runs from several threads do not mix."""
        with run_state.scope():
            return self._execute_run(plan, feed_values, run_metadata)

    def _execute_run(self, plan: executor.Plan, feed_values: list[np.ndarray], run_metadata: Any = None) -> Any:
        """`_execute` within the run's scope; a kernel's error raised as TF's, naming the op. Untraced
        steps are timed for the thread policy."""
        step_times = None
        if run_metadata is None:
            step_times = self._step_times.get(id(plan))
            if step_times is None:  # not setdefault: that would build a StepTimes on every run
                step_times = self._step_times[id(plan)] = StepTimes()
        threads = apply_thread_limits(self._config.intra_op_parallelism_threads, step_times)
        try:
            if run_metadata is not None:
                return executor.run_traced(plan, feed_values, run_metadata_recorder(run_metadata))
            if threads > 1 and step_times.runs > 0 and self._streams_allowed and streams.profiling(plan):
                apply_thread_limits(1)  # the steps are timed as a stream runs them: each on one thread
                outputs, decided = streams.measure(plan, feed_values)
                if decided and plan.split_function is not None:
                    step_times.add_way(SPLIT)
                if decided and plan.rows_function is not None:
                    step_times.add_way(ROWS)
                return outputs
            shareable = work_sharing.shareable_calls()
            way = step_times.way if threads > 1 else None
            run = {SPLIT: plan.split_function, ROWS: plan.rows_function}.get(way) or plan.function
            # a shared or sliced step's caller stays on its core, its helper on another (a split run's
            # streams pin themselves: tftk.client.side_thread)
            pinned = placement.pin_caller() if way in (SHARE, ROWS) else None
            start = time.monotonic()
            try:
                outputs = run(*feed_values)
            finally:
                placement.release_caller(pinned)
            end = time.monotonic()
            step_times.record(threads, end - start, end, work_sharing.shareable_calls() != shareable)
            return outputs
        except errors.OpError as exc:
            if exc.op is None:
                exc.op = executor.failing_op(plan, exc)
            raise
        except (ValueError, TypeError, IndexError, ZeroDivisionError, FloatingPointError,
                OverflowError, UnboundLocalError, KeyError) as exc:
            op = executor.failing_op(plan, exc)
            where = f"{op.name} ({op.type})" if op is not None else "a kernel"
            if isinstance(exc, UnboundLocalError):
                tensor = executor.unbound_tensor(plan, exc)
                what = f"Tensor '{tensor.name}'" if tensor is not None else "A fetched tensor"
                msg = (f"{what} does not have a value in this run: it is computed in a tf.cond branch "
                       "that was not taken" + (f" (needed by {where})" if op is not None else ""))
                op = op or (tensor.op if tensor is not None else None)
            else:
                msg = f"{where}: {exc}"
            raise errors.InvalidArgumentError(None, op, msg).with_traceback(exc.__traceback__) from None

    def _plan(self, fetches: tuple, targets: tuple, feeds: tuple, fuse: bool = True) -> executor.Plan:
        if self._graph.version != self._plans_version:
            self._plans.clear()
            self._step_times.clear()
            self._plans_version = self._graph.version
        key = (fetches, targets, feeds, fuse)
        plan = self._plans.get(key)
        if plan is None:
            plan = executor.build_plan(self._graph, list(fetches), list(targets), list(feeds),
                                       self._context, self._check_placement, fuse=fuse)
            self._plans[key] = plan
        return plan

    def _check_placement(self, op: Operation) -> None:
        if op in self._placed:
            return
        self._placed.add(op)
        device = (op.device or "").lower()
        if "gpu" in device and not self._config.allow_soft_placement:
            raise errors.InvalidArgumentError(
                None, op, f"Cannot assign a device for operation '{op.name}': it was explicitly "
                f"assigned to {op.device} but the only available device is {executor.CPU_DEVICE}. "
                "Set allow_soft_placement=True in ConfigProto to run it on the CPU.")
        if self._config.log_device_placement:
            print(f"{op.name}: ({op.type}): {executor.CPU_DEVICE}", file=sys.stderr)

    def _feeds(self, feed_dict: dict | None) -> tuple[list[Tensor], list[np.ndarray]]:
        if not feed_dict:
            return [], []
        tensors: list[Tensor] = []
        values: list[np.ndarray] = []
        for key, value in feed_dict.items():
            for tensor, sub_value in self._feed_parts(key, value):
                tensors.append(tensor)
                values.append(_checked_feed(tensor, sub_value))
        if len(tensors) > 1:  # one plan per feed *set*: the dict's order must not matter
            order = sorted(range(len(tensors)), key=lambda i: (tensors[i].op.id, tensors[i].value_index))
            tensors, values = [tensors[i] for i in order], [values[i] for i in order]
        return tensors, values

    def _feed_parts(self, key: Any, value: Any) -> list[tuple[Tensor, Any]]:
        if hasattr(key, "_feed_parts"):  # SparseTensor: feed indices, values, dense_shape
            return key._feed_parts(value)
        try:
            element = self._graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
        except (KeyError, ValueError, TypeError) as exc:
            raise TypeError(f"Cannot interpret feed_dict key {key!r} as a Tensor: {exc}") from None
        return [(element, value)]

    def partial_run_setup(self, *args: Any, **kwargs: Any) -> None:
        raise errors.UnimplementedError(None, None, "partial_run is not supported by tftk")

    def make_callable(self, fetches: Any, feed_list: list | None = None) -> Any:
        """A function running `fetches` with positional feeds, as TF1's Session.make_callable.

        The fetches, the feeds and the execution plan are resolved here, once: a call only checks
        and converts its feed values, runs the plan and shapes the results (a server's Session.run
        per request costs ~20 us less). The callable gives what `run(fetches, dict(zip(feed_list,
        values)))` gives, errors included; after the graph changes it falls back to that.
        """
        feed_list = list(feed_list or [])
        structure = _FetchStructure(self._graph, fetches)
        sparse = any(hasattr(key, "_feed_parts") for key in feed_list)
        tensors = [] if sparse else [self._feed_parts(key, None)[0][0] for key in feed_list]
        if sparse or len(set(tensors)) != len(tensors):
            def call(*feed_values: Any) -> Any:  # sparse or repeated feeds: the general path
                return self.run(fetches, dict(zip(feed_list, feed_values)))
            return call
        order = sorted(range(len(tensors)), key=lambda i: (tensors[i].op.id, tensors[i].value_index))
        fetch_tensors = [e for e in structure.elements if isinstance(e, Tensor)]
        plan = self._plan(tuple(fetch_tensors), tuple(e for e in structure.elements if isinstance(e, Operation)),
                          tuple(tensors[i] for i in order))
        version = self._graph.version
        slots = [fetch_tensors.index(e) if isinstance(e, Tensor) else None for e in structure.elements]

        def call(*feed_values: Any) -> Any:
            if len(feed_values) != len(tensors):
                raise TypeError(f"this callable takes {len(tensors)} feed values, got {len(feed_values)}")
            if self._closed or self._graph.version != version:
                return self.run(fetches, dict(zip(feed_list, feed_values)))
            outputs = self._execute(plan, [_checked_feed(tensors[i], feed_values[i]) for i in order])
            return structure.build([None if slot is None else _as_fetch_value(outputs[slot]) for slot in slots])

        return call


def _int_fits(value: int, dtype: Any) -> bool:
    """Whether a Python int feeds `dtype` unchanged (TF refuses 5 for a string, 300 for an int8)."""
    if dtype.name == "string":
        return False
    try:
        return dtype.as_numpy_dtype(value) == value
    except (OverflowError, ValueError):
        return False


def _checked_feed(tensor: Tensor, value: Any) -> np.ndarray:
    """Convert a fed value to the tensor's dtype and check it against the static shape."""
    dtype = tensor.dtype
    if isinstance(value, Tensor):
        raise TypeError(f"The value of a feed cannot be a tf.Tensor object ({value.name}). Acceptable "
                        "feed values include Python scalars, strings, lists, numpy ndarrays.")
    if isinstance(value, int) and not _int_fits(value, dtype):
        raise TypeError(f"Type of feed value {value} with type {type(value)} is not compatible with Tensor "
                        f"type {dtype.as_numpy_dtype} of '{tensor.name}'. Try explicitly setting the type of "
                        "the feed tensor (e.g. tf.placeholder(tf.int32, ...)).")
    if dtype.name == "string":
        array = np.asarray(value, dtype=object)
    else:
        raw = value if isinstance(value, np.ndarray) else np.asarray(value)
        if raw.dtype.kind == "f" and (dtype.is_integer or dtype.is_bool) or \
                raw.dtype.kind in "SUO" and dtype.is_numeric:
            raise TypeError(f"Cannot feed a value of dtype {raw.dtype} to Tensor '{tensor.name}' of "
                            f"dtype {dtype.name}.")
        array = raw if raw.dtype == dtype.as_numpy_dtype else raw.astype(dtype.as_numpy_dtype)
    if not tensor.shape.is_compatible_with(array.shape):
        raise ValueError(f"Cannot feed value of shape {array.shape} for Tensor '{tensor.name}', "
                         f"which has shape '{tensor.shape}'")
    return array


def run_metadata_recorder(run_metadata: Any) -> Any:
    """A per-op callback filling `run_metadata.step_stats` (used by traced runs)."""
    origin = time.time() - time.perf_counter()
    if hasattr(run_metadata, "clear"):
        run_metadata.clear()

    def record(op: Operation, start: float, end: float, outputs: list) -> None:
        run_metadata.record_node(op.name, int((origin + start) * 1e6), int((origin + end) * 1e6),
                                 [np.asarray(o) for o in outputs])

    return record


class Session(BaseSession):
    """`tf.Session(target='', graph=None, config=None)`."""


class InteractiveSession(BaseSession):
    """A session that installs itself as the default on construction (for shells and notebooks)."""

    def __init__(self, target: str = "", graph: Graph | None = None, config: ConfigProto | None = None):
        super().__init__(target, graph, config)
        self._default_cm = self.as_default()
        self._default_cm.__enter__()

    def close(self) -> None:
        cm, self._default_cm = self._default_cm, None
        if cm is not None:
            with contextlib.suppress(AssertionError):
                cm.__exit__(None, None, None)
        super().close()
