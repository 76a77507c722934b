"""`tf.nn.static_rnn` (unrolled in the graph) and `tf.nn.dynamic_rnn` (one While op over time).

Both follow TF1: variables live under `variable_scope(scope or "rnn")`; past an example's
`sequence_length` its outputs are zeros and its state is copied through, so the final state is
the state at its last valid step. dynamic_rnn runs the cell in one While op over the time axis
(`scan_carry`: the state is carried, only the outputs are stacked), so its gradients are
back-propagation through time on the While op.
"""

from __future__ import annotations

from typing import Any, Sequence

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.ops import array_ops, math_ops
from tftk.ops.sequence_ops import sequence_mask
from tftk.ops.rnn_cell import RNNCell, flatten_state, map_state
from tftk.ops.variable_scope import variable_scope
from tftk.ops.while_loop import scan_carry

__all__ = ["static_rnn", "dynamic_rnn"]


def _initial_state(cell: RNNCell, initial_state: Any, batch_size: Any, dtype: Any, who: str) -> Any:
    if initial_state is not None:
        return map_state(convert_to_tensor, initial_state)
    if dtype is None:
        raise ValueError(f"{who}: if no initial_state is provided, dtype must be specified")
    return cell.zero_state(batch_size, dtype)


def _hold(mask: Tensor, new: Any, old: Any) -> Any:
    """mask * new + (1 - mask) * old, leaf-wise: examples past their length keep `old`."""
    return map_state(lambda n, o: mask * n + (1 - mask) * o, new, old)


def _batch_size(x: Tensor) -> Any:
    static = x.shape.as_list()[0] if x.shape.ndims else None
    return static if static is not None else array_ops.shape(x)[0]


def static_rnn(cell: RNNCell, inputs: Sequence[Any], initial_state: Any = None, dtype: Any = None,
               sequence_length: Any = None, scope: Any = None) -> tuple[list[Tensor], Any]:
    """Run `cell` over a Python list of [batch, depth] inputs, one graph copy of the cell per step.

    Returns:
      (outputs, state): the list of per-step outputs and the final state.
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("static_rnn: inputs must be a non-empty list of [batch, depth] tensors")
    inputs = [convert_to_tensor(x) for x in inputs]
    with variable_scope(scope, default_name="rnn"):
        state = _initial_state(cell, initial_state, _batch_size(inputs[0]), dtype, "static_rnn")
        lengths = None if sequence_length is None else convert_to_tensor(sequence_length, dtype=dtypes.int32)
        outputs = []
        for t, x in enumerate(inputs):
            output, new_state = cell(x, state)
            if lengths is not None:
                mask = array_ops.expand_dims(math_ops.cast(math_ops.less(t, lengths), output.dtype), 1)
                output = mask * output
                new_state = _hold(mask, new_state, state)
            outputs.append(output)
            state = new_state
        return outputs, state


def dynamic_rnn(cell: RNNCell, inputs: Any, sequence_length: Any = None, initial_state: Any = None,
                dtype: Any = None, parallel_iterations: int | None = None, swap_memory: bool = False,
                time_major: bool = False, scope: Any = None) -> tuple[Tensor, Any]:
    """Run `cell` over the time axis of `inputs` in a While loop.

    Args:
      inputs: [batch, time, depth] ([time, batch, depth] if `time_major`).
      sequence_length: optional int vector [batch]: steps past it give zero outputs and keep the state.
      initial_state: the cell's starting state; else zeros of `dtype`.

    Returns:
      (outputs, state): outputs shaped like `inputs` with depth `cell.output_size`; the final state.
    """
    x = convert_to_tensor(inputs)
    if x.shape.ndims is not None and x.shape.ndims != 3:
        raise ValueError(f"dynamic_rnn: inputs must be rank 3 [batch, time, depth], saw shape {x.shape}")
    with variable_scope(scope, default_name="rnn"):
        if not time_major:
            x = array_ops.transpose(x, [1, 0, 2])
        batch = x.shape.as_list()[1] if x.shape.ndims else None
        batch = batch if batch is not None else array_ops.shape(x)[1]
        state = _initial_state(cell, initial_state, batch, dtype, "dynamic_rnn")
        if sequence_length is None:
            def step(state, x_t):
                output, new_state = cell(x_t, state)
                return new_state, output
            elems: Any = x
        else:
            lengths = convert_to_tensor(sequence_length, dtype=dtypes.int32)
            if lengths.shape.ndims not in (None, 1):
                raise ValueError(f"dynamic_rnn: sequence_length must be a vector [batch], saw shape {lengths.shape}")
            out_dtype = flatten_state(state)[0].dtype
            masks = array_ops.expand_dims(array_ops.transpose(sequence_mask(lengths, array_ops.shape(x)[0],
                                                                            out_dtype)), 2)

            def step(state, elem):
                x_t, mask = elem
                output, new_state = cell(x_t, state)
                return _hold(mask, new_state, state), mask * output
            elems = (x, masks)
        final_state, outputs = scan_carry(step, elems, state)
        if not time_major:
            outputs = array_ops.transpose(outputs, [1, 0, 2])
        return outputs, final_state
