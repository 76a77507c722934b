"""A premade estimator's `optimizer` argument as an Optimizer: a name ('Adagrad', 'Adam', 'Ftrl',
'RMSProp', 'SGD') made with the estimator's default learning rate, an instance, or a function
returning one (TF 1.x's canned/optimizers.get_optimizer_instance)."""

from __future__ import annotations

from typing import Any

from tftk.train.optimizer import Optimizer
from tftk.train.optimizers import (AdagradOptimizer, AdamOptimizer, FtrlOptimizer, GradientDescentOptimizer,
                                   RMSPropOptimizer)

__all__ = ["get_optimizer_instance"]

_BY_NAME = {"Adagrad": AdagradOptimizer, "Adam": AdamOptimizer, "Ftrl": FtrlOptimizer,
            "RMSProp": RMSPropOptimizer, "SGD": GradientDescentOptimizer}


def get_optimizer_instance(optimizer: Any, learning_rate: float | None = None) -> Optimizer:
    """The Optimizer `optimizer` names or makes (see the module docstring)."""
    if isinstance(optimizer, str):
        if optimizer not in _BY_NAME:
            raise ValueError(f"Unsupported optimizer name: {optimizer}. Supported names are: {sorted(_BY_NAME)}")
        if learning_rate is None:
            raise ValueError(f"learning_rate must be specified when optimizer is a string ({optimizer})")
        return _BY_NAME[optimizer](learning_rate=learning_rate)
    if callable(optimizer) and not isinstance(optimizer, Optimizer):
        optimizer = optimizer()
    if not isinstance(optimizer, Optimizer):
        raise ValueError(f"The given object is not an Optimizer instance. Given: {optimizer!r}")
    return optimizer
