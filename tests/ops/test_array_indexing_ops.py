"""Forward values of the array ops against numpy references, and their build/run-time errors."""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tftk.ops import array_ops, gather_ops, segment_ops as seg, sequence_ops, slicing_ops, sparse_ops, tile_pad_ops

DTYPES = [np.float32, np.float64, np.int32, np.int64]
SHAPES = [(4,), (3, 4), (2, 3, 4)]


def run(t, feed=None):
    with tf.Session(graph=t[0].graph if isinstance(t, list) else t.graph) as sess:
        return sess.run(t, feed)


def data(shape, dtype):
    return (np.arange(int(np.prod(shape))).reshape(shape) * 3 % 7 - 2).astype(dtype)


def pad_reference(x, pads, mode):
    """Index arithmetic from the definitions of TF's three padding modes."""
    out = x
    for axis, (lo, hi) in enumerate(pads):
        d = out.shape[axis]
        idx = np.arange(-lo, d + hi)
        if mode == "REFLECT":
            idx = np.abs(idx)
            idx = np.where(idx >= d, 2 * (d - 1) - idx, idx)
        elif mode == "SYMMETRIC":
            idx = np.where(idx < 0, -idx - 1, idx)
            idx = np.where(idx >= d, 2 * d - 1 - idx, idx)
        taken = np.take(out, np.clip(idx, 0, d - 1), axis=axis)
        if mode == "CONSTANT":
            mask = ((idx >= 0) & (idx < d)).reshape([-1 if i == axis else 1 for i in range(out.ndim)])
            taken = np.where(mask, taken, 0)
        out = taken
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
class TestTable:
    def test_slice(self, dtype, shape):
        x = data(shape, dtype)
        begin = [1] * len(shape)
        size = [-1] + [2] * (len(shape) - 1)
        expected = x[tuple(slice(1, None if s == -1 else 1 + s) for s in size)]
        out = slicing_ops.slice(x, begin, size)
        assert out.shape.as_list() == list(expected.shape)
        np.testing.assert_array_equal(run(out), expected)

    def test_split_unstack_roundtrip(self, dtype, shape):
        x = data(shape, dtype)
        parts = run(array_ops.split(x, [1, -1], axis=-1))
        np.testing.assert_array_equal(np.concatenate(parts, axis=-1), x)
        rows = run(array_ops.unstack(x, axis=0))
        assert len(rows) == shape[0]
        np.testing.assert_array_equal(np.stack(rows), x)

    def test_gather_every_axis(self, dtype, shape):
        x = data(shape, dtype)
        for axis in range(len(shape)):
            idx = np.array([[0, shape[axis] - 1], [1, 1]])
            out = gather_ops.gather(x, idx, axis=axis)
            expected = np.take(x, idx, axis=axis)
            assert out.shape.as_list() == list(expected.shape)
            np.testing.assert_array_equal(run(out), expected)

    def test_tile_reverse(self, dtype, shape):
        x = data(shape, dtype)
        mult = [2] + [1] * (len(shape) - 1)
        np.testing.assert_array_equal(run(tile_pad_ops.tile(x, mult)), np.tile(x, mult))
        np.testing.assert_array_equal(run(tile_pad_ops.reverse(x, [-1])), x[..., ::-1])

    @pytest.mark.parametrize("mode", ["CONSTANT", "REFLECT", "SYMMETRIC"])
    def test_pad(self, dtype, shape, mode):
        x = data(shape, dtype)
        pads = [[1, 1]] + [[2, 1]] * (len(shape) - 1)
        out = tile_pad_ops.pad(x, pads, mode)
        expected = pad_reference(x.astype(np.float64), pads, mode)
        assert out.shape.as_list() == list(expected.shape) and out.dtype.as_numpy_dtype == dtype
        np.testing.assert_array_equal(run(out), expected)


def test_strided_slice_masks_match_numpy():
    x = np.arange(60).reshape(3, 4, 5)
    out = slicing_ops.strided_slice(x, [0, 1, 0, 4], [0, 3, 0, 0], [1, 1, 1, -2], ellipsis_mask=1, new_axis_mask=4,
                           end_mask=8)
    assert out.shape.as_list() == [3, 2, 1, 3]
    np.testing.assert_array_equal(run(out), x[..., 1:3, None, 4::-2])
    np.testing.assert_array_equal(run(slicing_ops.strided_slice(x, [1], [2], shrink_axis_mask=1)), x[1])


def test_gather_nd_and_its_bad_index_error():
    x = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(run(gather_ops.gather_nd(x, [[1, 2], [0, 0]])), [x[1, 2], x[0, 0]])
    np.testing.assert_array_equal(run(gather_ops.gather_nd(x, [[[1, 2, 3]]])), [[x[1, 2, 3]]])
    with pytest.raises(InvalidArgumentError, match=r"indices\[..., 1\]\[0\] = 3 is not in \[0, 3\)"):
        run(gather_ops.gather_nd(x, [[1, 3]]))
    with pytest.raises(InvalidArgumentError, match=r"indices\[1\] = -1 is not in \[0, 3\)"):
        run(gather_ops.gather(np.arange(3), [0, -1]))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_one_hot(axis):
    idx = np.array([[0, 2], [-1, 1]])
    out = sequence_ops.one_hot(idx, 3, on_value=5.0, off_value=-1.0, axis=axis)
    hot = (idx[..., None] == np.arange(3))
    expected = np.where(hot, 5.0, -1.0)
    if axis is not None and axis != 2:
        expected = np.moveaxis(expected, -1, axis)
    assert out.dtype == tf.float32 and out.shape.as_list() == list(expected.shape)
    np.testing.assert_array_equal(run(out), expected)
    assert sequence_ops.one_hot([1], 2, dtype=tf.int64).dtype == tf.int64


def test_where_forms():
    cond = np.array([[True, False], [False, True]])
    coords = gather_ops.where(cond)
    assert coords.dtype == tf.int64
    np.testing.assert_array_equal(run(coords), np.argwhere(cond))
    x, y = np.arange(6).reshape(3, 2), -np.arange(6).reshape(3, 2)
    np.testing.assert_array_equal(run(gather_ops.where([True, False, True], x, y)), [x[0], y[1], x[2]])
    with pytest.raises(ValueError, match="Select"):
        gather_ops.where([True, False], x, y)
    with pytest.raises(ValueError, match="Select"):
        gather_ops.where(np.ones((3, 2), bool), x, np.zeros((2, 2), np.int64))


def test_boolean_mask_range_linspace_sequence_mask():
    x = np.arange(12).reshape(3, 4)
    mask = np.array([True, False, True])
    out = slicing_ops.boolean_mask(x, mask)
    assert out.shape.as_list() == [None, 4]
    np.testing.assert_array_equal(run(out), x[mask])
    np.testing.assert_array_equal(run(slicing_ops.boolean_mask(x, [True, False, False, True], axis=1)), x[:, [0, 3]])
    assert run(sequence_ops.range(3, 18, 3)).tolist() == [3, 6, 9, 12, 15]
    assert sequence_ops.range(2.0, 4.0, 0.5).dtype == tf.float32
    np.testing.assert_allclose(run(sequence_ops.linspace(10.0, 12.0, 3)), [10.0, 11.0, 12.0])
    mask = sequence_ops.sequence_mask([1, 3, 2], 5)
    np.testing.assert_array_equal(run(mask), np.arange(5) < np.array([1, 3, 2])[:, None])


def test_segment_ops_against_loops():
    data = np.arange(15, dtype=np.float64).reshape(5, 3)
    ids = np.array([0, 0, 1, 3, 3])
    sums = np.zeros((4, 3))
    counts = np.zeros(4)
    for row, s in zip(data, ids):
        sums[s] += row
        counts[s] += 1
    np.testing.assert_allclose(run(seg.segment_sum(data, ids)), sums)
    np.testing.assert_allclose(run(seg.segment_mean(data, ids)), sums / np.maximum(counts, 1)[:, None])
    unsorted = run(seg.unsorted_segment_sum(data, [3, -1, 0, 3, 0], 4))
    np.testing.assert_allclose(unsorted, [data[2] + data[4], np.zeros(3), np.zeros(3), data[0] + data[3]])
    with pytest.raises(InvalidArgumentError, match="not increasing"):
        run(seg.segment_sum(data, tf.placeholder_with_default([1, 0, 0, 0, 0], [5])))


def test_unique_broadcast_to_invert_permutation_meshgrid():
    y, idx = run(list(sequence_ops.unique([4, 1, 4, 7, 1])))
    assert y.tolist() == [4, 1, 7] and idx.tolist() == [0, 1, 0, 2, 1]
    np.testing.assert_array_equal(run(tile_pad_ops.broadcast_to([1, 2], [3, 2])), [[1, 2]] * 3)
    assert run(sequence_ops.invert_permutation([3, 4, 0, 2, 1])).tolist() == [2, 4, 3, 0, 1]
    gx, gy = run(tile_pad_ops.meshgrid([1, 2, 3], [4, 5]))
    ex, ey = np.meshgrid([1, 2, 3], [4, 5])
    np.testing.assert_array_equal(gx, ex)
    np.testing.assert_array_equal(gy, ey)


@pytest.mark.parametrize("build,match", [
    (lambda: slicing_ops.slice(np.zeros((2, 3)), [0], [1]), "Slice"),
    (lambda: slicing_ops.slice(np.zeros((2, 3)), [1, 2], [2, 1]), "Slice"),
    (lambda: array_ops.split(np.zeros((5, 30)), 4, 1), "Split"),
    (lambda: array_ops.split(np.zeros((5, 30)), [10, 10], 1), "Split"),
    (lambda: array_ops.unstack(np.zeros((2, 3)), num=3), "Unpack"),
    (lambda: tile_pad_ops.tile(np.zeros((2, 3)), [2]), "Tile"),
    (lambda: tile_pad_ops.pad(np.zeros((2, 3)), [[2, 0], [0, 0]], "REFLECT"), "MirrorPad"),
    (lambda: tile_pad_ops.pad(np.zeros((2, 3)), [[1, 1]]), "Pad"),
    (lambda: gather_ops.gather_nd(np.zeros((2, 3)), [[0, 1, 2]]), "GatherNd"),
    (lambda: gather_ops.gather(np.zeros((2, 3)), [0], axis=2), "GatherV2"),
    (lambda: slicing_ops.boolean_mask(np.zeros((2, 3)), [True, False, True]), "boolean_mask"),
    (lambda: seg.segment_sum(np.zeros((3, 2)), [0, 1]), "SegmentSum"),
    (lambda: tile_pad_ops.broadcast_to(np.zeros((2, 3)), [3, 3]), "BroadcastTo"),
    (lambda: tile_pad_ops.reverse(np.zeros((2, 3)), [0, -2]), "ReverseV2"),
])
def test_build_time_errors_name_the_op(build, match):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=match):
            build()


def test_sparse_tensor_fetch_feed_and_to_dense():
    st = SparseTensor([[0, 1], [2, 0]], [5.0, 6.0], [3, 2])
    value = run([st.indices, st.values])
    dense = sparse_ops.sparse_tensor_to_dense(st, default_value=-1.0)
    assert dense.shape.as_list() == [3, 2]
    np.testing.assert_array_equal(run(dense), [[-1, 5], [-1, -1], [6, -1]])
    with tf.Session(graph=dense.graph) as sess:
        fetched = sess.run(st)
        assert isinstance(fetched, SparseTensorValue) and fetched.dense_shape.tolist() == [3, 2]
    assert value[1].tolist() == [5.0, 6.0]
    with tf.Graph().as_default():
        sp = sparse_ops.sparse_placeholder(tf.float32)
        out = sparse_ops.to_dense(sp)
        with tf.Session() as sess:
            got = sess.run(out, {sp: SparseTensorValue(np.array([[1, 1]]), np.array([2.0]), np.array([2, 3]))})
            np.testing.assert_array_equal(got, [[0, 0, 0], [0, 2, 0]])
            with pytest.raises(InvalidArgumentError, match="repeated"):
                sess.run(out, {sp: (np.array([[1, 1], [1, 1]]), np.array([2.0, 3.0]), np.array([2, 3]))})
            with pytest.raises(InvalidArgumentError, match="out of bounds"):
                sess.run(out, {sp: (np.array([[2, 1]]), np.array([2.0]), np.array([2, 3]))})
