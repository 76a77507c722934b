"""TF1's optimizers: GradientDescent, Momentum, Adagrad, Adadelta, Adam, Ftrl, RMSProp and the proximal ones.

Each declares its slots (named as TF1 names them) and hyperparameters and builds one fused
in-place update op per variable (`tftk.train.training_ops`); dense gradients use `Apply*`,
IndexedSlices gradients `SparseApply*`. Hyperparameters may be Python numbers, tensors (e.g. a
decayed learning rate) or callables returning either.
"""

from __future__ import annotations

from typing import Any

from tftk.framework.indexed_slices import IndexedSlices
from tftk.framework.ops import Operation, Tensor, control_dependencies, get_default_graph
from tftk.ops.variables import Variable
from tftk.train.optimizer import Optimizer
from tftk.train.training_ops import apply_update
from tftk.ops.control_flow_ops import group

__all__ = ["GradientDescentOptimizer", "MomentumOptimizer", "AdagradOptimizer", "AdadeltaOptimizer",
           "AdamOptimizer", "FtrlOptimizer", "RMSPropOptimizer",
           "ProximalGradientDescentOptimizer", "ProximalAdagradOptimizer"]


class _FusedOptimizer(Optimizer):
    """An optimizer whose dense and sparse updates are the same op family with the same inputs."""

    _HYPERS: tuple[str, ...] = ()  # hyperparameter names, in the update op's input order

    def _update_type(self) -> str:
        raise NotImplementedError

    def _slot_list(self, var: Variable) -> list[Variable]:
        return []

    def _hypers(self, var: Variable) -> list[Tensor]:
        return [self._hyper(name, var) for name in self._HYPERS]

    def _update(self, grad: Any, var: Variable) -> Operation:
        attrs = {"use_locking": bool(self._use_locking)}
        attrs.update(self._attrs())
        return apply_update(self._update_type(), var, self._slot_list(var), self._hypers(var), grad, attrs)

    def _attrs(self) -> dict:
        return {}

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        return self._update(grad, var)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Operation:
        return self._update(grad, var)


class GradientDescentOptimizer(_FusedOptimizer):
    """var -= learning_rate * grad."""

    _HYPERS = ("learning_rate",)

    def __init__(self, learning_rate: Any, use_locking: bool = False, name: str = "GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _prepare(self) -> None:
        self._set_hyper("learning_rate", self._learning_rate)

    def _update_type(self) -> str:
        return "ApplyGradientDescent"


class MomentumOptimizer(_FusedOptimizer):
    """accum = momentum * accum + grad; var -= lr * accum (Nesterov: var -= lr * (grad + momentum * accum))."""

    _HYPERS = ("learning_rate", "momentum")

    def __init__(self, learning_rate: Any, momentum: Any, use_locking: bool = False, name: str = "Momentum",
                 use_nesterov: bool = False):
        super().__init__(use_locking, name)
        self._learning_rate, self._momentum, self._use_nesterov = learning_rate, momentum, use_nesterov

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._zeros_slot(v, "momentum")

    def _prepare(self) -> None:
        self._set_hyper("learning_rate", self._learning_rate)
        self._set_hyper("momentum", self._momentum)

    def _update_type(self) -> str:
        return "ApplyMomentum"

    def _slot_list(self, var: Variable) -> list[Variable]:
        return [self.get_slot(var, "momentum")]

    def _attrs(self) -> dict:
        return {"use_nesterov": bool(self._use_nesterov)}


class AdagradOptimizer(_FusedOptimizer):
    """accum += grad^2; var -= lr * grad / sqrt(accum), accum starting at initial_accumulator_value."""

    _HYPERS = ("learning_rate",)

    def __init__(self, learning_rate: Any, initial_accumulator_value: float = 0.1, use_locking: bool = False,
                 name: str = "Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate, self._initial_accumulator_value = learning_rate, initial_accumulator_value

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._filled_slot(v, "accumulator", self._initial_accumulator_value)

    def _prepare(self) -> None:
        self._set_hyper("learning_rate", self._learning_rate)

    def _update_type(self) -> str:
        return "ApplyAdagrad"

    def _slot_list(self, var: Variable) -> list[Variable]:
        return [self.get_slot(var, "accumulator")]


class AdadeltaOptimizer(_FusedOptimizer):
    """Adadelta (Zeiler 2012) with TF1's learning_rate factor on the update."""

    _HYPERS = ("learning_rate", "rho", "epsilon")

    def __init__(self, learning_rate: Any = 0.001, rho: Any = 0.95, epsilon: Any = 1e-8, use_locking: bool = False,
                 name: str = "Adadelta"):
        super().__init__(use_locking, name)
        self._learning_rate, self._rho, self._epsilon = learning_rate, rho, epsilon

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._zeros_slot(v, "accum")
            self._zeros_slot(v, "accum_update")

    def _prepare(self) -> None:
        self._set_hyper("learning_rate", self._learning_rate)
        self._set_hyper("rho", self._rho)
        self._set_hyper("epsilon", self._epsilon)

    def _update_type(self) -> str:
        return "ApplyAdadelta"

    def _slot_list(self, var: Variable) -> list[Variable]:
        return [self.get_slot(var, "accum"), self.get_slot(var, "accum_update")]


class AdamOptimizer(_FusedOptimizer):
    """Adam (Kingma & Ba) as TF1: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t); var -= lr_t * m / (sqrt(v) + epsilon).

    beta1^t and beta2^t live in the non-slot variables `beta1_power` and `beta2_power`, advanced
    once per step after every variable has been updated.
    """

    _HYPERS = ("beta1_power", "beta2_power", "learning_rate", "beta1", "beta2", "epsilon")

    def __init__(self, learning_rate: Any = 0.001, beta1: Any = 0.9, beta2: Any = 0.999, epsilon: Any = 1e-8,
                 use_locking: bool = False, name: str = "Adam"):
        super().__init__(use_locking, name)
        self._learning_rate, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon

    def _get_beta_accumulators(self, graph: Any = None) -> tuple[Variable, Variable]:
        graph = graph or get_default_graph()
        return self._non_slot_dict[("beta1_power", graph)], self._non_slot_dict[("beta2_power", graph)]

    def _create_slots(self, var_list: list[Variable]) -> None:
        first_var = min(var_list, key=lambda v: v.name)
        self._non_slot_variable("beta1_power", self._beta1, first_var)
        self._non_slot_variable("beta2_power", self._beta2, first_var)
        for v in var_list:
            self._zeros_slot(v, "m")
            self._zeros_slot(v, "v")

    def _prepare(self) -> None:
        beta1_power, beta2_power = self._get_beta_accumulators()
        self._set_hyper("beta1_power", beta1_power)
        self._set_hyper("beta2_power", beta2_power)
        self._set_hyper("learning_rate", self._learning_rate)
        self._set_hyper("beta1", self._beta1)
        self._set_hyper("beta2", self._beta2)
        self._set_hyper("epsilon", self._epsilon)

    def _update_type(self) -> str:
        return "ApplyAdam"

    def _slot_list(self, var: Variable) -> list[Variable]:
        return [self.get_slot(var, "m"), self.get_slot(var, "v")]

    def _finish(self, update_ops: list[Operation], name_scope: str) -> Operation:
        beta1_power, beta2_power = self._get_beta_accumulators(update_ops[0].graph)
        with control_dependencies(update_ops):
            update_beta1 = beta1_power.assign(beta1_power * self._hyper("beta1", beta1_power),
                                              use_locking=self._use_locking)
            update_beta2 = beta2_power.assign(beta2_power * self._hyper("beta2", beta2_power),
                                              use_locking=self._use_locking)
        return group(*update_ops, update_beta1, update_beta2, name=name_scope)


class FtrlOptimizer(_FusedOptimizer):
    """FTRL-Proximal (McMahan et al. 2013) with L1, L2 and TF1's optional L2 shrinkage."""

    def __init__(self, learning_rate: Any, learning_rate_power: float = -0.5, initial_accumulator_value: float = 0.1,
                 l1_regularization_strength: float = 0.0, l2_regularization_strength: float = 0.0,
                 use_locking: bool = False, name: str = "Ftrl", accum_name: str | None = None,
                 linear_name: str | None = None, l2_shrinkage_regularization_strength: float = 0.0):
        _check_sign("initial_accumulator_value", initial_accumulator_value, "positive or zero", 1)
        _check_sign("learning_rate_power", learning_rate_power, "negative or zero", -1)
        _check_sign("l1_regularization_strength", l1_regularization_strength, "positive or zero", 1)
        _check_sign("l2_regularization_strength", l2_regularization_strength, "positive or zero", 1)
        _check_sign("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength,
                    "positive or zero", 1)
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._accum_name, self._linear_name = accum_name, linear_name

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._filled_slot(v, "accum", self._initial_accumulator_value, self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self) -> None:
        self._set_hyper("learning_rate", self._learning_rate)
        self._set_hyper("l1", self._l1)
        self._set_hyper("l2", self._l2)
        self._set_hyper("l2_shrinkage", self._l2_shrinkage)
        self._set_hyper("learning_rate_power", self._learning_rate_power)

    def _shrinks(self) -> bool:
        return isinstance(self._l2_shrinkage, Tensor) or self._l2_shrinkage > 0.0

    def _update_type(self) -> str:
        return "ApplyFtrlV2" if self._shrinks() else "ApplyFtrl"

    def _hypers(self, var: Variable) -> list[Tensor]:
        names = ["learning_rate", "l1", "l2"] + (["l2_shrinkage"] if self._shrinks() else []) + ["learning_rate_power"]
        return [self._hyper(name, var) for name in names]

    def _slot_list(self, var: Variable) -> list[Variable]:
        return [self.get_slot(var, "accum"), self.get_slot(var, "linear")]


class RMSPropOptimizer(_FusedOptimizer):
    """RMSProp (Hinton): ms = decay*ms + (1-decay)*g^2; mom = momentum*mom + lr*g/sqrt(ms + eps); var -= mom.

    `centered` also tracks the mean gradient mg and divides by sqrt(ms - mg^2 + eps). The `rms`
    slot starts at one, as in TF1.
    """

    _HYPERS = ("learning_rate", "decay", "momentum", "epsilon")

    def __init__(self, learning_rate: Any, decay: Any = 0.9, momentum: Any = 0.0, epsilon: Any = 1e-10,
                 use_locking: bool = False, centered: bool = False, name: str = "RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate, self._decay, self._momentum, self._epsilon = learning_rate, decay, momentum, epsilon
        self._centered = centered

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._filled_slot(v, "rms", 1.0)
            if self._centered:
                self._zeros_slot(v, "mg")
            self._zeros_slot(v, "momentum")

    def _prepare(self) -> None:
        for name in self._HYPERS:
            self._set_hyper(name, getattr(self, "_" + name))

    def _update_type(self) -> str:
        return "ApplyCenteredRMSProp" if self._centered else "ApplyRMSProp"

    def _slot_list(self, var: Variable) -> list[Variable]:
        slots = [self.get_slot(var, "rms"), self.get_slot(var, "momentum")]
        return [self.get_slot(var, "mg")] + slots if self._centered else slots


def _check_sign(label: str, value: Any, allowed: str, sign: int) -> None:
    """FTRL's argument checks (numbers only; tensors are checked by nobody, as in TF1)."""
    if isinstance(value, (int, float)) and value * sign < 0.0:
        raise ValueError(f"{label} {value} needs to be {allowed}")


class ProximalGradientDescentOptimizer(_FusedOptimizer):
    """Gradient descent followed by the L1/L2 proximal map (FOBOS): sparse solutions under l1."""

    _HYPERS = ("learning_rate", "l1", "l2")

    def __init__(self, learning_rate: Any, l1_regularization_strength: Any = 0.0,
                 l2_regularization_strength: Any = 0.0, use_locking: bool = False,
                 name: str = "ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _prepare(self) -> None:
        self._set_hyper("learning_rate", self._learning_rate)
        self._set_hyper("l1", self._l1)
        self._set_hyper("l2", self._l2)

    def _update_type(self) -> str:
        return "ApplyProximalGradientDescent"


class ProximalAdagradOptimizer(_FusedOptimizer):
    """Adagrad's per-element step lr / sqrt(accum), followed by the L1/L2 proximal map."""

    _HYPERS = ("learning_rate", "l1", "l2")

    def __init__(self, learning_rate: Any, initial_accumulator_value: float = 0.1,
                 l1_regularization_strength: Any = 0.0, l2_regularization_strength: Any = 0.0,
                 use_locking: bool = False, name: str = "ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate, self._initial_accumulator_value = learning_rate, initial_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._filled_slot(v, "accumulator", self._initial_accumulator_value)

    def _prepare(self) -> None:
        self._set_hyper("learning_rate", self._learning_rate)
        self._set_hyper("l1", self._l1)
        self._set_hyper("l2", self._l2)

    def _update_type(self) -> str:
        return "ApplyProximalAdagrad"

    def _slot_list(self, var: Variable) -> list[Variable]:
        return [self.get_slot(var, "accumulator")]
