"""RNN cells (`tf.nn.rnn_cell`, `tf.contrib.rnn`): one time step `(output, new_state) = cell(x, state)`.

As in TF 1.2+, a cell owns its weights: the first call creates them under a variable scope named
after the cell (`basic_lstm_cell`, `gru_cell`, ...; `kernel` and `bias`), every later call reuses
that scope, so one cell object used by `static_rnn` and `dynamic_rnn` shares one set of weights.
"""

from __future__ import annotations

import collections
from typing import Any, Callable, Sequence

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops, nn_ops
from tftk.ops.array_ops import split
from tftk.ops.init_ops import constant_initializer, zeros_initializer
from tftk.ops.variable_scope import get_variable, variable_scope

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
           "DropoutWrapper", "LSTMStateTuple"]


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM state: the memory `c` and the output `h`, each [batch, units]."""

    __slots__ = ()

    @property
    def dtype(self) -> dtypes.DType:
        return self.c.dtype


def flatten_state(structure: Any) -> list:
    """The leaves of a (nested) state, in order."""
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten_state(item)]
    return [structure]


def map_state(fn: Callable, *structures: Any) -> Any:
    """Apply `fn` leaf-wise over states of one structure (namedtuples keep their type)."""
    first = structures[0]
    if isinstance(first, (list, tuple)):
        items = [map_state(fn, *parts) for parts in zip(*structures)]
        return type(first)(*items) if hasattr(first, "_fields") else type(first)(items)
    return fn(*structures)


def zero_rows(batch_size: Any, size: int, dtype: Any) -> Tensor:
    """zeros([batch_size, size]) for an int or scalar-Tensor batch size (static depth kept)."""
    if isinstance(batch_size, Tensor):
        out = array_ops.fill(array_ops.stack([batch_size, size]), convert_to_tensor(0, dtype=dtype))
        out.set_shape(TensorShape([None, size]))
        return out
    return array_ops.zeros([int(batch_size), size], dtype)


class RNNCell:
    """Base class: subclasses define `state_size`, `output_size` and `_step(inputs, state)`."""

    _default_name = "rnn_cell"

    def __init__(self, reuse: Any = None, name: str | None = None):
        self._reuse = reuse
        self._name = name
        self._scope = None  # the VariableScope of this cell's weights, set on the first call

    @property
    def state_size(self) -> Any:
        raise NotImplementedError

    @property
    def output_size(self) -> int:
        raise NotImplementedError

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        """All-zero state(s) shaped like `state_size` for `batch_size` examples (int or scalar Tensor)."""
        return map_state(lambda size: zero_rows(batch_size, size, dtype), self.state_size)

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Tensor, Any]:
        """One step: (output, new_state). Weights are created on the first call, reused afterwards."""
        inputs = convert_to_tensor(inputs)
        if self._scope is None:
            name_or_scope = scope if scope is not None else self._name
            with variable_scope(name_or_scope, default_name=self._default_name, reuse=self._reuse) as vs:
                self._scope = vs
                return self._step(inputs, state)
        with variable_scope(self._scope, reuse=True):
            return self._step(inputs, state)

    def _step(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        raise NotImplementedError


def _input_depth(x: Tensor, who: str) -> int:
    if x.shape.ndims != 2 or x.shape.as_list()[1] is None:
        raise ValueError(f"{who}: inputs must be [batch, depth] with a known depth, saw shape {x.shape}")
    return x.shape.as_list()[1]


def _linear(args: Sequence[Tensor], output_size: int, bias_initializer: Any = None,
            kernel_initializer: Any = None) -> Tensor:
    """concat(args, 1) @ kernel + bias, with variables `kernel` and `bias` in the current scope."""
    depth = sum(_input_depth(a, "rnn cell") for a in args)
    dtype = args[0].dtype
    kernel = get_variable("kernel", [depth, output_size], dtype=dtype, initializer=kernel_initializer)
    joined = args[0] if len(args) == 1 else array_ops.concat(list(args), 1)
    bias = get_variable("bias", [output_size], dtype=dtype,
                        initializer=bias_initializer if bias_initializer is not None else zeros_initializer())
    return nn_ops.bias_add(math_ops.matmul(joined, kernel), bias)


class HiddenStateCell(RNNCell):
    """A cell whose state and output are both one [batch, num_units] tensor (RNN and GRU cells)."""

    _num_units: int

    @property
    def state_size(self) -> int:
        return self._num_units

    @property
    def output_size(self) -> int:
        return self._num_units


class BasicRNNCell(HiddenStateCell):
    """h' = activation(W [x, h] + b); the output is h'."""

    _default_name = "basic_rnn_cell"

    def __init__(self, num_units: int, activation: Callable | None = None, reuse: Any = None,
                 name: str | None = None):
        super().__init__(reuse, name)
        self._num_units = int(num_units)
        self._activation = activation or math_ops.tanh

    def _step(self, inputs: Tensor, state: Tensor) -> tuple[Tensor, Tensor]:
        output = self._activation(_linear([inputs, state], self._num_units))
        return output, output


class GRUCell(HiddenStateCell):
    """Gated recurrent unit (Cho et al. 2014): gates r, u from [x, h]; h' = u h + (1 - u) c."""

    _default_name = "gru_cell"

    def __init__(self, num_units: int, activation: Callable | None = None, reuse: Any = None,
                 kernel_initializer: Any = None, bias_initializer: Any = None, name: str | None = None):
        super().__init__(reuse, name)
        self._num_units = int(num_units)
        self._activation = activation or math_ops.tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    def _step(self, inputs: Tensor, state: Tensor) -> tuple[Tensor, Tensor]:
        n = self._num_units
        if self._activation is math_ops.tanh:  # the same values from one fused op (tftk.ops.gru_ops)
            from tftk.ops.gru_ops import gru_block_step
            new_h = gru_block_step(inputs, state, n, self._kernel_initializer, self._bias_initializer)
            return new_h, new_h
        with variable_scope("gates"):  # bias 1.0: start with mostly "reset off, keep state"
            gates = math_ops.sigmoid(_linear([inputs, state], 2 * n,
                                             self._bias_initializer or constant_initializer(1.0),
                                             self._kernel_initializer))
        r, u = split(gates, 2, axis=1)
        with variable_scope("candidate"):
            c = self._activation(_linear([inputs, r * state], n, self._bias_initializer,
                                         self._kernel_initializer))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class BasicLSTMCell(RNNCell):
    """LSTM without peepholes (Zaremba et al. 2014): gates i, j, f, o from one matmul of [x, h].

    c' = c * sigmoid(f + forget_bias) + sigmoid(i) * tanh(j);  h' = tanh(c') * sigmoid(o).
    The state is LSTMStateTuple(c, h), or concat([c, h], 1) when `state_is_tuple=False`.
    """

    _default_name = "basic_lstm_cell"

    def __init__(self, num_units: int, forget_bias: float = 1.0, state_is_tuple: bool = True,
                 activation: Callable | None = None, reuse: Any = None, name: str | None = None):
        super().__init__(reuse, name)
        self._num_units = int(num_units)
        self._forget_bias = float(forget_bias)
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self) -> Any:
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self) -> int:
        return self._num_units

    def _step(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        c, h = _lstm_parts(state, self._state_is_tuple)
        if self._activation is math_ops.tanh:  # the same values from one fused op (tftk.ops.lstm_ops)
            from tftk.ops.lstm_ops import block_cell_step
            new_c, new_h = block_cell_step(inputs, c, h, self._num_units, self._forget_bias)
            return new_h, _lstm_state(new_c, new_h, self._state_is_tuple)
        i, j, f, o = split(_linear([inputs, h], 4 * self._num_units), 4, axis=1)
        new_c = c * math_ops.sigmoid(f + self._forget_bias) + math_ops.sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * math_ops.sigmoid(o)
        return new_h, _lstm_state(new_c, new_h, self._state_is_tuple)


def _lstm_parts(state: Any, state_is_tuple: bool) -> tuple[Tensor, Tensor]:
    if state_is_tuple:
        c, h = state
        return convert_to_tensor(c), convert_to_tensor(h)
    c, h = split(convert_to_tensor(state), 2, axis=1)
    return c, h


def _lstm_state(c: Tensor, h: Tensor, state_is_tuple: bool) -> Any:
    return LSTMStateTuple(c, h) if state_is_tuple else array_ops.concat([c, h], 1)


class LSTMCell(RNNCell):
    """LSTM with optional peepholes (Gers & Schmidhuber), cell clipping and output projection.

    With `use_peepholes`, the gates also see the memory: i and f see c, o sees c'. With
    `num_proj`, the output (and h in the state) is projected to `num_proj` units.
    """

    _default_name = "lstm_cell"

    def __init__(self, num_units: int, use_peepholes: bool = False, cell_clip: float | None = None,
                 initializer: Any = None, num_proj: int | None = None, proj_clip: float | None = None,
                 forget_bias: float = 1.0, state_is_tuple: bool = True, activation: Callable | None = None,
                 reuse: Any = None, name: str | None = None):
        super().__init__(reuse, name)
        self._num_units = int(num_units)
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = None if num_proj is None else int(num_proj)
        self._proj_clip = proj_clip
        self._forget_bias = float(forget_bias)
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self) -> Any:
        n, m = self._num_units, self._num_proj or self._num_units
        return LSTMStateTuple(n, m) if self._state_is_tuple else n + m

    @property
    def output_size(self) -> int:
        return self._num_proj or self._num_units

    def _step(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        from tftk.ops.clip_ops import clip_by_value
        n = self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = (convert_to_tensor(s) for s in state)
        else:
            c_prev, m_prev = split(convert_to_tensor(state), [n, self.output_size], axis=1)
        if self._activation is math_ops.tanh:  # the same values from one fused op (tftk.ops.lstm_ops)
            from tftk.ops.lstm_ops import block_cell_step
            clip = -1.0 if self._cell_clip is None else float(self._cell_clip)
            c, m = block_cell_step(inputs, c_prev, m_prev, n, self._forget_bias, clip, self._use_peepholes,
                                   self._initializer, lstm_cell=True)
            return self._project(m, c)
        i, j, f, o = split(_linear([inputs, m_prev], 4 * n, kernel_initializer=self._initializer), 4, axis=1)
        if self._use_peepholes:
            w_f, w_i, w_o = (get_variable(name, [n], dtype=inputs.dtype, initializer=self._initializer)
                             for name in ("w_f_diag", "w_i_diag", "w_o_diag"))
            f, i = f + w_f * c_prev, i + w_i * c_prev
        c = math_ops.sigmoid(f + self._forget_bias) * c_prev + math_ops.sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            o = o + w_o * c
        return self._project(math_ops.sigmoid(o) * self._activation(c), c)

    def _project(self, m: Tensor, c: Tensor) -> tuple[Tensor, Any]:
        """The output m (through `projection/kernel` and `proj_clip` when `num_proj` is set) and the state."""
        if self._num_proj is not None:
            from tftk.ops.clip_ops import clip_by_value
            with variable_scope("projection"):
                kernel = get_variable("kernel", [self._num_units, self._num_proj], dtype=m.dtype,
                                      initializer=self._initializer)
            m = math_ops.matmul(m, kernel)
            if self._proj_clip is not None:
                m = clip_by_value(m, -self._proj_clip, self._proj_clip)
        return m, _lstm_state(c, m, self._state_is_tuple)


class MultiRNNCell(RNNCell):
    """Stacked cells: the output of cell k is the input of cell k+1; the state is a tuple of states."""

    _default_name = "multi_rnn_cell"

    def __init__(self, cells: Sequence[RNNCell], state_is_tuple: bool = True):
        super().__init__()
        if not cells:
            raise ValueError("MultiRNNCell: must specify at least one cell")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(isinstance(c.state_size, tuple) for c in self._cells):
            raise ValueError("MultiRNNCell(state_is_tuple=False) needs cells whose states are single "
                             "tensors; pass state_is_tuple=False to the inner cells too")

    @property
    def state_size(self) -> Any:
        sizes = tuple(cell.state_size for cell in self._cells)
        return sizes if self._state_is_tuple else sum(sizes)

    @property
    def output_size(self) -> int:
        return self._cells[-1].output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        if self._state_is_tuple:
            return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
        return super().zero_state(batch_size, dtype)

    def _step(self, inputs: Tensor, state: Any) -> tuple[Tensor, Any]:
        if self._state_is_tuple:
            states = list(state)
        else:
            states = split(convert_to_tensor(state), [c.state_size for c in self._cells], axis=1)
        output, new_states = inputs, []
        for k, (cell, s) in enumerate(zip(self._cells, states)):
            with variable_scope(f"cell_{k}"):
                output, new_s = cell(output, s)
            new_states.append(new_s)
        return output, tuple(new_states) if self._state_is_tuple else array_ops.concat(new_states, 1)


class DropoutWrapper(RNNCell):
    """Dropout on a cell's inputs, outputs and/or new state, each with its own keep probability.

    A keep probability of exactly 1.0 adds no op; a Tensor (e.g. a fed placeholder) is used as is,
    so one graph serves training (keep_prob < 1) and evaluation (feed 1.0).
    """

    def __init__(self, cell: RNNCell, input_keep_prob: Any = 1.0, output_keep_prob: Any = 1.0,
                 state_keep_prob: Any = 1.0, variational_recurrent: bool = False, input_size: Any = None,
                 dtype: Any = None, seed: int | None = None):
        super().__init__()
        if variational_recurrent:
            raise ValueError("DropoutWrapper: variational_recurrent=True is not supported in tftk; "
                             "use the default per-step masks")
        for what, p in (("input", input_keep_prob), ("output", output_keep_prob), ("state", state_keep_prob)):
            if isinstance(p, (int, float)) and not 0 < p <= 1:
                raise ValueError(f"DropoutWrapper: {what}_keep_prob must be in (0, 1], got {p}")
        self._cell = cell
        self._input_keep_prob = input_keep_prob
        self._output_keep_prob = output_keep_prob
        self._state_keep_prob = state_keep_prob
        self._seed = seed

    @property
    def state_size(self) -> Any:
        return self._cell.state_size

    @property
    def output_size(self) -> int:
        return self._cell.output_size

    def zero_state(self, batch_size: Any, dtype: Any) -> Any:
        return self._cell.zero_state(batch_size, dtype)

    def _dropout(self, x: Any, keep_prob: Any, offset: int) -> Any:
        if isinstance(keep_prob, (int, float)) and keep_prob == 1:
            return x
        seed = None if self._seed is None else self._seed + offset
        return nn_ops.dropout(x, keep_prob, seed=seed)

    def _dropout_state(self, state: Any) -> Any:
        """Drop every state part except LSTM memories `c` (TF1's default state filter)."""
        if isinstance(state, LSTMStateTuple):
            return LSTMStateTuple(state.c, self._dropout_state(state.h))
        if isinstance(state, (list, tuple)):
            return type(state)(self._dropout_state(s) for s in state)
        return self._dropout(state, self._state_keep_prob, 1)

    def __call__(self, inputs: Any, state: Any, scope: Any = None) -> tuple[Tensor, Any]:
        inputs = self._dropout(convert_to_tensor(inputs), self._input_keep_prob, 0)
        output, new_state = self._cell(inputs, state, scope)
        return self._dropout(output, self._output_keep_prob, 2), self._dropout_state(new_state)
