"""Refusals a training run makes before it writes anything or while it trains: a batch larger than the data,
parameters that cannot fit in memory, a loss that is no longer finite. Each is one UserInputError line."""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

from tftk.user_input import UserInputError

__all__ = ["DivergedError", "check_batch_size", "check_parameter_memory", "check_finite_loss", "available_memory"]

# Training holds each parameter several times: the value, its gradient, and up to two optimizer slots (Adam).
COPIES_PER_PARAMETER = 4


class DivergedError(UserInputError):
    """The loss became NaN or infinite: the hyperparameters (usually lr) make training diverge."""


def check_batch_size(batch_size: int, examples: int, dataset: str) -> None:
    """A batch cannot be larger than the training split."""
    if batch_size > examples:
        raise UserInputError(f"batch_size {batch_size} is larger than {dataset}'s training split ({examples} "
                             f"examples); use --batch-size {examples} or less")


def available_memory() -> int | None:
    """Bytes the kernel reports as available (MemAvailable), None where /proc/meminfo does not exist."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def check_parameter_memory(variables: Iterable[Any], model: str, available: int | None = None) -> None:
    """Refuse a model whose parameters (times COPIES_PER_PARAMETER) exceed the available memory, before any
    value is allocated: the graph knows every variable's shape and dtype already."""
    needed = sum(math.prod(int(d) for d in v.shape) * v.dtype.as_numpy_dtype().itemsize
                 for v in variables if v.shape.is_fully_defined()) * COPIES_PER_PARAMETER
    available = available_memory() if available is None else available
    if available is not None and needed > available:
        raise UserInputError(f"{model} needs about {needed / 2**30:.1f} GiB for its parameters, gradients and "
                             f"optimizer slots, more than the {available / 2**30:.1f} GiB available; make the model "
                             "smaller (e.g. --nb-units)")


def check_finite_loss(values: Mapping[str, Any], step: int, checkpoint: str | None) -> None:
    """Stop at the first NaN or infinite loss (nothing of it is saved, and it never becomes a best)."""
    loss = values.get("loss")
    if loss is not None and not math.isfinite(float(loss)):
        last = f"the last checkpoint ({checkpoint}) is from before it" if checkpoint else "no checkpoint was saved"
        raise DivergedError(f"step {step}: the loss is {float(loss)}; training stopped ({last}); "
                            "lower --lr or check the data")
