"""Element-wise math and matrix products: constructor, shape rule, kernel, gradient (reductions: reduction_ops)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tftk.framework import batch_rows, dtypes, registry
from tftk.framework.constant_value import constant_value
from tftk.framework.sparse_tensor import SparseTensor
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import inplace
from tftk.ops.op_builder import binary_inputs, broadcast_shape, make_op, op_scope

__all__ = [
    "add", "add_n", "subtract", "multiply", "divide", "truediv", "realdiv", "floordiv",
    "floor_div", "mod", "floormod", "pow", "maximum", "minimum", "squared_difference", "negative",
    "abs", "sign", "square", "sqrt", "rsqrt", "exp", "expm1", "log", "log1p", "sin", "cos", "tan",
    "tanh", "sigmoid", "reciprocal", "floor", "ceil", "round", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_not",
    "logical_xor", "is_finite", "is_nan", "is_inf", "cast", "matmul", "unbroadcast", "scalar_mul",
    "to_float", "to_int32", "to_int64", "to_double", "saturate_cast", "div", "erf", "atan", "asin",
    "acos", "sinh", "cosh",
]


# ---- broadcasting undone, in one place -------------------------------------------------------

def _sum_to_shape(grad: np.ndarray, shape: tuple) -> np.ndarray:
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and grad.shape[i + lead] != 1)
    return grad.sum(axis=axes, keepdims=True).reshape(shape) if axes else grad.reshape(shape)


def shape_of(like: Tensor) -> Tensor:
    """The runtime shape of `like` as an int32 vector op.

    Gradient helpers take this instead of `like` itself: the Shape op runs as soon as `like`
    exists, so the array need not stay alive until the backward pass (and its buffer can be
    reused) just for its shape.
    """
    return make_op("Shape", [like], dtypes.int32, [like.shape.ndims])


def _keeps_shape(like: TensorShape, other: TensorShape) -> bool:
    """Whether broadcasting a value of shape `like` against one of shape `other` gives `like`'s shape
    whatever `like`'s unknown dims are: `other` has no more dims, each 1 or `like`'s known dim."""
    like_dims, other_dims = like.as_tuple(), other.as_tuple()
    if like_dims is None or other_dims is None or len(other_dims) > len(like_dims):
        return False
    return all(o == 1 or (o is not None and o == l) for o, l in zip(other_dims[::-1], like_dims[::-1]))


def unbroadcast(grad: Tensor, like: Tensor, other: Tensor | None = None) -> Tensor:
    """Sum `grad` down to the shape of `like` (undoing numpy broadcasting in the forward op, which
    broadcast `like` against `other` when given).

    The result is named "Reshape" (then "Reshape_1", ...) in the gradient's scope, as TF1's
    sum-then-reshape is, so programs printing gradient tensors see TF1's names; when no sum is
    needed it is an Identity, which costs nothing at run time. No sum is needed where the shapes are
    known equal, or where `other` broadcasts into `like` (a bias added to a batch of unknown size):
    then nothing reads `like`'s shape, so a plan may fuse `like`'s producer with the forward op
    (Conv2D + Add of a bias + Relu, as with BiasAdd).
    """
    g_dims, x_dims = grad.shape.as_tuple(), like.shape.as_tuple()
    if (g_dims is not None and g_dims == x_dims and like.shape.is_fully_defined()) \
            or (other is not None and _keeps_shape(like.shape, other.shape)):
        return make_op("Identity", [grad], grad.dtype, like.shape, "Reshape")
    if like.shape.is_fully_defined():
        return make_op("SumToShape", [grad], grad.dtype, like.shape, "Reshape", attrs={"shape": x_dims})
    return make_op("SumToShapeOf", [grad, shape_of(like)], grad.dtype, like.shape, "Reshape")


def _summing_to_shape() -> Callable:
    """`_sum_to_shape` for one op, a bias's gradient (a float sum over all but the last axis, to
    [channels] or [1, ..., channels]) as BiasAddGrad's product with a kept vector of ones: the
    tutorial's `conv2d(x, w) + b` gives a 50x28x28x32 float32 gradient summed to [32] in 0.05 ms
    against numpy's 0.68 ms (and with fewer roundings, as `tftk.kernels.bias.bias_add_grad` says)."""
    from tftk.kernels.bias import bias_add_grad, ones_for
    ones = [None]

    def run(grad: np.ndarray, shape: tuple) -> np.ndarray:
        if grad.shape != shape and grad.dtype in (np.float32, np.float64) and 1 <= len(shape) <= grad.ndim \
                and shape[-1] == grad.shape[-1] and all(d == 1 for d in shape[:-1]):
            weights = ones[0] = ones_for(grad, ones[0])
            return bias_add_grad(grad, weights).reshape(shape)
        return _sum_to_shape(grad, shape)
    return run


def _bind_sum_to(op, ctx) -> Callable:
    shape, summing = op.get_attr("shape"), _summing_to_shape()
    return lambda g: summing(g, shape)


def _bind_sum_to_shape_of(op, ctx) -> Callable:
    summing = _summing_to_shape()
    return lambda g, s: summing(g, tuple(s.tolist()))


registry.register_op("SumToShape", _bind_sum_to, rows=batch_rows.sum_to_shape)
registry.register_op("SumToShapeOf", _bind_sum_to_shape_of, rows=batch_rows.sum_to_shape_of)


@registry.register_gradient("SumToShape")
def _sum_to_shape_grad(op, grad):
    return [broadcast_like(grad, op.inputs[0])]


@registry.register_gradient("SumToShapeOf")
def _sum_to_shape_of_grad(op, grad):
    return [broadcast_like(grad, op.inputs[0]), None]


def broadcast_like(x: Tensor, like: Tensor) -> Tensor:
    """`x` broadcast to the runtime shape of `like` (a gradient helper)."""
    return make_op("BroadcastLike", [x, shape_of(like)], x.dtype, like.shape)


registry.register_op("BroadcastLike", lambda op, ctx: lambda x, s: np.broadcast_to(x, tuple(s.tolist())),
                     rows=batch_rows.broadcast_like)


@registry.register_gradient("BroadcastLike")
def _broadcast_like_grad(op, grad):
    return [unbroadcast(grad, op.inputs[0]), None]


# ---- element-wise binary ops -----------------------------------------------------------------

def _binary(op_type: str, fn: Callable, out_dtype: dtypes.DType | None = None,
            rows: Callable = batch_rows.elementwise) -> Callable:
    registry.register_op(op_type, lambda op, ctx: fn, fresh=True,
                         inplace=inplace.binary(fn) if isinstance(fn, np.ufunc) else None, rows=rows)

    def constructor(x: Any, y: Any, name: str | None = None) -> Tensor:
        with op_scope(name, op_type, [x, y]) as scope:
            x, y = binary_inputs(x, y, op_type)
            shape = broadcast_shape(x.shape, y.shape, scope[:-1])
            return make_op(op_type, [x, y], out_dtype or x.dtype, shape, scope)

    constructor.__name__ = op_type
    constructor.__doc__ = f"Element-wise {op_type} with numpy broadcasting."
    return constructor


add = _binary("Add", np.add, rows=batch_rows.additive)
subtract = _binary("Sub", np.subtract, rows=batch_rows.additive)
multiply = _binary("Mul", np.multiply, rows=batch_rows.scaling(0, 1))
realdiv = _binary("RealDiv", np.true_divide, rows=batch_rows.scaling(0))
floordiv = floor_div = _binary("FloorDiv", np.floor_divide)
mod = floormod = _binary("FloorMod", np.mod)
pow = _binary("Pow", np.power)  # noqa: A001 - TF's public name
maximum = _binary("Maximum", np.maximum)
minimum = _binary("Minimum", np.minimum)
def _squared_difference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(x - y)^2, and |x - y|^2 for complex operands (TF's kernel: d * conj(d))."""
    d = x - y
    return d * np.conj(d) if np.iscomplexobj(d) else np.square(d)


squared_difference = _binary("SquaredDifference", _squared_difference)
atan2 = _binary("Atan2", np.arctan2)
equal = _binary("Equal", np.equal, dtypes.bool)
not_equal = _binary("NotEqual", np.not_equal, dtypes.bool)
less = _binary("Less", np.less, dtypes.bool)
less_equal = _binary("LessEqual", np.less_equal, dtypes.bool)
greater = _binary("Greater", np.greater, dtypes.bool)
greater_equal = _binary("GreaterEqual", np.greater_equal, dtypes.bool)
logical_and = _binary("LogicalAnd", np.logical_and, dtypes.bool)
logical_or = _binary("LogicalOr", np.logical_or, dtypes.bool)
registry.not_differentiable("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
                            "LogicalAnd", "LogicalOr", "FloorDiv")


def logical_xor(x: Any, y: Any, name: str | None = None) -> Tensor:
    with op_scope(name, "LogicalXor", [x, y]) as scope:
        return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=scope)


def truediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x / y; integer inputs are converted to floating point first (TF's truediv)."""
    with op_scope(name, "truediv", [x, y]) as scope:  # TF1 names `x / y` and tf.divide "truediv"
        x, y = binary_inputs(x, y, "RealDiv")
        if x.dtype.is_integer:
            target = dtypes.float32 if x.dtype.size <= 2 else dtypes.float64
            x, y = cast(x, target), cast(y, target)
        return realdiv(x, y, name=scope)


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Python 3 division (`x / y`)."""
    return truediv(x, y, name=name)


def div(x: Any, y: Any, name: str | None = None) -> Tensor:
    """TF1's `tf.div`: floor division for integers, true division for floats; the op is named after
    the `div` scope, as in TF."""
    with name_scope(name, "div", [x, y]) as scope:
        x, y = binary_inputs(x, y, "Div")
        return floordiv(x, y, name=scope) if x.dtype.is_integer else realdiv(x, y, name=scope)


@registry.register_gradient("Add")
def _add_grad(op, grad):
    x, y = op.inputs
    return [unbroadcast(grad, x, y), unbroadcast(grad, y, x)]


@registry.register_gradient("Sub")
def _sub_grad(op, grad):
    x, y = op.inputs
    return [unbroadcast(grad, x, y), unbroadcast(negative(grad), y, x)]


def _conj(x: Tensor) -> Tensor:
    """conj(x) for complex x, x itself otherwise (no op in real graphs).

    TF's gradient of a holomorphic f is grad * conj(f'(z)), so every rule below multiplies by the
    conjugated derivative."""
    if not x.dtype.is_complex:
        return x
    from tftk.ops.bessel_erfinv_ops import conj  # beside math_ops; imported on use
    return conj(x)


@registry.register_gradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    return [unbroadcast(multiply(grad, _conj(y)), x), unbroadcast(multiply(_conj(x), grad), y)]


@registry.register_gradient("RealDiv")
def _realdiv_grad(op, grad):
    x, y = op.inputs
    return [unbroadcast(realdiv(grad, _conj(y)), x),
            unbroadcast(negative(multiply(grad, _conj(realdiv(op.outputs[0], y)))), y)]


@registry.register_gradient("FloorMod")
def _floormod_grad(op, grad):
    x, y = op.inputs
    return [unbroadcast(grad, x), unbroadcast(negative(multiply(grad, floordiv(x, y))), y)]


@registry.register_gradient("Pow")
def _pow_grad(op, grad):
    x, y, z = _conj(op.inputs[0]), _conj(op.inputs[1]), _conj(op.outputs[0])
    gx = multiply(grad, multiply(y, pow(x, subtract(y, 1))))
    safe_log = make_op("SafeLog", [x], x.dtype, x.shape)
    gy = multiply(grad, multiply(z, safe_log))
    return [unbroadcast(gx, x), unbroadcast(gy, y)]


def _safe_log(x: np.ndarray) -> np.ndarray:
    """log(x) where x > 0 (complex x: x != 0), else 0: the d/dy of x**y as TF defines it."""
    defined = x != 0 if np.iscomplexobj(x) else x > 0
    return np.log(np.where(defined, x, 1)).astype(x.dtype, copy=False)


registry.register_op("SafeLog", lambda op, ctx: _safe_log)
registry.not_differentiable("SafeLog")


def _winner_mask_gradient(op_type: str, wins: Callable) -> None:
    """max/min: the gradient goes to x where x wins (ties included, as TF), else to y."""
    mask_type = op_type + "Mask"
    registry.register_op(mask_type, lambda op, ctx: lambda x, y: wins(x, y).astype(x.dtype))
    registry.not_differentiable(mask_type)

    @registry.register_gradient(op_type)
    def gradient(op, grad):
        x, y = op.inputs
        mask = make_op(mask_type, [x, y], grad.dtype, op.outputs[0].shape)
        return [unbroadcast(multiply(grad, mask), x),
                unbroadcast(multiply(grad, subtract(1, mask)), y)]


_winner_mask_gradient("Maximum", np.greater_equal)
_winner_mask_gradient("Minimum", np.less_equal)


@registry.register_gradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    d = multiply(multiply(grad, 2 if x.dtype.is_integer else 2.0), subtract(x, y))
    return [unbroadcast(d, x), unbroadcast(negative(d), y)]


@registry.register_gradient("Atan2")
def _atan2_grad(op, grad):
    y, x = op.inputs
    inv = reciprocal(add(square(x), square(y)))
    return [unbroadcast(multiply(grad, multiply(x, inv)), y),
            unbroadcast(multiply(grad, multiply(negative(y), inv)), x)]


# ---- element-wise unary ops -----------------------------------------------------------------

def _unary(op_type: str, fn: Callable, out_dtype: dtypes.DType | None = None, writes_out: bool = False,
           rows: Callable = batch_rows.elementwise) -> Callable:
    """Register a one-input op; `fn(x, out=...)` may overwrite a donated input when it is a ufunc
    or says so (`writes_out`)."""
    registry.register_op(op_type, lambda op, ctx: fn, fresh=True,
                         inplace=inplace.unary(fn) if isinstance(fn, np.ufunc) or writes_out else None, rows=rows)

    def constructor(x: Any, name: str | None = None) -> Tensor:
        with op_scope(name, op_type, [x]) as scope:
            x = convert_to_tensor(x, name="x")
            return make_op(op_type, [x], out_dtype or x.dtype, x.shape, scope)

    constructor.__name__ = op_type
    constructor.__doc__ = f"Element-wise {op_type}."
    return constructor


def _activation(name: str) -> Callable:
    """`tftk.kernels.activations.<name>(x, out=None)`, imported on first use (it loads Numba)."""
    def run(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        from tftk.kernels import activations
        return getattr(activations, name)(x, out)
    return run


def _activation_grad(name: str) -> Callable:
    def run(y: np.ndarray, g: np.ndarray) -> np.ndarray:
        from tftk.kernels import activations
        return getattr(activations, name)(y, g)
    return run


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return np.reciprocal(np.sqrt(x))


def _erf(x: np.ndarray) -> np.ndarray:
    import math
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x.copy()


negative = _unary("Neg", np.negative, rows=batch_rows.scaling(0))
_real_abs = _unary("Abs", np.abs)


def abs(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's public name
    """|x| element-wise; of a complex tensor a real one (TF's ComplexAbs)."""
    if (x.dtype.is_complex if isinstance(x, Tensor) else np.iscomplexobj(x)):
        from tftk.ops.spectral_ops import complex_abs  # the complex parts sit beside math_ops
        return complex_abs(convert_to_tensor(x, name="x"), name)
    return _real_abs(x, name)

sign = _unary("Sign", np.sign)
square = _unary("Square", np.square)
sqrt = _unary("Sqrt", np.sqrt)
rsqrt = _unary("Rsqrt", _rsqrt)
exp = _unary("Exp", np.exp)
expm1 = _unary("Expm1", np.expm1)
log = _unary("Log", np.log)
log1p = _unary("Log1p", np.log1p)
sin = _unary("Sin", np.sin)
cos = _unary("Cos", np.cos)
tan = _unary("Tan", np.tan)
asin = _unary("Asin", np.arcsin)
acos = _unary("Acos", np.arccos)
atan = _unary("Atan", np.arctan)
sinh = _unary("Sinh", np.sinh)
cosh = _unary("Cosh", np.cosh)
tanh = _unary("Tanh", _activation("tanh"), writes_out=True)
sigmoid = _unary("Sigmoid", _activation("sigmoid"), writes_out=True)
reciprocal = _unary("Reciprocal", np.reciprocal)
erf = _unary("Erf", _erf)
floor = _unary("Floor", np.floor)
ceil = _unary("Ceil", np.ceil)
round = _unary("Round", np.rint)  # noqa: A001 - banker's rounding, as TF
logical_not = _unary("LogicalNot", np.logical_not, dtypes.bool)
is_finite = _unary("IsFinite", np.isfinite, dtypes.bool)
is_nan = _unary("IsNan", np.isnan, dtypes.bool)
is_inf = _unary("IsInf", np.isinf, dtypes.bool)
registry.not_differentiable("Floor", "Ceil", "Round", "LogicalNot", "IsFinite", "IsNan", "IsInf")


def _fused_grad(op_type: str, fn: Callable) -> Callable:
    """A two-input gradient op (`y_or_x`, `grad`) computed in one kernel, as TF's TanhGrad etc."""
    registry.register_op(op_type, lambda op, ctx: fn, rows=batch_rows.elementwise)

    def constructor(a: Tensor, grad: Tensor) -> Tensor:
        return make_op(op_type, [a, grad], grad.dtype, grad.shape)

    return constructor


tanh_grad = _fused_grad("TanhGrad", _activation_grad("tanh_grad"))
sigmoid_grad = _fused_grad("SigmoidGrad", _activation_grad("sigmoid_grad"))
sqrt_grad = _fused_grad("SqrtGrad", lambda y, g: g * 0.5 / y)
rsqrt_grad = _fused_grad("RsqrtGrad", lambda y, g: g * (-0.5 * y * y * y))
reciprocal_grad = _fused_grad("ReciprocalGrad", lambda y, g: g * (-(y * y)))


@registry.register_gradient("TanhGrad")
def _tanh_grad_grad(op, grad):
    y, g = op.inputs
    return [multiply(grad, multiply(-2.0, multiply(g, y))), tanh_grad(y, grad)]


@registry.register_gradient("SigmoidGrad")
def _sigmoid_grad_grad(op, grad):
    y, g = op.inputs
    return [multiply(grad, multiply(g, subtract(1.0, multiply(2.0, y)))), sigmoid_grad(y, grad)]


@registry.register_gradient("SqrtGrad")
def _sqrt_grad_grad(op, grad):
    y, g = op.inputs
    return [negative(multiply(grad, realdiv(op.outputs[0], y))), sqrt_grad(y, grad)]


@registry.register_gradient("RsqrtGrad")
def _rsqrt_grad_grad(op, grad):
    y, g = op.inputs
    return [multiply(grad, multiply(-1.5, multiply(g, square(y)))), rsqrt_grad(y, grad)]


@registry.register_gradient("ReciprocalGrad")
def _reciprocal_grad_grad(op, grad):
    y, g = op.inputs
    return [multiply(grad, multiply(-2.0, multiply(g, y))), reciprocal_grad(y, grad)]


def _zeros_like(x: Tensor) -> Tensor:
    from tftk.ops.array_ops import zeros_like  # array_ops sits beside math_ops; imported on use
    return zeros_like(x)


def _unary_gradient(op_type: str, rule: Callable[[Tensor, Tensor, Tensor], Tensor]) -> None:
    """Register `rule(x, y, grad) -> dx` for a one-input op."""
    registry.register_gradient(op_type)(lambda op, grad: [rule(op.inputs[0], op.outputs[0], grad)])


_unary_gradient("Neg", lambda x, y, g: negative(g))
_unary_gradient("Sign", lambda x, y, g: _zeros_like(x))  # TF: a zero gradient, not None
_unary_gradient("Abs", lambda x, y, g: multiply(g, sign(x)))
_unary_gradient("Square", lambda x, y, g: multiply(g, multiply(2 if x.dtype.is_integer else 2.0, _conj(x))))
_unary_gradient("Sqrt", lambda x, y, g: sqrt_grad(_conj(y), g))
_unary_gradient("Rsqrt", lambda x, y, g: rsqrt_grad(_conj(y), g))
_unary_gradient("Exp", lambda x, y, g: multiply(g, _conj(y)))
_unary_gradient("Expm1", lambda x, y, g: multiply(g, exp(_conj(x))))
_unary_gradient("Log", lambda x, y, g: multiply(g, reciprocal(_conj(x))))
_unary_gradient("Log1p", lambda x, y, g: multiply(g, reciprocal(add(1.0, _conj(x)))))
_unary_gradient("Sin", lambda x, y, g: multiply(g, cos(_conj(x))))
_unary_gradient("Cos", lambda x, y, g: negative(multiply(g, sin(_conj(x)))))
_unary_gradient("Tan", lambda x, y, g: multiply(g, square(reciprocal(cos(_conj(x))))))
_unary_gradient("Asin", lambda x, y, g: multiply(g, rsqrt(subtract(1.0, square(_conj(x))))))
_unary_gradient("Acos", lambda x, y, g: negative(multiply(g, rsqrt(subtract(1.0, square(_conj(x)))))))
_unary_gradient("Atan", lambda x, y, g: multiply(g, reciprocal(add(1.0, square(_conj(x))))))
_unary_gradient("Sinh", lambda x, y, g: multiply(g, cosh(_conj(x))))
_unary_gradient("Cosh", lambda x, y, g: multiply(g, sinh(_conj(x))))
_unary_gradient("Tanh", lambda x, y, g: tanh_grad(_conj(y), g))
_unary_gradient("Sigmoid", lambda x, y, g: sigmoid_grad(_conj(y), g))
_unary_gradient("Reciprocal", lambda x, y, g: reciprocal_grad(_conj(y), g))
_unary_gradient("Erf", lambda x, y, g: multiply(g, multiply(2.0 / np.sqrt(np.pi), exp(negative(square(x))))))


# ---- add_n, cast ----------------------------------------------------------------------------

def _add_n(*arrays: np.ndarray) -> np.ndarray:
    # asarray: the sum of two 0-d arrays is a numpy scalar, which cannot be an `out=`
    out = np.asarray(arrays[0] + arrays[1]) if len(arrays) > 1 else arrays[0].copy()
    for a in arrays[2:]:
        np.add(out, a, out=out)
    return out


def _add_n_inplace(op, ctx, position):
    """AddN written into input `position` when every input has its shape and dtype (plans' partial sums)."""
    def kernel(*arrays):
        out = arrays[position]
        if not (isinstance(out, np.ndarray) and out.flags.writeable
                and all(np.shape(a) == out.shape and a.dtype == out.dtype for a in arrays)):
            return _add_n(*arrays)
        for i, a in enumerate(arrays):
            if i != position:
                np.add(out, a, out=out)
        return out
    return kernel


registry.register_op("AddN", lambda op, ctx: _add_n, inplace=_add_n_inplace, sums_inputs=True, rows=batch_rows.additive)


def add_n(inputs: Sequence[Any], name: str | None = None) -> Tensor:
    """Sum of a list of tensors of the same shape and dtype."""
    if not inputs:
        raise ValueError("inputs must be a non-empty list of tensors")
    tensors = [convert_to_tensor(t) for t in inputs]
    if len(tensors) == 1 and name is None:
        return tensors[0]
    shape = tensors[0].shape
    for t in tensors[1:]:
        if t.dtype is not tensors[0].dtype:
            raise TypeError(f"AddN inputs must share a dtype: {t.dtype.name} vs {tensors[0].dtype.name}")
        shape = shape.merge_with(t.shape)
    return make_op("AddN", tensors, tensors[0].dtype, shape, name)


@registry.register_gradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


def _bind_cast(op, ctx):
    target = op.get_attr("DstT").as_numpy_dtype
    return lambda x: x.astype(target)


def _static_cast(t: Tensor) -> np.ndarray | None:
    value = constant_value(t.op.inputs[0])
    return None if value is None else value.astype(t.dtype.as_numpy_dtype)


registry.register_op("Cast", _bind_cast, fresh=True, static_value=_static_cast, rows=batch_rows.elementwise)


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Convert `x` to `dtype` (float → int truncates toward zero, as TF)."""
    target = dtypes.as_dtype(dtype)
    if isinstance(x, SparseTensor):  # the values change type; indices and shape stay
        return SparseTensor(x.indices, cast(x.values, target, name), x.dense_shape)
    x = convert_to_tensor(x)
    if x.dtype is target:
        return x
    return make_op("Cast", [x], target, x.shape, name, {"SrcT": x.dtype, "DstT": target})


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Cast with values clamped to the target dtype's range first."""
    target = dtypes.as_dtype(dtype)
    value = convert_to_tensor(value)
    if value.dtype.is_floating and target.is_integer or value.dtype.size > target.size:
        lo = max(float(value.dtype.min), float(target.min))
        hi = min(float(value.dtype.max), float(target.max))
        value = maximum(minimum(value, hi), lo)
    return cast(value, target, name=name)


@registry.register_gradient("Cast")
def _cast_grad(op, grad):
    src = op.get_attr("SrcT")
    if src.is_floating and op.get_attr("DstT").is_floating:
        return [cast(grad, src)]
    return [None]


def to_float(x: Any, name: str = "ToFloat") -> Tensor:
    return cast(x, dtypes.float32, name=name)


def to_double(x: Any, name: str = "ToDouble") -> Tensor:
    return cast(x, dtypes.float64, name=name)


def to_int32(x: Any, name: str = "ToInt32") -> Tensor:
    return cast(x, dtypes.int32, name=name)


def to_int64(x: Any, name: str = "ToInt64") -> Tensor:
    return cast(x, dtypes.int64, name=name)


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Tensor:
    return multiply(scalar, x, name=name)


# ---- matrix products ------------------------------------------------------------------------

def _transposes(op) -> tuple[bool, bool]:
    """Whether the kernel transposes a and b: b not when a plan hands it over laid out transposed."""
    pretransposed = getattr(op, "attrs", {}).get(registry.TRANSPOSED_INPUTS_ATTR, ())
    return op.get_attr("transpose_a"), op.get_attr("transpose_b") and 1 not in pretransposed


# Work a product call costs beyond its multiply-adds, in flops: packing the operand every piece reads
# whole, the BLAS call. Measured on one Zen 4 thread: the deep-MNIST products (50x3136 @ 3136x1024 and
# its two gradients, ~4.5-5.5 ms each) cut in 16 pieces took ~0.03 ms a piece more, in 4-8 pieces no more.
_PRODUCT_CALL_FLOPS = 2.5e6


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for 2-D a, b (views, maybe transposed), cut for the work-sharing threads along its longer
    output side where big enough (`tftk.kernels.work_sharing`). Every output element still sums over the
    whole inner dimension: the deep-MNIST products give the whole call's bits (OpenBLAS runs a few-row
    piece with other kernels, so small pieces may round otherwise).

    Sharing steps run BLAS on one thread (`tftk.client.threads`), so a big product must be cut to use the
    second core: the deep-MNIST fc1 products ran in 2.3-2.7 ms cut in two against 4.4-5.3 ms whole, as
    fast as on OpenBLAS's two threads, and without the barrier that stalls on a busy core."""
    from tftk.kernels import work_sharing
    (m, k), n = a.shape, b.shape[1]
    if n >= m:
        ranges = work_sharing.batch_ranges(n, 2.0 * m * k, _PRODUCT_CALL_FLOPS)
        return work_sharing.stacked(ranges, lambda c0, c1: np.matmul(a, b[:, c0:c1]), axis=1)
    ranges = work_sharing.batch_ranges(m, 2.0 * n * k, _PRODUCT_CALL_FLOPS)
    return work_sharing.stacked(ranges, lambda r0, r1: np.matmul(a[r0:r1], b))


def _bind_matmul(op, ctx):
    ta, tb = _transposes(op)
    if op.inputs[0].shape.ndims == 2 and op.inputs[1].shape.ndims == 2:
        return lambda a, b: _product(a.T if ta else a, b.T if tb else b)

    def batched(a, b):
        if ta:
            a = np.swapaxes(a, -1, -2)
        if tb:
            b = np.swapaxes(b, -1, -2)
        return np.matmul(a, b)

    return batched


def _transposed_b(op) -> tuple[int, ...]:
    """MatMul reads b transposed under transpose_b: a plan may hand over b.T instead (2-D only)."""
    two_d = op.inputs[0].shape.ndims == 2 and op.inputs[1].shape.ndims == 2
    return (1,) if two_d and op.get_attr("transpose_b") else ()


def _bind_transposed_copy(op, ctx):
    from tftk.kernels.transpose import transposed
    return transposed


def _bind_matmul_slice(op, ctx):
    """A 2-D product read only through a slice (`key`: ints and slices, one per axis) computes just
    the rows and columns the slice keeps: ``(A @ B)[r, c] == A[r] @ B[:, c]``. Anything else is the
    product, then the slice."""
    key = op.consumer.get_attr("key")
    if op.inputs[0].shape.ndims != 2 or op.inputs[1].shape.ndims != 2 or not 1 <= len(key) <= 2 \
            or not all(isinstance(k, (int, slice)) for k in key):
        product = _bind_matmul(op, ctx)
        return lambda a, b: product(a, b)[key]
    ta, tb = _transposes(op)
    rows, cols = (key + (slice(None),))[:2]
    return lambda a, b: np.matmul((a.T if ta else a)[rows], (b.T if tb else b)[:, cols])


def _bind_matmul_accumulate(op, ctx, donor: int | None = None):
    """A plan's partial sum `total + a @ b` (`tftk.client.plan.stream_sums`): one gemm adding the product
    into a copy of `total`, or into `total` itself when the executor donates it or the caller feeds it
    as a running total (IN_PLACE_ATTR: `tftk.client.plan.accumulate_into_totals`)."""
    from tftk.kernels import blas
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    donor = 0 if op.attrs.get(registry.IN_PLACE_ATTR) else donor
    dtype = np.dtype(op.outputs[0].dtype.as_numpy_dtype)

    def kernel(total, a, b):
        a, b = (a.T if ta else a), (b.T if tb else b)
        # a total that is also an operand (the sum's own buffer read by the product) is safe to add into:
        # add_product then makes the product first
        writable = donor == 0 and isinstance(total, np.ndarray) and total.flags.writeable \
            and total.flags.c_contiguous and total.dtype == dtype and total.shape == (a.shape[0], b.shape[1])
        return blas.add_product(total if writable else np.array(total, dtype, order="C"), a, b)

    return kernel


registry.register_op("MatMul", _bind_matmul, fresh=True, transposed_inputs=_transposed_b, rows=batch_rows.matmul)
registry.register_op(registry.MATMUL_ACCUMULATE, _bind_matmul_accumulate, inplace=_bind_matmul_accumulate,
                     rows=batch_rows.accumulate)
registry.not_differentiable(registry.MATMUL_ACCUMULATE)  # exists in plans only, never in a graph
registry.register_op(registry.TRANSPOSED_COPY, _bind_transposed_copy, fresh=True)
registry.not_differentiable(registry.TRANSPOSED_COPY)  # exists in plans only, never in a graph
# Plans run a product read only through a slice as the product of the slice's part: the gradient of
# an LSTM step's [x, h] (dicfo @ w.T) when only h's columns are needed (the first layer's x is data).
registry.register_op("MatMulStridedSlice", _bind_matmul_slice, fresh=True, transposed_inputs=_transposed_b,
                     rows=batch_rows.matmul_slice)
registry.not_differentiable("MatMulStridedSlice")  # exists in plans only, never in a graph
registry.register_fusion("MatMul", "StridedSlice", "MatMulStridedSlice")


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False,
           adjoint_a: bool = False, adjoint_b: bool = False, a_is_sparse: bool = False,
           b_is_sparse: bool = False, name: str | None = None) -> Tensor:
    """Matrix product of the last two dims (batched over leading dims), optionally transposed."""
    if transpose_a and adjoint_a or transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_a and adjoint_a (transpose_b and adjoint_b) can be True.")
    with op_scope(name, "MatMul", [a, b]) as scope:
        if adjoint_a:  # the conjugate transpose: Conj (nothing for real a), then transposed
            a = _conj(convert_to_tensor(a, name="a"))
        if adjoint_b:
            b = _conj(convert_to_tensor(b, name="b"))
        return _matmul(a, b, transpose_a or adjoint_a, transpose_b or adjoint_b, scope)


def _matmul(a: Any, b: Any, ta: bool, tb: bool, scope: str) -> Tensor:
    name = scope[:-1]
    a, b = binary_inputs(a, b, "MatMul")
    ra, rb = a.shape.ndims, b.shape.ndims
    if ra is not None and ra < 2 or rb is not None and rb < 2:
        raise ValueError(f"Shape must be rank >= 2 for MatMul '{name or 'MatMul'}': got shapes "
                         f"{a.shape} and {b.shape}.")
    shape = TensorShape(None)
    if ra is not None and rb is not None:
        da, db = a.shape.as_list(), b.shape.as_list()
        m, ka = (da[-1], da[-2]) if ta else (da[-2], da[-1])
        kb, n = (db[-1], db[-2]) if tb else (db[-2], db[-1])
        if ka is not None and kb is not None and ka != kb:
            raise ValueError(f"Dimensions must be equal, but are {ka} and {kb} for "
                             f"'{name or 'MatMul'}' (op: 'MatMul') with input shapes: {a.shape}, {b.shape}.")
        batch = broadcast_shape(TensorShape(da[:-2]), TensorShape(db[:-2]), name or "MatMul")
        shape = batch.concatenate([m, n])
    return make_op("MatMul", [a, b], a.dtype, shape, scope, {"transpose_a": ta, "transpose_b": tb})


@registry.register_gradient("MatMul")
def _matmul_grad(op, grad):
    a, b = _conj(op.inputs[0]), _conj(op.inputs[1])
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    if not ta and not tb:
        ga, gb = matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)
    elif not ta and tb:
        ga, gb = matmul(grad, b), matmul(grad, a, transpose_a=True)
    elif ta and not tb:
        ga, gb = matmul(b, grad, transpose_b=True), matmul(a, grad)
    else:
        ga, gb = matmul(b, grad, transpose_a=True, transpose_b=True), matmul(grad, a, transpose_a=True, transpose_b=True)
    return [unbroadcast(ga, op.inputs[0]), unbroadcast(gb, op.inputs[1])]
