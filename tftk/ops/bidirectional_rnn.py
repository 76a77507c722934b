"""`tf.nn.bidirectional_dynamic_rnn` and `tf.nn.static_bidirectional_rnn`: a forward and a backward RNN
over the same sequence.

As TF1 builds them: under `variable_scope(scope or "bidirectional_rnn")`, the forward RNN in scope
"fw" and the backward one in "bw" (so a TF checkpoint's variable names load). The backward RNN reads
each example reversed within its own length (`reverse_sequence` when `sequence_length` is given, else
the whole time axis), and its outputs are reversed back, so output t of both directions belongs to
input t. The dynamic version returns the two output tensors apart; the static one concatenates them
per step along the depth.
"""

from __future__ import annotations

from typing import Any, Sequence

from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.ops import array_ops
from tftk.ops.index_ops import reverse_sequence
from tftk.ops.rnn import dynamic_rnn, static_rnn
from tftk.ops.rnn_cell import RNNCell
from tftk.ops.tile_pad_ops import reverse
from tftk.ops.variable_scope import variable_scope

__all__ = ["bidirectional_dynamic_rnn", "static_bidirectional_rnn"]


def _reversed_in_time(x: Tensor, lengths: Any, time_axis: int, batch_axis: int) -> Tensor:
    if lengths is None:
        return reverse(x, axis=[time_axis])
    return reverse_sequence(x, lengths, seq_axis=time_axis, batch_axis=batch_axis)


def bidirectional_dynamic_rnn(cell_fw: RNNCell, cell_bw: RNNCell, inputs: Any, sequence_length: Any = None,
                              initial_state_fw: Any = None, initial_state_bw: Any = None, dtype: Any = None,
                              parallel_iterations: int | None = None, swap_memory: bool = False,
                              time_major: bool = False, scope: Any = None) -> tuple[tuple[Tensor, Tensor], tuple]:
    """dynamic_rnn forwards and backwards over `inputs` ([batch, time, depth], or [time, batch, depth]
    if `time_major`).

    Returns:
      ((output_fw, output_bw), (state_fw, state_bw)): the outputs of each direction, both in the
      inputs' time order, and each direction's final state.
    """
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)
    with variable_scope(scope, default_name="bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(cell_fw, inputs, sequence_length, initial_state_fw, dtype,
                                              parallel_iterations, swap_memory, time_major, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            backwards = _reversed_in_time(convert_to_tensor(inputs), sequence_length, time_axis, batch_axis)
            reversed_bw, state_bw = dynamic_rnn(cell_bw, backwards, sequence_length, initial_state_bw, dtype,
                                                parallel_iterations, swap_memory, time_major, scope=bw_scope)
    output_bw = _reversed_in_time(reversed_bw, sequence_length, time_axis, batch_axis)
    return (output_fw, output_bw), (state_fw, state_bw)


def _reversed_steps(steps: Sequence[Tensor], lengths: Any) -> list[Tensor]:
    """The list of per-step tensors reversed, each example within its own length when `lengths` is given."""
    if lengths is None:
        return list(reversed(steps))
    stacked = array_ops.stack(list(steps))
    return array_ops.unstack(reverse_sequence(stacked, lengths, seq_axis=0, batch_axis=1), num=len(steps))


def static_bidirectional_rnn(cell_fw: RNNCell, cell_bw: RNNCell, inputs: Sequence[Any], initial_state_fw: Any = None,
                             initial_state_bw: Any = None, dtype: Any = None, sequence_length: Any = None,
                             scope: Any = None) -> tuple[list[Tensor], Any, Any]:
    """static_rnn forwards and backwards over a list of [batch, depth] inputs.

    Returns:
      (outputs, state_fw, state_bw): per step, the forward and backward outputs concatenated along the
      depth; each direction's final state.
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("static_bidirectional_rnn: inputs must be a non-empty list of [batch, depth] tensors")
    with variable_scope(scope, default_name="bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype, sequence_length, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            backwards = _reversed_steps([convert_to_tensor(x) for x in inputs], sequence_length)
            reversed_bw, state_bw = static_rnn(cell_bw, backwards, initial_state_bw, dtype, sequence_length,
                                               scope=bw_scope)
    output_bw = _reversed_steps(reversed_bw, sequence_length)
    outputs = [array_ops.concat([fw, bw], 1) for fw, bw in zip(output_fw, output_bw)]
    return outputs, state_fw, state_bw
