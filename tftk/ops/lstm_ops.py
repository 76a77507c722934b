"""The fused LSTM cell op (TF's LSTMBlockCell) and the cells built on it.

`lstm_block_cell` adds TF's ``LSTMBlockCell`` op: one kernel for ``[x, h] @ w + b`` and the whole
gate chain (`tftk.kernels.lstm`), outputs ``(i, cs, f, o, ci, co, h)``. Its gradient is TF's: the
``LSTMBlockCellGrad`` op turns the gradients of ``cs`` and ``h`` into the gate gradient ``dicfo``,
and plain MatMul / BiasAddGrad ops finish x, h_prev, w and b (gradients reaching the other five
outputs are ignored, as in TF). `tf.contrib.rnn.LSTMBlockCell` and `LSTMBlockFusedCell` use it, and
so does `BasicLSTMCell` (with its default tanh): one op per step instead of about twelve.
"""

from __future__ import annotations

from typing import Any

from tftk.framework import batch_rows, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops
from tftk.ops.slicing_ops import slice as slice_
from tftk.ops.array_ops import unstack
from tftk.ops.gather_ops import where
from tftk.ops.init_ops import zeros_initializer
from tftk.ops.op_builder import make_multi_op, make_op
from tftk.ops.rnn_cell import LSTMStateTuple, RNNCell, _input_depth, zero_rows
from tftk.ops.variable_scope import get_variable, variable_scope

__all__ = ["lstm_block_cell", "LSTMBlockCell", "LSTMBlockFusedCell"]

_OUTPUTS = ("i", "cs", "f", "o", "ci", "co", "h")
# tftk's own attr (a leading underscore: TF's graph importer lets it through): differentiate through
# cell_clip as LSTMCell's clip_by_value does, where TF's op passes the gradient as if unclipped.
_CLIP_GRADIENT = "_clip_gradient"


def _bind_forward(op, ctx):
    from tftk.kernels.lstm import lstm_block_cell as kernel
    forget_bias, cell_clip, peephole = (op.get_attr(k) for k in ("forget_bias", "cell_clip", "use_peephole"))
    return lambda *args: kernel(*args, forget_bias, cell_clip, peephole)


def _bind_backward(op, ctx):
    from tftk.kernels.lstm import lstm_block_cell_grad as kernel
    peephole, clip_gradient = op.get_attr("use_peephole"), op.attrs.get(_CLIP_GRADIENT, -1.0)
    return lambda *args: kernel(*args, peephole, clip_gradient)


registry.register_op("LSTMBlockCell", _bind_forward, fresh=True, rows=batch_rows.per_example(0, 1, 2))
# inputs (cs_prev, the 3 peephole weights, the gates and cs, the gradients of cs and h); outputs (cs_prev's
# gradient, the gates', and the peephole weights': sums over the batch)
registry.register_op("LSTMBlockCellGrad", _bind_backward, fresh=True,
                     rows=batch_rows.per_example(0, *range(4, 12), outputs=(batch_rows.ROWS,) * 2
                                                 + (batch_rows.PARTIAL,) * 3))
registry.not_differentiable("LSTMBlockCellGrad")


def lstm_block_cell(x: Any, cs_prev: Any, h_prev: Any, w: Any, wci: Any, wcf: Any, wco: Any, b: Any,
                    forget_bias: float = 1.0, cell_clip: float = 3.0, use_peephole: bool = False,
                    name: str | None = None, differentiate_clip: bool = False) -> tuple[Tensor, ...]:
    """TF's `LSTMBlockCell` raw op: returns (i, cs, f, o, ci, co, h), each [batch, units].

    `cell_clip` <= 0 means no clipping (TF's op default is 3.0; the cell classes pass -1 unless asked).
    `differentiate_clip`: the gradient stops where the clip bit (LSTMCell's semantics, not the op's).
    `h_prev` may have another width than the cell (LSTMCell's projected output).
    """
    x, cs_prev, h_prev, w, wci, wcf, wco, b = (convert_to_tensor(t) for t in (x, cs_prev, h_prev, w, wci, wcf,
                                                                             wco, b))
    if x.shape.ndims != 2 or cs_prev.shape.ndims != 2 or h_prev.shape.ndims != 2 or w.shape.ndims != 2:
        raise ValueError(f"LSTMBlockCell: x, cs_prev, h_prev and w must be 2-D, got shapes {x.shape}, "
                         f"{cs_prev.shape}, {h_prev.shape}, {w.shape}")
    units = w.shape.as_list()[1]
    rows = TensorShape([x.shape.as_list()[0], None if units is None else units // 4])
    attrs = {"forget_bias": float(forget_bias), "cell_clip": float(cell_clip), "use_peephole": bool(use_peephole)}
    if differentiate_clip and cell_clip > 0:
        attrs[_CLIP_GRADIENT] = float(cell_clip)
    op = make_multi_op("LSTMBlockCell", [x, cs_prev, h_prev, w, wci, wcf, wco, b], [(x.dtype, rows)] * 7,
                       name, attrs)
    return tuple(op.outputs)


@registry.register_gradient("LSTMBlockCell")
def _lstm_block_cell_grad(op, *grads):
    x, cs_prev, h_prev, w, wci, wcf, wco, b = op.inputs
    i, cs, f, o, ci, co, h = op.outputs
    cs_grad, h_grad = grads[1], grads[6]
    cs_grad = cs_grad if cs_grad is not None else array_ops.zeros_like(cs)
    h_grad = h_grad if h_grad is not None else array_ops.zeros_like(h)
    attrs = {"use_peephole": op.get_attr("use_peephole")}
    if _CLIP_GRADIENT in op.attrs:
        attrs[_CLIP_GRADIENT] = op.attrs[_CLIP_GRADIENT]
    grad_op = make_multi_op("LSTMBlockCellGrad", [cs_prev, wci, wcf, wco, i, cs, f, o, ci, co, cs_grad, h_grad],
                            [(x.dtype, cs_prev.shape), (x.dtype, TensorShape([cs_prev.shape[0], w.shape[1]])),
                             (x.dtype, wci.shape), (x.dtype, wcf.shape), (x.dtype, wco.shape)], attrs=attrs)
    cs_prev_grad, dicfo, wci_grad, wcf_grad, wco_grad = grad_op.outputs
    xh = array_ops.concat([x, h_prev], 1)
    xh_grad = math_ops.matmul(dicfo, w, transpose_b=True)
    depth = x.shape.as_list()[1]
    if depth is None:  # only known when the step runs: the slice bounds come from shape ops
        depth = array_ops.shape(x)[1:]
        x_grad = slice_(xh_grad, [0, 0], array_ops.concat([[-1], depth], 0))
        h_prev_grad = slice_(xh_grad, array_ops.concat([[0], depth], 0), [-1, -1])
    else:  # static bounds: two ops per step instead of eight
        x_grad = slice_(xh_grad, [0, 0], [-1, depth])
        h_prev_grad = slice_(xh_grad, [0, depth], [-1, -1])
    w_grad = math_ops.matmul(xh, dicfo, transpose_a=True)
    b_grad = make_op("BiasAddGrad", [dicfo], dicfo.dtype, b.shape)
    return [x_grad, cs_prev_grad, h_prev_grad, w_grad, wci_grad, wcf_grad, wco_grad, b_grad]


_BLOCK_PEEPHOLES = ("w_i_diag", "w_f_diag", "w_o_diag")  # LSTMBlockCell's creation order
_LSTM_CELL_PEEPHOLES = ("w_f_diag", "w_i_diag", "w_o_diag")  # LSTMCell's


def _cell_weights(depth: int, units: int, dtype: Any, use_peephole: bool, initializer: Any = None,
                  h_units: int | None = None, peephole_order: tuple[str, ...] = _BLOCK_PEEPHOLES):
    """`kernel` [depth + h_units, 4 units], `bias` [4 units] and the peepholes (i, f, o; zeros when unused).

    Variables are created in `peephole_order`, so a checkpoint lists them as TF's cell does.
    """
    h_units = units if h_units is None else h_units
    w = get_variable("kernel", [depth + h_units, 4 * units], dtype=dtype, initializer=initializer)
    b = get_variable("bias", [4 * units], dtype=dtype, initializer=zeros_initializer())
    if use_peephole:
        made = {n: get_variable(n, [units], dtype=dtype, initializer=initializer) for n in peephole_order}
        peeps = [made[n] for n in _BLOCK_PEEPHOLES]
    else:
        peeps = [array_ops.zeros([units], dtype)] * 3
    return w, b, peeps


def block_cell_step(inputs: Tensor, cs_prev: Tensor, h_prev: Tensor, units: int, forget_bias: float,
                    cell_clip: float = -1.0, use_peephole: bool = False, initializer: Any = None,
                    lstm_cell: bool = False) -> tuple[Tensor, Tensor]:
    """One fused step in the current variable scope (weights `kernel`, `bias`): returns (cs, h).

    `lstm_cell`: LSTMCell's conventions (its peephole creation order, the clip differentiated).
    """
    depth = _input_depth(inputs, "LSTM cell")
    order = _LSTM_CELL_PEEPHOLES if lstm_cell else _BLOCK_PEEPHOLES
    w, b, (wci, wcf, wco) = _cell_weights(depth, units, inputs.dtype, use_peephole, initializer,
                                          h_prev.shape.as_list()[1] or units, order)
    _, cs, _, _, _, _, h = lstm_block_cell(inputs, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias, cell_clip,
                                           use_peephole, differentiate_clip=lstm_cell)
    return cs, h


class LSTMBlockCell(RNNCell):
    """`tf.contrib.rnn.LSTMBlockCell`: BasicLSTMCell's cell (gates i, j, f, o; state (c, h)) as one op,
    with optional peepholes and cell clipping (`cell_clip=None`: none).
    """

    _default_name = "lstm_cell"

    def __init__(self, num_units: int, forget_bias: float = 1.0, cell_clip: float | None = None,
                 use_peephole: bool = False, reuse: Any = None, name: str = "lstm_cell", dtype: Any = None):
        super().__init__(reuse, name)
        self._num_units = int(num_units)
        self._forget_bias = float(forget_bias)
        self._cell_clip = -1.0 if cell_clip is None else float(cell_clip)
        self._use_peephole = bool(use_peephole)

    @property
    def state_size(self) -> LSTMStateTuple:
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self) -> int:
        return self._num_units

    def _step(self, inputs: Tensor, state: Any) -> tuple[Tensor, LSTMStateTuple]:
        cs_prev, h_prev = (convert_to_tensor(s) for s in state)
        cs, h = block_cell_step(inputs, cs_prev, h_prev, self._num_units, self._forget_bias, self._cell_clip,
                                self._use_peephole)
        return h, LSTMStateTuple(cs, h)


class LSTMBlockFusedCell:
    """`tf.contrib.rnn.LSTMBlockFusedCell`: an LSTM over a whole time-major sequence.

    `cell(inputs, initial_state=None, dtype=None, sequence_length=None)` with inputs
    [time, batch, depth] returns (outputs [time, batch, units], LSTMStateTuple(c, h) final). Steps
    past an example's `sequence_length` give zero outputs and keep its state. The weights are
    `kernel` and `bias` (and the peepholes) under the cell's scope, as LSTMBlockCell's.
    """

    def __init__(self, num_units: int, forget_bias: float = 1.0, cell_clip: float | None = None,
                 use_peephole: bool = False, reuse: Any = None, dtype: Any = None, name: str = "lstm_cell"):
        self._num_units = int(num_units)
        self._forget_bias = float(forget_bias)
        self._cell_clip = -1.0 if cell_clip is None else float(cell_clip)
        self._use_peephole = bool(use_peephole)
        self._reuse = reuse
        self._name = name
        self._scope = None

    @property
    def num_units(self) -> int:
        return self._num_units

    def __call__(self, inputs: Any, initial_state: Any = None, dtype: Any = None, sequence_length: Any = None,
                 scope: Any = None) -> tuple[Tensor, LSTMStateTuple]:
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims != 3 or inputs.shape.as_list()[2] is None:
            raise ValueError(f"LSTMBlockFusedCell: inputs must be [time, batch, depth] with a known depth, "
                             f"got shape {inputs.shape}")
        steps = inputs.shape.as_list()[0]
        if steps is None:
            raise ValueError("LSTMBlockFusedCell: the number of time steps (inputs' first dimension) must be "
                             "known when the graph is built")
        dtype = inputs.dtype if dtype is None else dtype
        if self._scope is None:
            with variable_scope(scope or self._name, reuse=self._reuse) as vs:
                self._scope = vs
                return self._run(inputs, steps, initial_state, sequence_length)
        with variable_scope(self._scope, reuse=True):
            return self._run(inputs, steps, initial_state, sequence_length)

    def _run(self, inputs: Tensor, steps: int, initial_state: Any, sequence_length: Any):
        n = self._num_units
        w, b, (wci, wcf, wco) = _cell_weights(inputs.shape.as_list()[2], n, inputs.dtype, self._use_peephole)
        batch = array_ops.shape(inputs)[1]
        if initial_state is None:
            cs, h = zero_rows(batch, n, inputs.dtype), zero_rows(batch, n, inputs.dtype)
        else:
            cs, h = (convert_to_tensor(s) for s in initial_state)
        lengths = None if sequence_length is None else convert_to_tensor(sequence_length)
        outputs = []
        for t, x in enumerate(unstack(inputs, steps, 0)):
            _, new_cs, _, _, _, _, new_h = lstm_block_cell(x, cs, h, w, wci, wcf, wco, b, self._forget_bias,
                                                           self._cell_clip, self._use_peephole)
            if lengths is None:
                cs, h, out = new_cs, new_h, new_h
            else:
                live = math_ops.less(t, lengths)  # [batch]: where() picks whole rows
                cs = where(live, new_cs, cs)
                h = where(live, new_h, h)
                out = where(live, new_h, array_ops.zeros_like(new_h))
            outputs.append(out)
        return array_ops.stack(outputs), LSTMStateTuple(cs, h)
