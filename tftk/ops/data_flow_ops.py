"""Queues and conditional accumulators (`tf.FIFOQueue`, `tf.ConditionalAccumulator`).

Their state lives beside the variables (one per session, or on the task their device names) and
is shared by the ops that take their handle as a reference input. Dequeues and take_grad wait for
other ops — in other threads or other processes — and end with CancelledError when the session
closes or the queue runner's coordinator stops.
"""

from __future__ import annotations

import collections
import threading
from typing import Any, Sequence

import numpy as np

from tftk.framework.cancellation import wait_until
from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import Operation, Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["QueueBase", "FIFOQueue", "RandomShuffleQueue", "ConditionalAccumulator"]

_CREATING = threading.Lock()


def state_getter(op: Operation, ctx: Any, create, input_index: int = 0):
    """A function returning the state behind one of op's handle inputs, created on first use."""
    box = ctx.ref_box(op, input_index)

    def get() -> Any:
        if box.value is None:
            with _CREATING:
                if box.value is None:
                    box.value = create()
        return box.value
    return get


# ---- FIFOQueue ------------------------------------------------------------------------------


class QueueState:
    """Rows of component arrays, at most `capacity` (< 0: unbounded). First in first out, or, for
    a RandomShuffleQueue, a random row while more than `min_after_dequeue` remain (or it is closed)."""

    def __init__(self, attrs: dict):
        self.name = attrs["queue_name"]
        self.capacity = attrs["capacity"]
        self.min_after_dequeue = attrs.get("min_after_dequeue")
        self.rng = np.random.default_rng(attrs.get("seed")) if self.min_after_dequeue is not None else None
        self.rows: collections.deque | list = [] if self.rng is not None else collections.deque()
        self.closed = False
        self.cancel_pending = False
        self.cond = threading.Condition()

    def put(self, rows: list[tuple], op: Operation, ctx: Any) -> None:
        """Append the rows one by one as room appears (so a batch larger than the free room, or than
        the capacity, goes in while consumers take rows out)."""
        with self.cond:
            if self.closed:
                raise errors.CancelledError(None, op, f"Queue '{self.name}' is closed.")
            for done, row in enumerate(rows):
                wait_until(self.cond, lambda: self.cancel_pending or self.capacity < 0
                           or len(self.rows) < self.capacity, op, ctx, may_retry=done == 0)
                if self.cancel_pending:
                    raise errors.CancelledError(None, op, f"Enqueue to queue '{self.name}' was cancelled: the "
                                                "queue was closed with cancel_pending_enqueues=True")
                self.rows.append(row)
                self.cond.notify_all()

    def take(self, n: int, op: Operation, ctx: Any, up_to: bool = False) -> list[tuple]:
        """n rows; with `up_to`, fewer once the queue is closed (but at least one)."""
        keep = self.min_after_dequeue or 0
        with self.cond:
            wait_until(self.cond, lambda: self.closed or len(self.rows) >= n + keep, op, ctx)
            if len(self.rows) < n and not (up_to and self.rows):
                raise errors.OutOfRangeError(
                    None, op, f"Queue '{self.name}' is closed and has insufficient elements (requested "
                    f"{n}, current size {len(self.rows)})")
            taken = [self._pop() for _ in range(min(n, len(self.rows)))]
            self.cond.notify_all()
            return taken

    def _pop(self) -> tuple:
        if self.rng is None:
            return self.rows.popleft()
        i = int(self.rng.integers(len(self.rows)))
        self.rows[i], self.rows[-1] = self.rows[-1], self.rows[i]
        return self.rows.pop()

    def close(self, cancel_pending_enqueues: bool) -> None:
        """Refuse new enqueues; pending ones still finish unless `cancel_pending_enqueues`."""
        with self.cond:
            self.closed = True
            self.cancel_pending = self.cancel_pending or cancel_pending_enqueues
            self.cond.notify_all()


def queue_getter(op: Operation, ctx: Any, input_index: int = 0):
    """A function returning the queue behind one of op's handle inputs (attrs copied onto op)."""
    return state_getter(op, ctx, lambda: QueueState(op.attrs), input_index)


def _rows_of(op: Operation, components: Sequence[np.ndarray], many: bool) -> list[tuple]:
    """Enqueue inputs as rows of arrays of the queue's dtypes and shapes."""
    types, shapes = op.get_attr("component_types"), op.get_attr("shapes")
    # copies: an input may be a variable's storage, which later updates would change in the queue
    arrays = [np.array(c, dtype=t.as_numpy_dtype, copy=True) for c, t in zip(components, types)]
    if many:
        sizes = {a.shape[0] if a.ndim else None for a in arrays}
        if len(sizes) != 1 or None in sizes:
            raise errors.InvalidArgumentError(None, op, f"{op.name}: enqueue_many needs components with one "
                                              f"shared first dimension, got shapes {[a.shape for a in arrays]}")
        rows = [tuple(a[i, ...] for a in arrays) for i in range(sizes.pop())]  # arrays, even of strings
    else:
        rows = [tuple(arrays)]
    for shape, index in zip(shapes, range(len(arrays))):
        if rows and not shape.is_compatible_with(rows[0][index].shape):
            raise errors.InvalidArgumentError(None, op, f"{op.name}: component {index} has shape "
                                              f"{list(rows[0][index].shape)}, the queue holds {shape}")
    return rows


def _bind_enqueue(many: bool):
    def factory(op: Operation, ctx: Any):
        queue = queue_getter(op, ctx)

        def kernel(*components: np.ndarray) -> None:
            queue().put(_rows_of(op, components, many), op, ctx)
        return kernel
    return factory


def _bind_dequeue(many: bool, up_to: bool = False):
    def factory(op: Operation, ctx: Any):
        queue = queue_getter(op, ctx)
        n_components = len(op.get_attr("component_types"))

        stack = _padded_stack if op.attrs.get("padded") else np.stack

        def kernel(*count: np.ndarray) -> Any:
            rows = queue().take(int(count[0]) if many else 1, op, ctx, up_to)
            columns = [stack([r[i] for r in rows]) if many else rows[0][i] for i in range(n_components)]
            return columns[0] if n_components == 1 else tuple(columns)
        return kernel
    return factory


def _padded_stack(arrays: list[np.ndarray]) -> np.ndarray:
    """Arrays of one rank stacked, each padded at the end of every axis to the largest size there, with
    zeros (empty strings for strings): what a PaddingFIFOQueue's dequeue_many gives."""
    if arrays[0].ndim == 0:
        return np.stack(arrays)
    shape = np.max([a.shape for a in arrays], axis=0)
    out = np.full((len(arrays), *shape), b"" if arrays[0].dtype == object else 0, dtype=arrays[0].dtype)
    for row, a in zip(out, arrays):
        row[tuple(slice(0, d) for d in a.shape)] = a
    return out


def _bind_size(op: Operation, ctx: Any):
    queue = queue_getter(op, ctx)
    return lambda: np.asarray(len(queue().rows), np.int32)


def _bind_close(op: Operation, ctx: Any):
    queue = queue_getter(op, ctx)
    cancel = op.get_attr("cancel_pending_enqueues")
    return lambda: queue().close(cancel)


def _bind_handle(op: Operation, ctx: Any):
    name = op.name.encode()
    return lambda: np.array(name, dtype=object)


for _op_type, _factory, _blocking in (
        ("QueueEnqueueV2", _bind_enqueue(False), True), ("QueueEnqueueManyV2", _bind_enqueue(True), True),
        ("QueueDequeueV2", _bind_dequeue(False), True), ("QueueDequeueManyV2", _bind_dequeue(True), True),
        ("QueueDequeueUpToV2", _bind_dequeue(True, up_to=True), True),
        ("QueueSizeV2", _bind_size, False), ("QueueCloseV2", _bind_close, False)):
    registry.register_op(_op_type, _factory, ref_inputs=(0,), stateful=True, blocking=_blocking, remote=True)
registry.register_op("FIFOQueueV2", _bind_handle, stateful=True, holds_state=True)
registry.register_op("RandomShuffleQueueV2", _bind_handle, stateful=True, holds_state=True)
registry.register_op("PaddingFIFOQueueV2", _bind_handle, stateful=True, holds_state=True)
registry.not_differentiable("FIFOQueueV2", "RandomShuffleQueueV2", "PaddingFIFOQueueV2", "QueueEnqueueV2", "QueueEnqueueManyV2",
                            "QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2", "QueueSizeV2",
                            "QueueCloseV2")


class QueueBase:
    """What FIFOQueue and RandomShuffleQueue share: a handle op and the ops using it."""

    def __init__(self, handle_type: str, capacity: int, dtypes: Any, shapes: Any, names: Any,
                 shared_name: str | None, name: str, extra_attrs: dict):
        if names is not None:
            raise NotImplementedError("Queues with names=... are not supported; enqueue tuples of tensors")
        types = [_dtype(t) for t in (dtypes if isinstance(dtypes, (list, tuple)) else [dtypes])]
        shapes = [TensorShape(None)] * len(types) if shapes is None else [as_shape(s) for s in shapes]
        if len(shapes) != len(types):
            raise ValueError(f"A queue of {len(types)} dtypes needs as many shapes, got {len(shapes)}")
        self._dtypes, self._shapes = types, shapes
        attrs = {"capacity": int(capacity), "component_types": types, "shapes": shapes, **extra_attrs}
        self._queue_ref = make_op(handle_type, [], _dtype("string"), [], name,
                                  {**attrs, "shared_name": shared_name or ""})
        self._attrs = {**attrs, "queue_name": self._queue_ref.op.name}

    queue_ref = property(lambda self: self._queue_ref)
    name = property(lambda self: self._queue_ref.op.name)
    dtypes = property(lambda self: list(self._dtypes))
    shapes = property(lambda self: list(self._shapes))

    def enqueue(self, vals: Any, name: str | None = None) -> Operation:
        return make_multi_op("QueueEnqueueV2", [self._queue_ref] + self._components(vals), [],
                             name or "enqueue", self._attrs)

    def enqueue_many(self, vals: Any, name: str | None = None) -> Operation:
        return make_multi_op("QueueEnqueueManyV2", [self._queue_ref] + self._components(vals), [],
                             name or "enqueue_many", self._attrs)

    def dequeue(self, name: str | None = None) -> Any:
        op = make_multi_op("QueueDequeueV2", [self._queue_ref], list(zip(self._dtypes, self._shapes)),
                           name or "dequeue", self._attrs)
        return op.outputs[0] if len(op.outputs) == 1 else op.outputs

    def dequeue_many(self, n: Any, name: str | None = None) -> Any:
        """n elements stacked; waits for them (OutOfRangeError if the queue closes short)."""
        return self._dequeue_n("QueueDequeueManyV2", n, n if isinstance(n, int) else None, name or "dequeue_many")

    def dequeue_up_to(self, n: Any, name: str | None = None) -> Any:
        """Like dequeue_many, but a closed queue gives what is left (at least one element)."""
        return self._dequeue_n("QueueDequeueUpToV2", n, None, name or "dequeue_up_to")

    def size(self, name: str | None = None) -> Tensor:
        return make_op("QueueSizeV2", [self._queue_ref], _dtype("int32"), [], name or "size", self._attrs)

    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None) -> Operation:
        """Close the queue: pending and later enqueues fail, dequeues drain what is left then fail."""
        return make_multi_op("QueueCloseV2", [self._queue_ref], [], name or "close",
                             {**self._attrs, "cancel_pending_enqueues": bool(cancel_pending_enqueues)})

    def _dequeue_n(self, op_type: str, n: Any, static: int | None, name: str) -> Any:
        count = convert_to_tensor(n, dtype=_dtype("int32"))
        specs = [(t, TensorShape([static]).concatenate(s) if s.ndims is not None else TensorShape(None))
                 for t, s in zip(self._dtypes, self._shapes)]
        op = make_multi_op(op_type, [self._queue_ref, count], specs, name, self._attrs)
        return op.outputs[0] if len(op.outputs) == 1 else op.outputs

    def _components(self, vals: Any) -> list[Tensor]:
        vals = list(vals) if isinstance(vals, (list, tuple)) else [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Queue {self.name} holds {len(self._dtypes)} components, got {len(vals)} values")
        return [convert_to_tensor(v, dtype=t) for v, t in zip(vals, self._dtypes)]


class FIFOQueue(QueueBase):
    """A first-in first-out queue of tuples of tensors (TF1's `tf.FIFOQueue`).

    Args:
      capacity: the most elements it holds; enqueues wait for room (a negative capacity: no limit).
      dtypes: the component dtypes (one DType or a list).
      shapes: optional static shape of each component (needed by dequeue_many for static shapes).
      shared_name: the name its state is kept under (default: the op's name); ops of several
        graphs or processes with one shared_name use one queue.
    """

    def __init__(self, capacity: int, dtypes: Any, shapes: Any = None, names: Any = None,
                 shared_name: str | None = None, name: str = "fifo_queue"):
        super().__init__("FIFOQueueV2", capacity, dtypes, shapes, names, shared_name, name, {})


class PaddingFIFOQueue(QueueBase):
    """A FIFOQueue whose components may vary in size along dimensions given as None (TF1's
    `tf.PaddingFIFOQueue`): dequeue_many and dequeue_up_to pad each component with zeros (empty strings)
    to the largest size in the batch. Every component's rank must be known."""

    def __init__(self, capacity: int, dtypes: Any, shapes: Any, names: Any = None, shared_name: str | None = None,
                 name: str = "padding_fifo_queue"):
        if shapes is None or any(as_shape(s).ndims is None for s in shapes):
            raise ValueError(f"PaddingFIFOQueue needs the shape of every component, each of known rank (None for a "
                             f"dimension that varies), got shapes={shapes!r}")
        super().__init__("PaddingFIFOQueueV2", capacity, dtypes, shapes, names, shared_name, name, {"padded": True})


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues a random element while more than `min_after_dequeue` remain
    (TF1's `tf.RandomShuffleQueue`, the mixing buffer of shuffle_batch)."""

    def __init__(self, capacity: int, min_after_dequeue: int, dtypes: Any, shapes: Any = None, names: Any = None,
                 seed: int | None = None, shared_name: str | None = None, name: str = "random_shuffle_queue"):
        from tftk.ops.random_ops import get_seed
        if not 0 <= min_after_dequeue < capacity:
            raise ValueError(f"min_after_dequeue ({min_after_dequeue}) must be >= 0 and below capacity ({capacity})")
        seed1, seed2 = get_seed(seed)
        super().__init__("RandomShuffleQueueV2", capacity, dtypes, shapes, names, shared_name, name,
                         {"min_after_dequeue": int(min_after_dequeue),
                          "seed": None if seed1 is None else [int(seed1), int(seed2 or 0)]})


# ---- ConditionalAccumulator -----------------------------------------------------------------


class _AccumulatorState:
    """A running sum of gradients no older than the accumulator's step, and how many went in."""

    def __init__(self, attrs: dict):
        self.name = attrs["accumulator_name"]
        self.npdtype = attrs["dtype"].as_numpy_dtype
        self.shape: TensorShape = attrs["shape"]
        self.mean = attrs["reduction_type"] == "MEAN"
        self.global_step = 0
        self.total: np.ndarray | None = None
        self.count = 0
        self.cond = threading.Condition()

    def apply(self, gradient: np.ndarray, local_step: int, op: Operation) -> None:
        with self.cond:
            if local_step < self.global_step:
                return  # stale: computed from parameters older than the accumulator's step
            if not self.shape.is_compatible_with(gradient.shape) or \
                    (self.total is not None and self.total.shape != gradient.shape):
                expected = self.shape if self.total is None else list(self.total.shape)
                raise errors.InvalidArgumentError(None, op, f"{op.name}: gradient of shape {list(gradient.shape)} "
                                                  f"does not match accumulator {self.name}'s shape {expected}")
            if self.total is None:
                self.total = np.array(gradient, dtype=self.npdtype, copy=True)
            else:
                self.total += gradient
            self.count += 1
            self.cond.notify_all()

    def take(self, required: int, op: Operation, ctx: Any) -> np.ndarray:
        if required < 1:
            raise errors.InvalidArgumentError(None, op, f"{op.name}: num_required must be >= 1, got {required}")
        with self.cond:
            wait_until(self.cond, lambda: self.count >= required, op, ctx)
            result = (self.total / self.count).astype(self.npdtype) if self.mean else self.total
            self.total, self.count = None, 0
            self.global_step += 1
            return result

    def set_global_step(self, step: int) -> None:
        with self.cond:
            self.global_step = step


def _bind_accumulator(method: str):
    def factory(op: Operation, ctx: Any):
        accumulator = state_getter(op, ctx, lambda: _AccumulatorState(op.attrs))
        if method == "apply":
            return lambda local_step, gradient: accumulator().apply(np.asarray(gradient), int(local_step), op)
        if method == "take":
            return lambda required: accumulator().take(int(required), op, ctx)
        if method == "count":
            return lambda: np.asarray(accumulator().count, np.int32)
        return lambda step: accumulator().set_global_step(int(step))
    return factory


for _op_type, _method, _blocking in (("AccumulatorApplyGradient", "apply", False),
                                     ("AccumulatorTakeGradient", "take", True),
                                     ("AccumulatorNumAccumulated", "count", False),
                                     ("AccumulatorSetGlobalStep", "set_step", False)):
    registry.register_op(_op_type, _bind_accumulator(_method), ref_inputs=(0,), stateful=True,
                         blocking=_blocking, remote=True)
registry.register_op("ConditionalAccumulator", _bind_handle, stateful=True, holds_state=True)
registry.not_differentiable("ConditionalAccumulator", "AccumulatorApplyGradient", "AccumulatorTakeGradient",
                            "AccumulatorNumAccumulated", "AccumulatorSetGlobalStep")


class ConditionalAccumulator:
    """Averages gradients applied with a local step no older than its own (TF1's
    `tf.ConditionalAccumulator`): take_grad(n) waits for n of them, returns their mean, resets the
    sum and advances the accumulator's step, so late gradients of the previous step are dropped."""

    def __init__(self, dtype: Any, shape: Any = None, shared_name: str | None = None,
                 name: str = "conditional_accumulator", reduction_type: str = "MEAN"):
        if reduction_type not in ("MEAN", "SUM"):
            raise ValueError(f"reduction_type must be 'MEAN' or 'SUM', got {reduction_type!r}")
        self._dtype = _dtype(dtype)
        self._shape = as_shape(shape) if shape is not None else TensorShape(None)
        handle = make_op("ConditionalAccumulator", [], _dtype("string"), [], name,
                         {"dtype": self._dtype, "shape": self._shape, "shared_name": shared_name or "",
                          "reduction_type": reduction_type})
        self._handle = handle
        self._attrs = {"dtype": self._dtype, "shape": self._shape, "reduction_type": reduction_type,
                       "accumulator_name": handle.op.name}

    accumulator_ref = property(lambda self: self._handle)
    name = property(lambda self: self._handle.op.name)
    dtype = property(lambda self: self._dtype)

    def apply_grad(self, grad: Any, local_step: Any = 0, name: str | None = None) -> Operation:
        grad = convert_to_tensor(grad, dtype=self._dtype)
        if not self._shape.is_compatible_with(grad.shape):
            raise ValueError(f"Gradient of shape {grad.shape} does not fit accumulator {self.name} of shape {self._shape}")
        step = _as_int64(local_step)
        return make_multi_op("AccumulatorApplyGradient", [self._handle, step, grad], [], name or "AccumulatorApplyGradient",
                             self._attrs)

    def take_grad(self, num_required: Any, name: str | None = None) -> Tensor:
        required = convert_to_tensor(num_required, dtype=_dtype("int32"))
        return make_op("AccumulatorTakeGradient", [self._handle, required], self._dtype, self._shape,
                       name or "AccumulatorTakeGradient", self._attrs)

    def num_accumulated(self, name: str | None = None) -> Tensor:
        return make_op("AccumulatorNumAccumulated", [self._handle], _dtype("int32"), [],
                       name or "AccumulatorNumAccumulated", self._attrs)

    def set_global_step(self, new_global_step: Any, name: str | None = None) -> Operation:
        step = _as_int64(new_global_step)
        return make_multi_op("AccumulatorSetGlobalStep", [self._handle, step], [], name or "AccumulatorSetGlobalStep",
                             self._attrs)


def _dtype(value: Any) -> dtypes.DType:
    return dtypes.as_dtype(value)


def _as_int64(step: Any) -> Tensor:
    """A step as an int64 tensor (global steps are often int32 variables)."""
    from tftk.ops.math_ops import cast
    step = convert_to_tensor(step)
    return step if step.dtype == dtypes.int64 else cast(step, dtypes.int64)
