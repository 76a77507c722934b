"""Exponential moving averages of variables (TF1's `tf.train.ExponentialMovingAverage`).

`apply(var_list)` creates one shadow variable per variable, named `<var>/ExponentialMovingAverage`
and initialised to the variable's initial value, and returns an op that moves every shadow
towards its variable: shadow -= (1 - decay) * (shadow - var). Run it after the training op
(`with tf.control_dependencies([train_op]): tf.group(ema_op)`); `variables_to_restore()` maps
shadow names to variables so a Saver can load the averages into the model for evaluation.
"""

from __future__ import annotations

from typing import Any

from tftk.framework import dtypes
from tftk.framework.ops import GraphKeys, Operation, Tensor, control_dependencies, convert_to_tensor, name_scope
from tftk.ops import math_ops, state_ops
from tftk.ops.variables import Variable, global_variables, moving_average_variables, trainable_variables
from tftk.ops.array_ops import zeros
from tftk.ops.control_flow_ops import group
from tftk.train.optimizer import create_slot_variable

__all__ = ["ExponentialMovingAverage", "assign_moving_average"]

_FLOAT_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64)


def assign_moving_average(variable: Variable, value: Any, decay: Any, zero_debias: bool = True,
                          name: str | None = None) -> Tensor:
    """variable -= (1 - decay) * (variable - value); the new value of `variable`.

    With `zero_debias` (TF1's default here) the average is computed in a hidden `biased` variable
    and divided by 1 - decay^t, so early values are not pulled towards the zero start.
    """
    with name_scope(name, "AssignMovingAvg", [variable, value, decay]) as scope:
        one_minus_decay = _in_dtype(1.0 - decay, variable.dtype)
        if zero_debias:
            delta = _zero_debias(variable, value, one_minus_decay)
        else:
            delta = (variable - value) * one_minus_decay
        return state_ops.assign_sub(variable, delta, name=scope)


def _in_dtype(value: Any, dtype: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value if value.dtype is dtype else math_ops.cast(value, dtype)
    return convert_to_tensor(value, dtype=dtype, name="decay")


def _zero_debias(unbiased: Variable, value: Any, one_minus_decay: Tensor) -> Tensor:
    """The delta that makes `unbiased` the bias-corrected average (TF1's moving_averages._zero_debias)."""
    graph = unbiased.graph
    with graph.name_scope(None):
        biased = Variable(lambda: zeros(unbiased.shape.as_list(), unbiased.dtype), trainable=False,
                          name=f"{unbiased.op.name}/biased")
        local_step = Variable(lambda: zeros([], unbiased.dtype), trainable=False,
                              name=f"{unbiased.op.name}/local_step")
    update_biased = state_ops.assign_sub(biased, (biased - value) * one_minus_decay)
    update_step = state_ops.assign_add(local_step, 1)
    with control_dependencies([update_biased, update_step]):
        decay = 1.0 - one_minus_decay
        correction = 1.0 - math_ops.pow(decay, local_step.read_value())
        return unbiased - biased.read_value() / correction


class ExponentialMovingAverage:
    """Maintains moving averages of variables with an exponential decay (optionally warmed up by num_updates)."""

    def __init__(self, decay: Any, num_updates: Any = None, zero_debias: bool = False,
                 name: str = "ExponentialMovingAverage"):
        """Args:
          decay: the decay, e.g. 0.999 (a number or a scalar float tensor).
          num_updates: optional step count; the decay used is then min(decay, (1 + n) / (10 + n)).
          zero_debias: debias the averages of *tensors* (variables' shadows start at their value).
          name: the name of the apply op and the suffix of the shadow variables.
        """
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict[Any, Variable] = {}

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list: list[Any] | None = None) -> Operation:
        """Create the shadow variables of `var_list` (default: trainable variables) and return the update op.

        Raises:
          TypeError: an element is not a float16/32/64 Variable or Tensor.
        """
        var_list = trainable_variables() if var_list is None else list(var_list)
        debiased = set()
        for var in var_list:
            if not isinstance(var, (Variable, Tensor)):
                raise TypeError(f"ExponentialMovingAverage.apply takes Variables or Tensors, got {var!r}")
            if var.dtype not in _FLOAT_TYPES:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var in self._averages:
                continue
            if isinstance(var, Variable):
                avg = create_slot_variable(var, var.initialized_value, self._name)
                var.graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
            else:
                avg = create_slot_variable(var, lambda v=var: zeros(v.shape.as_list(), v.dtype), self._name)
                if self._zero_debias:
                    debiased.add(avg)
            self._averages[var] = avg
        with name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, name="decay")
            if self._num_updates is not None:
                n = math_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + n) / (10.0 + n))
            updates = [assign_moving_average(self._averages[var], var, decay,
                                             zero_debias=self._averages[var] in debiased) for var in var_list]
            return group(*updates, name=scope)

    def average(self, var: Any) -> Variable | None:
        """The shadow variable of `var`, or None if `apply` did not see it."""
        return self._averages.get(var)

    def average_name(self, var: Any) -> str:
        """The op name of `var`'s shadow variable (what a checkpoint stores it under), even before apply()."""
        if var in self._averages:
            return self._averages[var].op.name
        return var.graph.unique_name(f"{var.op.name}/{self._name}", mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables: list[Any] | None = None) -> dict[str, Any]:
        """{checkpoint name: variable}: averaged variables load their shadow's value, the others their own."""
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + moving_average_variables()
        averaged = list(dict.fromkeys(moving_avg_variables))
        name_map = {self.average_name(v): v for v in averaged}
        averaged_names = {v.name for v in averaged}
        for v in global_variables():
            if v.name not in averaged_names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map
