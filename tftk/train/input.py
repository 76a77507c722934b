"""TF1's queue-based input pipelines: producers of filenames / indices / slices, and batching.

Each function builds a queue plus a QueueRunner (added to the graph's QUEUE_RUNNERS), so a
program calls `tf.train.start_queue_runners(sess, coord)` and then runs the dequeued tensors.
With `num_epochs`, producers stop with OutOfRangeError after that many passes (the epoch counter
is a local variable: run `tf.local_variables_initializer()`).
"""

from __future__ import annotations

from typing import Any, Sequence

from tftk.framework import dtypes
from tftk.framework.ops import GraphKeys, Tensor, control_dependencies, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.ops.data_flow_ops import FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue
from tftk.train.queue_runner import QueueRunner, add_queue_runner
from tftk.ops import math_ops
from tftk.ops.array_ops import expand_dims, fill, identity
from tftk.ops.array_ops import shape as shape_op
from tftk.ops.scatter_ops import dynamic_partition
from tftk.ops.variables import Variable
from tftk.ops.random_ops import random_shuffle
from tftk.ops.sequence_ops import range as range_op
from tftk.ops.gather_ops import gather

__all__ = ["limit_epochs", "input_producer", "string_input_producer", "range_input_producer",
           "slice_input_producer", "batch", "shuffle_batch", "batch_join", "shuffle_batch_join", "maybe_batch",
           "maybe_batch_join", "maybe_shuffle_batch", "maybe_shuffle_batch_join"]


def limit_epochs(tensor: Any, num_epochs: int | None = None, name: str | None = None) -> Tensor:
    """`tensor`, readable `num_epochs` times; the next read raises OutOfRangeError."""
    tensor = convert_to_tensor(tensor)
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0, not {num_epochs}")
    with name_scope(name, "limit_epochs"):
        epochs = Variable(0, dtype=dtypes.int64, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                          name="epochs")
        with control_dependencies([epochs.count_up_to(num_epochs)]):
            return identity(tensor, name="limited")


def input_producer(input_tensor: Any, element_shape: Any = None, num_epochs: int | None = None,
                   shuffle: bool = True, seed: int | None = None, capacity: int = 32,
                   shared_name: str | None = None, summary_name: str | None = None, name: str | None = None,
                   cancel_op: Any = None) -> QueueBase:
    """A queue fed, pass after pass, with the rows of `input_tensor` (shuffled per pass)."""
    input_tensor = convert_to_tensor(input_tensor)
    shape = input_tensor.shape[1:] if input_tensor.shape.ndims else TensorShape(None)
    element_shape = shape.merge_with(as_shape(element_shape)) if element_shape is not None else shape
    if not element_shape.is_fully_defined():
        raise ValueError("Either `input_tensor` must have a fully defined shape beyond its first dimension "
                         "or `element_shape` must be given")
    with name_scope(name, "input_producer"):
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = FIFOQueue(capacity, [input_tensor.dtype], shapes=[element_shape], shared_name=shared_name)
        add_queue_runner(QueueRunner(queue, [queue.enqueue_many([input_tensor])], cancel_op=cancel_op))
    return queue


def string_input_producer(string_tensor: Any, num_epochs: int | None = None, shuffle: bool = True,
                          seed: int | None = None, capacity: int = 32, shared_name: str | None = None,
                          name: str | None = None, cancel_op: Any = None) -> QueueBase:
    """A queue of filenames for a reader: `reader.read(tf.train.string_input_producer(files))`."""
    strings = convert_to_tensor(string_tensor, dtype=dtypes.string)
    if strings.shape.ndims != 1:
        raise ValueError(f"string_input_producer expects a 1-D list of strings, got shape {strings.shape}")
    if strings.shape[0] == 0:
        raise ValueError("string_input_producer requires a non-null input tensor (no file names given)")
    return input_producer(strings, [], num_epochs, shuffle, seed, capacity, shared_name,
                          name=name or "input_producer", cancel_op=cancel_op)


def range_input_producer(limit: int, num_epochs: int | None = None, shuffle: bool = True, seed: int | None = None,
                         capacity: int = 32, shared_name: str | None = None, name: str | None = None) -> Tensor:
    """The next integer of 0..limit-1 (shuffled per pass) each run."""
    queue = input_producer(range_op(limit), [], num_epochs, shuffle, seed, capacity, shared_name,
                           name=name or "input_producer")
    return queue.dequeue()


def slice_input_producer(tensor_list: Sequence[Any], num_epochs: int | None = None, shuffle: bool = True,
                         seed: int | None = None, capacity: int = 32, shared_name: str | None = None,
                         name: str | None = None) -> list[Tensor]:
    """The same row of every tensor in `tensor_list` (they share a first dimension) each run."""
    tensors = [convert_to_tensor(t) for t in tensor_list]
    if not tensors:
        raise ValueError("slice_input_producer needs at least one tensor")
    rows = {t.shape[0] for t in tensors if t.shape.ndims}
    if len(rows) != 1 or None in rows:
        raise ValueError(f"slice_input_producer needs tensors with one known first dimension, got shapes "
                         f"{[str(t.shape) for t in tensors]}")
    index = range_input_producer(rows.pop(), num_epochs, shuffle, seed, capacity, shared_name, name)
    return [gather(t, index) for t in tensors]


def _flatten(tensors: Any) -> tuple[list[Tensor], Any]:
    """The tensors of a list/tuple/dict/single tensor and a function rebuilding that structure."""
    if isinstance(tensors, dict):  # components in key order, as TF queues them
        keys = sorted(tensors)
        return [convert_to_tensor(tensors[k]) for k in keys], lambda out: dict(zip(keys, out))
    if isinstance(tensors, (list, tuple)):  # TF returns a lone component as the tensor itself
        return [convert_to_tensor(t) for t in tensors], lambda out: out[0] if len(out) == 1 else list(out)
    return [convert_to_tensor(tensors)], lambda out: out[0]


def _shapes(tensors: list[Tensor], shapes: Any, enqueue_many: bool, dynamic_pad: bool = False) -> list[TensorShape]:
    """The example shapes a batching queue holds: fully defined, or with dynamic_pad of known rank."""
    if shapes is not None:
        result = [as_shape(s) for s in shapes]
    else:
        result = [t.shape[1:] if enqueue_many and t.shape.ndims else t.shape for t in tensors]
    if dynamic_pad:
        if any(s.ndims is None for s in result):
            raise ValueError(f"dynamic_pad needs the rank of every tensor: {[str(s) for s in result]}; pass shapes=")
    elif not all(s.is_fully_defined() for s in result):
        raise ValueError(f"All shapes must be fully defined to batch: {[str(s) for s in result]}; pass shapes= "
                         f"or dynamic_pad=True")
    return result


def _keep(keep_input: Any, enqueue_many: bool) -> Tensor | None:
    """The maybe_* functions' filter as a bool tensor: a scalar, or one flag per example (enqueue_many)."""
    if keep_input is None:
        return None
    keep = convert_to_tensor(keep_input, dtype=dtypes.bool)
    if keep.shape.ndims is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and keep.shape.ndims == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if keep.shape.ndims > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    return keep


def _enqueue(queue: QueueBase, flat: list[Tensor], enqueue_many: bool, keep: Tensor | None) -> Any:
    """The enqueue op of one example (or batch of them), keeping only those `keep` selects."""
    if keep is None:
        return queue.enqueue_many(flat) if enqueue_many else queue.enqueue(flat)
    if not enqueue_many:  # one example, kept or not: enqueue a batch of one or of none
        flat = [expand_dims(t, 0) for t in flat]
    selected = []
    for t in flat:
        flags = keep if keep.shape.ndims == 1 else fill(shape_op(t)[:1], keep)
        selected.append(dynamic_partition(t, math_ops.cast(flags, dtypes.int32), num_partitions=2)[1])
    return queue.enqueue_many(selected)


def _batch(queue_class: Any, tensors_list: Sequence[Any], batch_size: int, threads_per_item: int, capacity: int,
           enqueue_many: bool, shapes: Any, allow_smaller_final_batch: bool, name: str, keep_input: Any = None,
           **queue_args: Any) -> Any:
    """One queue filled by `threads_per_item` threads per structure of `tensors_list` (all alike)."""
    flats = [_flatten(tensors) for tensors in tensors_list]
    first, rebuild = flats[0]
    for flat, _ in flats[1:]:
        if len(flat) != len(first) or any(a.dtype is not b.dtype for a, b in zip(flat, first)):
            raise ValueError("Expected types to be the same for every element of tensors_list, got "
                             f"{[t.dtype.name for t in first]} and {[t.dtype.name for t in flat]}")
    with name_scope(None, name):
        keep = _keep(keep_input, enqueue_many)
        queue = queue_class(capacity=capacity, dtypes=[t.dtype for t in first],
                            shapes=_shapes(first, shapes, enqueue_many, queue_class is PaddingFIFOQueue),
                            **queue_args)
        enqueues = [_enqueue(queue, flat, enqueue_many, keep) for flat, _ in flats]
        add_queue_runner(QueueRunner(queue, [op for op in enqueues for _ in range(threads_per_item)]))
        out = queue.dequeue_up_to(batch_size) if allow_smaller_final_batch else queue.dequeue_many(batch_size)
    return rebuild(out if isinstance(out, list) else [out])


def batch(tensors: Any, batch_size: int, num_threads: int = 1, capacity: int = 32, enqueue_many: bool = False,
          shapes: Any = None, dynamic_pad: bool = False, allow_smaller_final_batch: bool = False,
          shared_name: str | None = None, name: str | None = None) -> Any:
    """Batches of `batch_size` examples in arrival order (a FIFOQueue filled by `num_threads` threads;
    with `dynamic_pad`, a PaddingFIFOQueue: examples may vary in size along dimensions of unknown size,
    and each batch is padded with zeros to its largest)."""
    return _batch(PaddingFIFOQueue if dynamic_pad else FIFOQueue, [tensors], batch_size, num_threads, capacity, enqueue_many, shapes,
                  allow_smaller_final_batch, name or "batch", shared_name=shared_name)


def shuffle_batch(tensors: Any, batch_size: int, capacity: int, min_after_dequeue: int, num_threads: int = 1,
                  seed: int | None = None, enqueue_many: bool = False, shapes: Any = None,
                  allow_smaller_final_batch: bool = False, shared_name: str | None = None,
                  name: str | None = None) -> Any:
    """Batches drawn at random from a buffer of at least `min_after_dequeue` examples."""
    return _batch(RandomShuffleQueue, [tensors], batch_size, num_threads, capacity, enqueue_many, shapes,
                  allow_smaller_final_batch, name or "shuffle_batch", min_after_dequeue=min_after_dequeue,
                  seed=seed, shared_name=shared_name)


def batch_join(tensors_list: Sequence[Any], batch_size: int, capacity: int = 32, enqueue_many: bool = False,
               shapes: Any = None, dynamic_pad: bool = False, allow_smaller_final_batch: bool = False,
               shared_name: str | None = None, name: str | None = None) -> Any:
    """Batches mixing several sources: one thread enqueues each structure of `tensors_list`."""
    return _batch(PaddingFIFOQueue if dynamic_pad else FIFOQueue, tensors_list, batch_size, 1, capacity, enqueue_many, shapes,
                  allow_smaller_final_batch, name or "batch_join", shared_name=shared_name)


def shuffle_batch_join(tensors_list: Sequence[Any], batch_size: int, capacity: int, min_after_dequeue: int,
                       seed: int | None = None, enqueue_many: bool = False, shapes: Any = None,
                       allow_smaller_final_batch: bool = False, shared_name: str | None = None,
                       name: str | None = None) -> Any:
    """shuffle_batch over several sources, one enqueuing thread each."""
    return _batch(RandomShuffleQueue, tensors_list, batch_size, 1, capacity, enqueue_many, shapes,
                  allow_smaller_final_batch, name or "shuffle_batch_join", min_after_dequeue=min_after_dequeue,
                  seed=seed, shared_name=shared_name)


def maybe_batch(tensors: Any, keep_input: Any, batch_size: int, num_threads: int = 1, capacity: int = 32,
                enqueue_many: bool = False, shapes: Any = None, dynamic_pad: bool = False,
                allow_smaller_final_batch: bool = False, shared_name: str | None = None,
                name: str | None = None) -> Any:
    """`batch` of only the examples `keep_input` selects (a scalar bool, or one per example with enqueue_many)."""
    return _batch(PaddingFIFOQueue if dynamic_pad else FIFOQueue, [tensors], batch_size, num_threads, capacity, enqueue_many, shapes,
                  allow_smaller_final_batch, name or "batch", keep_input, shared_name=shared_name)


def maybe_batch_join(tensors_list: Sequence[Any], keep_input: Any, batch_size: int, capacity: int = 32,
                     enqueue_many: bool = False, shapes: Any = None, dynamic_pad: bool = False,
                     allow_smaller_final_batch: bool = False, shared_name: str | None = None,
                     name: str | None = None) -> Any:
    """`batch_join` of only the examples `keep_input` selects."""
    return _batch(PaddingFIFOQueue if dynamic_pad else FIFOQueue, tensors_list, batch_size, 1, capacity, enqueue_many, shapes,
                  allow_smaller_final_batch, name or "batch_join", keep_input, shared_name=shared_name)


def maybe_shuffle_batch(tensors: Any, batch_size: int, capacity: int, min_after_dequeue: int, keep_input: Any,
                        num_threads: int = 1, seed: int | None = None, enqueue_many: bool = False,
                        shapes: Any = None, allow_smaller_final_batch: bool = False,
                        shared_name: str | None = None, name: str | None = None) -> Any:
    """`shuffle_batch` of only the examples `keep_input` selects."""
    return _batch(RandomShuffleQueue, [tensors], batch_size, num_threads, capacity, enqueue_many, shapes,
                  allow_smaller_final_batch, name or "shuffle_batch", keep_input,
                  min_after_dequeue=min_after_dequeue, seed=seed, shared_name=shared_name)


def maybe_shuffle_batch_join(tensors_list: Sequence[Any], batch_size: int, capacity: int, min_after_dequeue: int,
                             keep_input: Any, seed: int | None = None, enqueue_many: bool = False,
                             shapes: Any = None, allow_smaller_final_batch: bool = False,
                             shared_name: str | None = None, name: str | None = None) -> Any:
    """`shuffle_batch_join` of only the examples `keep_input` selects."""
    return _batch(RandomShuffleQueue, tensors_list, batch_size, 1, capacity, enqueue_many, shapes,
                  allow_smaller_final_batch, name or "shuffle_batch_join", keep_input,
                  min_after_dequeue=min_after_dequeue, seed=seed, shared_name=shared_name)
