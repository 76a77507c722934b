"""Every differentiable op type in the registry has a float64 finite-difference gradient case."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import tftk as tf  # noqa: F401 - registers the core ops
from tftk.framework import registry
from tests.gradient_check import op_types_in

TESTS = Path(__file__).parent


def _all_cases() -> list:
    cases = []
    for path in sorted(TESTS.rglob("test_*.py")):
        if "GRADIENT_CASES" not in path.read_text() or path.name == Path(__file__).name:
            continue
        module_name = ".".join(path.relative_to(TESTS.parent).with_suffix("").parts)
        module = importlib.import_module(module_name)
        cases.extend(getattr(module, "GRADIENT_CASES", []))
    return cases


def _load_all_op_modules() -> None:
    import tftk.ops
    for info in pkgutil.iter_modules(tftk.ops.__path__):
        importlib.import_module(f"tftk.ops.{info.name}")


# Gradients that are no derivative of the op's own output, so no finite difference of the op checks them:
# op type -> where they are checked instead.
NOT_A_FINITE_DIFFERENCE = {
    # Implicit reparameterisation: d sample / d alpha at a fixed CDF value, not d/dalpha of the sampler.
    "RandomGamma": "tests/kernels/test_philox_rejection.py (finite differences of the CDF), "
                   "tests/differential/test_random_samplers_tf.py (TF's gradient)",
    "StatelessRandomGammaV2": "the same tests",
}


def test_every_differentiable_op_has_a_gradient_case():
    _load_all_op_modules()
    covered: set[str] = set(NOT_A_FINITE_DIFFERENCE)
    for case in _all_cases():
        covered |= op_types_in(case)
    missing = sorted(t for t in registry.registered_types()
                     if registry.lookup(t).gradient is not None and t not in covered)
    assert not missing, f"op types with a gradient but no finite-difference case: {missing}"


def test_every_op_type_has_a_gradient_or_is_declared_not_differentiable():
    _load_all_op_modules()
    undeclared = sorted(t for t in registry.registered_types()
                        if registry.lookup(t).gradient is None and registry.lookup(t).differentiable
                        and registry.lookup(t).kernel is not None)
    assert not undeclared, f"op types with neither a gradient nor not_differentiable(): {undeclared}"
