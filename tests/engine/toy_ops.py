"""Two toy op types registered here only (never in tftk): the engine must run them from their facts.

`ToyAffine` is a pure kernel (a * x + b, `fresh`); `ToyAccumulate` adds 2 * value into a variable
through a reference input and is declared `remote`, so a task may run it for another process.
The test module imports this one; a ps task started for the test imports it too.
"""

from __future__ import annotations

from tftk.framework import registry
from tftk.framework.ops import convert_to_tensor
from tftk.ops.op_builder import make_op, op_scope


def _bind_affine(op, ctx):
    a, b = op.get_attr("a"), op.get_attr("b")
    return lambda x: a * x + b


def _bind_accumulate(op, ctx):
    box = ctx.ref_box(op, 0)

    def kernel(value):
        box.value = box.value + 2 * value
        return box.value

    return kernel


registry.register_op("ToyAffine", _bind_affine, fresh=True)
registry.register_op("ToyAccumulate", _bind_accumulate, ref_inputs=(0,), stateful=True, remote=True)
registry.register_op("ToyLocalOnly", _bind_accumulate, ref_inputs=(0,), stateful=True)  # not remote
registry.not_differentiable("ToyAffine", "ToyAccumulate", "ToyLocalOnly")


def toy_affine(x, a: float, b: float, name=None):
    with op_scope(name, "ToyAffine", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return make_op("ToyAffine", [x], x.dtype, x.shape, scope, {"a": a, "b": b})


def toy_accumulate(variable, value, op_type: str = "ToyAccumulate", name=None):
    with op_scope(name, op_type, [variable]) as scope:
        ref = variable._ref()
        value = convert_to_tensor(value, dtype=ref.dtype, name="value")
        return make_op(op_type, [ref, value], ref.dtype, ref.shape, scope)
