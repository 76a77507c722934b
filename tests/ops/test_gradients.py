"""Float64 finite-difference checks of every core op's gradient (math, array, clip, sparse, image).

One row per op (or op combination); `tests/test_gradient_coverage.py` collects GRADIENT_CASES.
Second-order rows (a `tf.gradients` inside `build`) cover the fused *Grad ops and the helper ops
gradients create (SumToShape, BroadcastLike, ExpandReduced, StridedSliceGrad).
"""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tests.gradient_check import GradientCase, check_gradient
from tftk.framework.indexed_slices import IndexedSlices
from tftk.ops import array_ops, clip_ops, einsum_ops, gather_ops, image_ops, linalg_ops, math_ops, matrix_ops
from tftk.ops import scan_ops
from tftk.ops import slicing_ops, spectral_ops, tile_pad_ops
from tftk.ops import segment_ops as seg, sparse_ops
from tftk.ops.control_flow_ops import cond

RNG = np.random.default_rng(42)


def arr(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, size=shape)


def pos(*shape):
    return arr(*shape, lo=0.5, hi=2.0)


def second_order(fn):
    """d/dx of sum(fn(x) * w): its graph holds fn's gradient ops, differentiated once more."""
    def build(x):
        y = fn(x)
        w = tf.constant(np.linspace(0.5, 1.5, int(np.prod(y.shape.as_list()))).reshape(y.shape.as_list()))
        return tf.gradients(y * w, x)[0]
    return build


def fixed(t, shape):
    """`t` with its static shape set (a checked case needs a fully known output shape)."""
    t.set_shape(shape)
    return t


UNARY = [
    ("Neg", math_ops.negative, arr), ("Abs", math_ops.abs, pos), ("Square", math_ops.square, arr),
    ("Sqrt", math_ops.sqrt, pos), ("Rsqrt", math_ops.rsqrt, pos), ("Exp", math_ops.exp, arr),
    ("Expm1", math_ops.expm1, arr), ("Log", math_ops.log, pos), ("Log1p", math_ops.log1p, pos),
    ("Sin", math_ops.sin, arr), ("Cos", math_ops.cos, arr), ("Tan", math_ops.tan, arr),
    ("Asin", math_ops.asin, lambda *s: arr(*s, lo=-0.8, hi=0.8)),
    ("Acos", math_ops.acos, lambda *s: arr(*s, lo=-0.8, hi=0.8)), ("Atan", math_ops.atan, arr),
    ("Sinh", math_ops.sinh, arr), ("Cosh", math_ops.cosh, arr), ("Tanh", math_ops.tanh, arr),
    ("Sigmoid", math_ops.sigmoid, arr), ("Reciprocal", math_ops.reciprocal, pos), ("Erf", math_ops.erf, arr),
]

BINARY = [
    ("Add", math_ops.add), ("Sub", math_ops.subtract), ("Mul", math_ops.multiply),
    ("RealDiv", math_ops.realdiv), ("Maximum", math_ops.maximum), ("Minimum", math_ops.minimum),
    ("SquaredDifference", math_ops.squared_difference), ("FloorMod", math_ops.floormod),
    ("Atan2", lambda a, b: math_ops.atan2(a, b)),
]

GRADIENT_CASES: list[GradientCase] = []
GRADIENT_CASES += [GradientCase(f"{name}", fn, [make(2, 3)]) for name, fn, make in UNARY]
GRADIENT_CASES += [GradientCase(f"{name}_broadcast", fn, [pos(2, 3), pos(3) + 2.1]) for name, fn in BINARY]
GRADIENT_CASES += [GradientCase(f"{name}_grad_grad", second_order(fn), [make(2, 2)]) for name, fn, make in [
    ("TanhGrad", math_ops.tanh, arr), ("SigmoidGrad", math_ops.sigmoid, arr), ("SqrtGrad", math_ops.sqrt, pos),
    ("RsqrtGrad", math_ops.rsqrt, pos), ("ReciprocalGrad", math_ops.reciprocal, pos),
    ("BroadcastLike_SumToShape", lambda x: tf.reduce_sum(x * x + tf.constant(np.ones((3, 2, 2))), axis=0), arr),
    ("StridedSliceGrad", lambda x: x[1:, ::-1] * x[1:, ::-1], arr),
    ("ExpandReduced", lambda x: math_ops.square(tf.reduce_sum(x, axis=1)), arr),
    ("SumToShapeOf", lambda x: fixed(tf.placeholder_with_default(x * x, [None, 2]) + tf.constant(np.ones((2, 2))),
                                     [2, 2]), arr),
]]
GRADIENT_CASES.append(GradientCase("ReshapeLike_grad_grad", second_order(
    lambda x: fixed(array_ops.squeeze(tf.placeholder_with_default(x * x, [None, 1, None])), [2, 3])), [arr(2, 1, 3)]))

GRADIENT_CASES += [
    GradientCase("Pow", math_ops.pow, [pos(2, 3), arr(2, 3)]),
    GradientCase("AddN", lambda a, b, c: math_ops.add_n([a, b, c]), [arr(2, 2), arr(2, 2), arr(2, 2)]),
    GradientCase("Cast_f64_f32_f64", lambda x: math_ops.cast(math_ops.cast(x, tf.float32), tf.float64),
                 [arr(3)], eps=1e-2, rtol=1e-4, atol=1e-4),
    GradientCase("SumToShapeOf", lambda a, b: fixed(tf.placeholder_with_default(a, [None, 3]) + b, [2, 3]),
                 [arr(2, 3), arr(2, 3)]),
    # a bias added to a batch of unknown size: the batch's gradient is an Identity (no Shape read)
    GradientCase("Add_bias_to_unknown_batch", lambda a, b: fixed(tf.placeholder_with_default(a, [None, 3]) + b, [2, 3]),
                 [arr(2, 3), arr(3)]),
    GradientCase("Sub_unknown_batch_minus_row", lambda a, b: fixed(b - tf.placeholder_with_default(a, [None, 3]), [2, 3]),
                 [arr(2, 3), arr(1, 3)]),
    GradientCase("Identity", lambda x: array_ops.identity(x) * x, [arr(3)]),
    GradientCase("Sign", lambda x: math_ops.sign(x) * x, [pos(3) * np.array([1, -1, 1])]),  # |x|: d = sign(x)
    GradientCase("Merge_cond", lambda x: cond(tf.constant(True), lambda: x * 2.0, lambda: x * x), [arr(3)]),
]

for ta in (False, True):
    for tb in (False, True):
        a = arr(3, 2) if ta else arr(2, 3)
        b = arr(4, 3) if tb else arr(3, 4)
        GRADIENT_CASES.append(GradientCase(f"MatMul_ta{int(ta)}_tb{int(tb)}",
                                           lambda x, y, ta=ta, tb=tb: math_ops.matmul(x, y, ta, tb), [a, b]))
GRADIENT_CASES.append(GradientCase("MatMul_batched", math_ops.matmul, [arr(2, 2, 3), arr(3, 2)]))

for op_name, fn in (("Sum", tf.reduce_sum), ("Mean", tf.reduce_mean), ("Max", tf.reduce_max),
                    ("Min", tf.reduce_min), ("Prod", tf.reduce_prod)):
    for axis, keep in ((None, False), (1, False), ([0, 2], True), (-1, True)):
        GRADIENT_CASES.append(GradientCase(f"{op_name}_axis{axis}_keep{int(keep)}",
                                           lambda x, fn=fn, axis=axis, keep=keep: fn(x, axis=axis, keepdims=keep),
                                           [RNG.permutation(24).reshape(2, 3, 4) / 10.0 + 0.5]))

GRADIENT_CASES += [
    GradientCase("Reshape", lambda x: array_ops.reshape(x, [3, -1]), [arr(2, 3)]),
    GradientCase("ReshapeDynamic", lambda x: fixed(array_ops.reshape(x, array_ops.shape(
        tf.placeholder_with_default(np.zeros((3, 2)), [None, None]))), [3, 2]), [arr(2, 3)]),
    GradientCase("ReshapeLike_Squeeze", lambda x: fixed(array_ops.squeeze(
        tf.placeholder_with_default(x, [None, 1, None])), [2, 3]), [arr(2, 1, 3)]),
    GradientCase("Squeeze", lambda x: array_ops.squeeze(x, [1]), [arr(2, 1, 3)]),
    GradientCase("ExpandDims", lambda x: array_ops.expand_dims(x, -1), [arr(2, 3)]),
    GradientCase("Transpose", lambda x: array_ops.transpose(x, [2, 0, 1]), [arr(2, 3, 4)]),
    GradientCase("Pack", lambda a, b: array_ops.stack([a, b], axis=1), [arr(2, 3), arr(2, 3)]),
    GradientCase("ConcatV2", lambda a, b: array_ops.concat([a, b], -1), [arr(2, 3), arr(2, 1)]),
    GradientCase("StridedSlice", lambda x: x[..., 1::2, tf.newaxis, 0], [arr(2, 4, 3)]),
    GradientCase("Fill", lambda v: array_ops.fill([2, 3], v), [np.array(0.7)]),
    GradientCase("PlaceholderWithDefault", lambda x: tf.placeholder_with_default(x, [3]) * x, [arr(3)]),
    GradientCase("IndexedSlicesToDense", lambda v: tf.convert_to_tensor(IndexedSlices(
        v, tf.constant([2, 0, 2]), tf.constant([4, 2]))), [arr(3, 2)]),
    # indexing, slicing, tiling and sequence ops
    GradientCase("Slice_static", lambda x: slicing_ops.slice(x, [1, 0], [1, -1]), [arr(3, 4)]),
    GradientCase("Slice_dynamic", lambda x: fixed(slicing_ops.slice(x, tf.placeholder_with_default([1, 1], [2]), [2, 2]),
                                                  [2, 2]), [arr(3, 4)]),
    GradientCase("strided_slice_masks", lambda x: slicing_ops.strided_slice(x, [0, 3], [2, 0], [1, -1], begin_mask=1,
                                                                   shrink_axis_mask=0), [arr(3, 4)]),
    GradientCase("Split_num", lambda x: array_ops.split(x, 2, axis=1)[1] * 3.0, [arr(2, 4)]),
    GradientCase("Split_sizes", lambda x: array_ops.concat(array_ops.split(x, [1, -1], 0)[::-1], 0), [arr(3, 2)]),
    GradientCase("Unpack", lambda x: array_ops.unstack(x, axis=1)[2], [arr(2, 3)]),
    GradientCase("GatherV2_axis0_dupes", lambda p: gather_ops.gather(p, [[2, 0], [2, 2]]), [arr(4, 3)]),
    GradientCase("GatherV2_axis1", lambda p: gather_ops.gather(p, [1, 1, 0], axis=1), [arr(2, 3, 2)]),
    GradientCase("GatherNd", lambda p: gather_ops.gather_nd(p, [[0, 1], [2, 0], [0, 1]]), [arr(3, 2, 2)]),
    GradientCase("Tile", lambda x: tile_pad_ops.tile(x, [2, 3]), [arr(2, 2)]),
    GradientCase("Pad_constant", lambda x: tile_pad_ops.pad(x, [[1, 0], [2, 1]], constant_values=3), [arr(2, 3)]),
    GradientCase("MirrorPad_reflect", lambda x: tile_pad_ops.pad(x, [[2, 1], [1, 2]], "REFLECT"), [arr(3, 4)]),
    GradientCase("MirrorPad_symmetric", lambda x: tile_pad_ops.pad(x, [[2, 1], [3, 2]], "SYMMETRIC"), [arr(3, 4)]),
    GradientCase("ReverseV2", lambda x: tile_pad_ops.reverse(x, [0, -1]), [arr(2, 3)]),
    GradientCase("Select", lambda a, b: gather_ops.where(tf.constant([[True, False, True], [False, False, True]]), a, b),
                 [arr(2, 3), arr(2, 3)]),
    GradientCase("Select_vector_condition", lambda a, b: gather_ops.where(tf.constant([False, True]), a, b),
                 [arr(2, 3), arr(2, 3)]),
    GradientCase("BooleanMask", lambda x: slicing_ops.boolean_mask(x, tf.constant([True, False, True]), axis=1) *
                 tf.constant(np.ones((2, 2))), [arr(2, 3)]),
    GradientCase("SegmentSum", lambda x: seg.segment_sum(x, tf.constant([0, 0, 2, 2])), [arr(4, 2)]),
    GradientCase("SegmentMean", lambda x: seg.segment_mean(x, tf.constant([0, 1, 1, 1])), [arr(4, 2)]),
    GradientCase("UnsortedSegmentSum", lambda x: seg.unsorted_segment_sum(x, tf.constant([2, -1, 0, 2]), 3),
                 [arr(4, 2)]),
    GradientCase("BroadcastTo", lambda x: tile_pad_ops.broadcast_to(x, [2, 3, 2]), [arr(3, 1)]),
    GradientCase("SparseToDense", lambda v, d: sparse_ops.sparse_to_dense([[0, 1], [2, 0]], [3, 2], v, d),
                 [arr(2), np.array(0.3)]),
    # scan, matrix, linalg and spectral ops
    GradientCase("Cumsum_exclusive_reverse", lambda x: scan_ops.cumsum(x, 1, exclusive=True, reverse=True), [arr(2, 4)]),
    GradientCase("Cumsum", lambda x: scan_ops.cumsum(x, 0), [arr(3, 2)]),
    GradientCase("Cumprod", lambda x: scan_ops.cumprod(x, 1), [pos(2, 3)]),
    GradientCase("Cumprod_exclusive_reverse", lambda x: scan_ops.cumprod(x, 0, exclusive=True, reverse=True), [pos(3, 2)]),
    GradientCase("MatrixDiagPart_trace", lambda x: matrix_ops.trace(x) * 1.0 + matrix_ops.matrix_diag_part(x)[..., 0],
                 [arr(2, 3, 4)]),
    GradientCase("FFT_Complex_Real_Imag", lambda re, im: spectral_ops.real(spectral_ops.fft(spectral_ops.complex(re, im))) * 0.5
                 + spectral_ops.imag(spectral_ops.fft(spectral_ops.complex(re, im))), [arr(2, 4), arr(2, 4)]),
    GradientCase("IFFT", lambda re, im: spectral_ops.real(spectral_ops.ifft(spectral_ops.complex(re, im))) - spectral_ops.imag(spectral_ops.ifft(spectral_ops.complex(re, im))),
                 [arr(3), arr(3)]),
    GradientCase("tensordot", lambda a, b: einsum_ops.tensordot(a, b, [[0, 2], [1, 0]]), [arr(2, 3, 4), arr(4, 2, 5)]),
    GradientCase("norm", lambda x: linalg_ops.norm(x, axis=1), [arr(2, 3)]),
    # clip_ops
    GradientCase("clip_by_value", lambda x: clip_ops.clip_by_value(x, -0.5, 0.5),
                 [np.array([-0.9, -0.3, 0.1, 0.7, 0.45])]),
    GradientCase("clip_by_norm", lambda x: clip_ops.clip_by_norm(x, 1.0, axes=[1]), [np.array([[3.0, 4.0], [0.1, 0.2]])]),
    GradientCase("clip_by_global_norm", lambda a, b: clip_ops.clip_by_global_norm([a, None, b], 1.0)[0][2],
                 [arr(2, 2), arr(3)]),
    # image_ops
    GradientCase("ResizeBilinear", lambda x: image_ops.resize_images(x, [3, 5]), [arr(1, 2, 3, 2)]),
    GradientCase("ResizeBilinear_align", lambda x: image_ops.resize_images(x, [4, 2], align_corners=True),
                 [arr(3, 3, 1)]),
    GradientCase("ResizeNearestNeighbor", lambda x: image_ops.resize_images(
        x, [5, 2], image_ops.ResizeMethod.NEAREST_NEIGHBOR), [arr(1, 3, 3, 2)]),
    GradientCase("rot90_flip", lambda x: image_ops.rot90(image_ops.flip_left_right(x), 3), [arr(2, 3, 1)]),
    GradientCase("adjust_gamma", lambda x: image_ops.adjust_gamma(x, 2.2, 0.9), [pos(2, 2, 3) / 2]),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_gradient_matches_finite_differences(case):
    check_gradient(case)


def test_gather_gradient_is_indexed_slices_for_axis_0():
    params = tf.constant(np.arange(8.0).reshape(4, 2))
    grad = tf.gradients(tf.reduce_sum(gather_ops.gather(params, [[3, 1], [3, 0]])), params)[0]
    assert isinstance(grad, IndexedSlices)
    with tf.Session() as sess:
        value = sess.run(grad)
    np.testing.assert_array_equal(value.indices, [3, 1, 3, 0])
    np.testing.assert_array_equal(value.values, np.ones((4, 2)))
    np.testing.assert_array_equal(value.dense_shape, [4, 2])


def test_clip_by_global_norm_keeps_indexed_slices_sparse():
    values = tf.constant([[3.0, 4.0]])
    slices = IndexedSlices(values, tf.constant([1]), tf.constant([3, 2]))
    clipped, norm = clip_ops.clip_by_global_norm([slices, tf.constant([0.0])], 1.0)
    assert isinstance(clipped[0], IndexedSlices)
    with tf.Session() as sess:
        v, n = sess.run([clipped[0].values, norm])
    np.testing.assert_allclose(v, [[0.6, 0.8]], rtol=1e-6)
    assert n == pytest.approx(5.0)


@pytest.mark.parametrize("like,other,keeps", [
    ([None, 28, 28, 32], [32], True),  # a conv layer's bias: no sum, nothing reads the batch's shape
    ([None, 3], [1, 3], True),
    ([None, 3], [], True),
    ([None, 3], [None, 3], False),  # other's unknown dim may be bigger (when like's is 1)
    ([None, 3], [2, 3], False),
    ([4, 1], [3], False),  # broadcasts like up
    ([3], [2, 3], False),  # more dims than like
    (None, [3], False),
    ([None, 3], None, False),
])
def test_an_operand_broadcast_into_the_other_needs_no_sum(like, other, keeps):
    from tftk.framework.tensor_shape import TensorShape
    assert math_ops._keeps_shape(TensorShape(like), TensorShape(other)) is keeps


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("grad_shape,shape", [
    ((50, 28, 28, 32), (32,)),  # the tutorial's conv bias (BLAS's ones product)
    ((4, 5, 3), (1, 1, 3)),
    ((7, 1), (1,)),
    ((4, 5, 3), (5, 1)),  # not a bias: numpy's sum
])
def test_sum_to_shape_kernels_sum_the_broadcast_axes(grad_shape, shape, dtype):
    grad = np.random.default_rng(3).standard_normal(grad_shape).astype(dtype)
    keep = len(grad_shape) - len(shape)
    axes = tuple(range(keep)) + tuple(keep + i for i, d in enumerate(shape) if d == 1 and grad_shape[keep + i] != 1)
    want = grad.astype(np.float64).sum(axis=axes, keepdims=True).reshape(shape)
    with tf.Graph().as_default():
        op = math_ops.unbroadcast(tf.placeholder(dtype, grad_shape), tf.placeholder(dtype, shape)).op
        dynamic = math_ops.unbroadcast(tf.placeholder(dtype, grad_shape), tf.placeholder(dtype, [None] * len(shape))).op
    from tftk.framework import registry
    for got in (registry.lookup(op.type).kernel(op, None)(grad),
                registry.lookup(dynamic.type).kernel(dynamic, None)(grad, np.array(shape, np.int32))):
        assert got.shape == shape and got.dtype == dtype
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(grad).sum())
