"""LLVM IR helpers for kernels written as explicit vector code (`tftk.kernels.jit.intrinsic` bodies).

Numba's loop vectorizer leaves loops of 16 iterations (one vector of channels) to scalar code or
behind run-time overlap checks, and its SLP vectorizer is off: kernels whose natural vector is the
channels of one pixel (`conv_one_channel`, `pool`'s 2x2 gradient) write their blocks in IR instead.
Imported only while Numba compiles such a block (it needs llvmlite and Numba). Numba's on-disk
cache keys a kernel by its own module's source: after editing this module, clear NUMBA_CACHE_DIR
(the ahead-of-time module hashes every kernel source, this one included).
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba import types

__all__ = ["contiguous_vectors", "Vectors"]


def contiguous_vectors(*arrays: Any) -> bool:
    """Whether the typed arguments are 1-D C-contiguous float32 or float64 arrays of one dtype."""
    return (all(isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" for a in arrays)
            and len({a.dtype for a in arrays}) == 1 and arrays[0].dtype in (types.float32, types.float64))


class Vectors:
    """Vectors of `lanes` elements of the arrays' dtype, read and written at element offsets of their data."""

    def __init__(self, context: Any, builder: Any, element: ir.Type, lanes: int):
        self.builder = builder
        self.vector = ir.VectorType(element, lanes)
        self.lanes = lanes
        self.index = context.get_value_type(types.intp)
        self.align = element.get_abi_size(context.target_data)
        self.zero = ir.Constant(self.vector, None)
        name = f"llvm.fma.v{lanes}{'f32' if element == ir.FloatType() else 'f64'}"
        self._fma = builder.module.declare_intrinsic(name, (), ir.FunctionType(self.vector, [self.vector] * 3))

    def constant(self, k: int) -> ir.Constant:
        return ir.Constant(self.index, k)

    def _at(self, pointer: ir.Value, offset: ir.Value) -> ir.Value:
        return self.builder.bitcast(self.builder.gep(pointer, [offset], inbounds=True), self.vector.as_pointer())

    def load(self, pointer: ir.Value, offset: ir.Value) -> ir.Value:
        value = self.builder.load(self._at(pointer, offset))
        value.align = self.align
        return value

    def store(self, value: ir.Value, pointer: ir.Value, offset: ir.Value) -> None:
        self.builder.store(value, self._at(pointer, offset)).align = self.align

    def broadcast(self, pointer: ir.Value, offset: ir.Value) -> ir.Value:
        """The scalar at `offset` in every lane (LLVM folds it into an FMA's memory operand)."""
        scalar = self.builder.load(self.builder.gep(pointer, [offset], inbounds=True))
        lane0 = ir.Constant(ir.IntType(32), 0)
        one = self.builder.insert_element(ir.Constant(self.vector, ir.Undefined), scalar, lane0)
        splat = ir.Constant(ir.VectorType(ir.IntType(32), self.lanes), [0] * self.lanes)
        return self.builder.shuffle_vector(one, ir.Constant(self.vector, ir.Undefined), splat)

    def fma(self, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
        """a * b + c, rounded once."""
        return self.builder.call(self._fma, [a, b, c])
