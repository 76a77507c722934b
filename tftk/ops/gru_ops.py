"""The fused GRU cell op (TF's GRUBlockCell) and the cells built on it.

`gru_block_cell` adds TF's ``GRUBlockCell`` op: both products and the gate arithmetic of one GRU
step in one kernel (`tftk.kernels.gru`), outputs ``(r, u, c, h)``. Its gradient is TF's: the
``GRUBlockCellGrad`` op turns the gradient of ``h`` into those of x, h_prev, ``c_bar`` and
``[r_bar, u_bar]``, and MatMul / BiasAddGrad ops finish the weights (gradients reaching r, u and c
are ignored, as in TF). `GRUCell` (with its default tanh) takes this path: one op per step instead
of about eleven. `tf.contrib.rnn.GRUBlockCell` (weights `w_ru`, `b_ru`, `w_c`, `b_c`) and
`GRUBlockCellV2` (GRUCell's names `gates/kernel`, ...) are the contrib cells on it.
"""

from __future__ import annotations

from typing import Any

from tftk.framework import batch_rows, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops
from tftk.ops.init_ops import constant_initializer, zeros_initializer
from tftk.ops.op_builder import make_multi_op, make_op
from tftk.ops.rnn_cell import HiddenStateCell, _input_depth
from tftk.ops.variable_scope import get_variable, variable_scope

__all__ = ["gru_block_cell", "GRUBlockCell", "GRUBlockCellV2"]


def _bind_forward(op, ctx):
    from tftk.kernels.gru import gru_block_cell as kernel
    return kernel


def _bind_backward(op, ctx):
    from tftk.kernels.gru import gru_block_cell_grad as kernel
    transposed = bool(op.attrs.get(registry.TRANSPOSED_INPUTS_ATTR))  # w_ru, w_c come transposed
    with_d_x = 0 not in op.attrs.get(registry.UNREAD_OUTPUTS_ATTR, ())
    if transposed or not with_d_x:
        return lambda *args: kernel(*args, transposed_weights=transposed, with_d_x=with_d_x)
    return kernel


registry.register_op("GRUBlockCell", _bind_forward, fresh=True, rows=batch_rows.per_example(0, 1))
# The gradient multiplies by w_ru and w_c transposed (a static GRU's steps may share one copy of
# each), and makes d_x only when it is read (not for a first layer's data input).
registry.register_op("GRUBlockCellGrad", _bind_backward, fresh=True, transposed_inputs=lambda op: (2, 3),
                     skips_unread_outputs=True, rows=batch_rows.per_example(0, 1, 6, 7, 8, 9))
registry.not_differentiable("GRUBlockCellGrad")


def gru_block_cell(x: Any, h_prev: Any, w_ru: Any, w_c: Any, b_ru: Any, b_c: Any,
                   name: str | None = None) -> tuple[Tensor, ...]:
    """TF's `GRUBlockCell` raw op: returns (r, u, c, h), each [batch, units]."""
    x, h_prev, w_ru, w_c, b_ru, b_c = (convert_to_tensor(t) for t in (x, h_prev, w_ru, w_c, b_ru, b_c))
    if any(t.shape.ndims != 2 for t in (x, h_prev, w_ru, w_c)) or any(t.shape.ndims != 1 for t in (b_ru, b_c)):
        raise ValueError(f"GRUBlockCell: x, h_prev, w_ru and w_c must be 2-D and b_ru, b_c 1-D, got shapes "
                         f"{x.shape}, {h_prev.shape}, {w_ru.shape}, {w_c.shape}, {b_ru.shape}, {b_c.shape}")
    rows = TensorShape([x.shape[0], w_c.shape[1]])
    op = make_multi_op("GRUBlockCell", [x, h_prev, w_ru, w_c, b_ru, b_c], [(x.dtype, rows)] * 4, name)
    return tuple(op.outputs)


@registry.register_gradient("GRUBlockCell")
def _gru_block_cell_grad(op, *grads):
    x, h_prev, w_ru, w_c, b_ru, b_c = op.inputs
    r, u, c, h = op.outputs
    d_h = grads[3] if grads[3] is not None else array_ops.zeros_like(h)
    grad_op = make_multi_op("GRUBlockCellGrad", [x, h_prev, w_ru, w_c, b_ru, b_c, r, u, c, d_h],
                            [(x.dtype, x.shape), (x.dtype, h_prev.shape), (x.dtype, c.shape),
                             (x.dtype, TensorShape([x.shape[0], w_ru.shape[1]]))])
    d_x, d_h_prev, d_c_bar, d_ru_bar = grad_op.outputs
    d_w_ru = math_ops.matmul(array_ops.concat([x, h_prev], 1), d_ru_bar, transpose_a=True)
    d_w_c = math_ops.matmul(array_ops.concat([x, h_prev * r], 1), d_c_bar, transpose_a=True)
    d_b_ru = make_op("BiasAddGrad", [d_ru_bar], x.dtype, b_ru.shape)
    d_b_c = make_op("BiasAddGrad", [d_c_bar], x.dtype, b_c.shape)
    return [d_x, d_h_prev, d_w_ru, d_w_c, d_b_ru, d_b_c]


def gru_block_step(inputs: Tensor, h_prev: Tensor, units: int, kernel_initializer: Any = None,
                   bias_initializer: Any = None, tf1_names: bool = True) -> Tensor:
    """One fused step in the current variable scope: returns the new h.

    Weights as GRUCell's (`gates/kernel`, `gates/bias`, `candidate/kernel`, `candidate/bias`), or with
    `tf1_names=False` as contrib's GRUBlockCell's (`w_ru`, `b_ru`, `w_c`, `b_c`). The gate bias starts
    at 1.0 unless `bias_initializer` says otherwise (mostly "reset off, keep the state").
    """
    depth = _input_depth(inputs, "GRU cell")
    dtype = inputs.dtype
    gate_bias_init = bias_initializer if bias_initializer is not None else constant_initializer(1.0)
    candidate_bias_init = bias_initializer if bias_initializer is not None else zeros_initializer()
    shapes = {"ru": [depth + units, 2 * units], "c": [depth + units, units]}
    if tf1_names:
        with variable_scope("gates"):
            w_ru = get_variable("kernel", shapes["ru"], dtype=dtype, initializer=kernel_initializer)
            b_ru = get_variable("bias", [2 * units], dtype=dtype, initializer=gate_bias_init)
        with variable_scope("candidate"):
            w_c = get_variable("kernel", shapes["c"], dtype=dtype, initializer=kernel_initializer)
            b_c = get_variable("bias", [units], dtype=dtype, initializer=candidate_bias_init)
    else:
        w_ru = get_variable("w_ru", shapes["ru"], dtype=dtype, initializer=kernel_initializer)
        b_ru = get_variable("b_ru", [2 * units], dtype=dtype, initializer=gate_bias_init)
        w_c = get_variable("w_c", shapes["c"], dtype=dtype, initializer=kernel_initializer)
        b_c = get_variable("b_c", [units], dtype=dtype, initializer=candidate_bias_init)
    return gru_block_cell(inputs, convert_to_tensor(h_prev), w_ru, w_c, b_ru, b_c)[3]


class GRUBlockCell(HiddenStateCell):
    """`tf.contrib.rnn.GRUBlockCell`: GRUCell's step as one op, weights `w_ru`, `b_ru`, `w_c`, `b_c`."""

    _default_name = "gru_cell"
    _tf1_names = False

    def __init__(self, num_units: int | None = None, cell_size: int | None = None, reuse: Any = None,
                 name: str = "gru_cell"):
        units = num_units if num_units is not None else cell_size
        if units is None:
            raise ValueError(f"{type(self).__name__}: num_units is required")
        super().__init__(reuse, name)
        self._num_units = int(units)

    def _step(self, inputs: Tensor, state: Tensor) -> tuple[Tensor, Tensor]:
        h = gru_block_step(inputs, state, self._num_units, tf1_names=self._tf1_names)
        return h, h


class GRUBlockCellV2(GRUBlockCell):
    """`tf.contrib.rnn.GRUBlockCellV2`: GRUBlockCell with GRUCell's variable names (`gates/kernel`, ...)."""

    _tf1_names = True
