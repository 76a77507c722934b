"""`tf.data.experimental` (also `tf.contrib.data`): AUTOTUNE, map_and_batch, parallel_interleave and
make_saveable_from_iterator, each as TF 1.x spells it."""

from __future__ import annotations

from typing import Any, Callable

from tftk.data.iterator_state import make_saveable_from_iterator
from tftk.data.transformations import AUTOTUNE

__all__ = ["AUTOTUNE", "make_saveable_from_iterator", "map_and_batch", "parallel_interleave"]


def map_and_batch(map_func: Callable, batch_size: Any, num_parallel_batches: Any = None,
                  drop_remainder: bool = False, num_parallel_calls: Any = None) -> Callable:
    """`dataset.apply(map_and_batch(f, n))`: `dataset.map(f).batch(n)`, fused (the function runs over
    whole batches when it vectorises; see data/vectorize.py)."""
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError("num_parallel_batches and num_parallel_calls are mutually exclusive")

    def apply(dataset: Any) -> Any:
        calls = num_parallel_calls if num_parallel_calls is not None else num_parallel_batches
        return dataset.map(map_func, num_parallel_calls=calls).batch(batch_size, drop_remainder)

    return apply


def parallel_interleave(map_func: Callable, cycle_length: int, block_length: int = 1, sloppy: bool = False,
                        buffer_output_elements: int | None = None,
                        prefetch_input_elements: int | None = None) -> Callable:
    """`dataset.apply(parallel_interleave(f, cycle_length))`: interleave with the `cycle_length`
    open datasets read ahead on background threads (`sloppy=True`: elements in arrival order)."""
    def apply(dataset: Any) -> Any:
        from tftk.data.interleave import InterleaveDataset
        return InterleaveDataset(dataset, map_func, cycle_length, block_length, cycle_length,
                                 "tf.data.experimental.parallel_interleave()", deterministic=not sloppy,
                                 buffer_elements=buffer_output_elements)

    return apply
