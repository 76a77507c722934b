"""Sorting, counting, tf.sets, tf.bitwise and index arithmetic against real TensorFlow."""

import numpy as np

from tests.differential.op_tables import Row, op_row, table_tests

RNG = np.random.default_rng(13)
X = RNG.uniform(-2, 2, size=(3, 5))
TIES = np.array([[3.0, 1.0, 3.0, 2.0, 1.0], [0.5, 0.5, -1.0, 2.0, 0.5]])
I32 = np.array([[5, 3, 12, 7], [0, -8, 255, 9]], np.int32)
SHIFT = np.array([[1, 2, 0, 3], [4, 1, 2, 0]], np.int32)

OPS = [
    ("sort_ascending", "tf.sort(x)", {"x": X}, True),
    ("sort_descending_axis0", "tf.sort(x, axis=0, direction='DESCENDING')", {"x": X}, True),
    ("sort_ties", "tf.sort(x, direction='DESCENDING')", {"x": TIES}, True),
    ("argsort_ties", "tf.argsort(x)", {"x": TIES}, False),
    ("argsort_descending", "tf.argsort(x, axis=-1, direction='DESCENDING', stable=True)", {"x": TIES}, False),
    ("sort_int", "tf.sort(x, direction='DESCENDING')", {"x": I32}, False),
    ("searchsorted_left", "tf.searchsorted(x, y)", {"x": np.sort(X, 1), "y": X[:, :3] * 0.7}, False),
    ("searchsorted_right", "tf.searchsorted(x, y, side='right', out_type=tf.int64)",
     {"x": np.array([[1, 2, 2, 3]], np.int32), "y": np.array([[2, 0, 3, 5, 2]], np.int32)}, False),
    ("unique_with_counts", "tf.stack(tf.unique_with_counts(x)[1:2] + [tf.reduce_sum(tf.unique_with_counts(x)[2])])"
     " if False else tf.unique_with_counts(x)[2]", {"x": np.array([4, 1, 4, 4, 2, 1], np.int64)}, False),
    ("unique_with_counts_idx", "tf.unique_with_counts(x, out_idx=tf.int64)[1]",
     {"x": np.array([4, 1, 4, 4, 2, 1], np.int32)}, False),
    ("setdiff1d", "tf.setdiff1d(x, y)[0]", {"x": np.array([1, 2, 3, 4, 3, 6]), "y": np.array([3, 6])}, False),
    ("setdiff1d_idx", "tf.setdiff1d(x, y)[1]", {"x": np.array([1, 2, 3, 4, 3, 6]), "y": np.array([3, 6])}, False),
    ("histogram_fixed_width", "tf.histogram_fixed_width(x, [-1.0, 1.0], nbins=5)", {"x": X.astype(np.float32)}, False),
    ("histogram_fixed_width_bins", "tf.histogram_fixed_width_bins(x, tf.constant([-1.5, 1.0], tf.float64), nbins=4)", {"x": X}, False),
    ("histogram_range_dtype_mismatch", "tf.histogram_fixed_width(x, [-1.0, 1.0])", {"x": X}, False),
    ("confusion_matrix", "tf.confusion_matrix(x, y)",
     {"x": np.array([0, 1, 2, 1, 0]), "y": np.array([0, 2, 2, 1, 1])}, False),
    ("confusion_matrix_weights", "tf.math.confusion_matrix(x, y, num_classes=4, weights=z, dtype=tf.float64)",
     {"x": np.array([0, 1, 2, 1]), "y": np.array([0, 2, 2, 1]), "z": np.array([0.5, 1.0, 2.0, 3.0])}, False),
    ("confusion_matrix_bad_label", "tf.confusion_matrix(x, y, num_classes=2)",
     {"x": np.array([0, 3]), "y": np.array([0, 1])}, False),
    ("is_non_decreasing", "tf.stack([tf.is_non_decreasing(x), tf.is_non_decreasing(y)])",
     {"x": np.array([[1, 2], [2, 5]]), "y": np.array([1, 3, 2])}, False),
    ("is_strictly_increasing", "tf.stack([tf.math.is_strictly_increasing(x), tf.debugging.is_strictly_increasing(y)])",
     {"x": np.array([1, 2, 2]), "y": np.array([1.0, 3.0, 4.0])}, False),
    ("bitwise_and", "tf.bitwise.bitwise_and(x, y)", {"x": I32, "y": SHIFT * 7}, False),
    ("bitwise_or", "tf.bitwise.bitwise_or(x, 6)", {"x": I32}, False),
    ("bitwise_xor", "tf.bitwise.bitwise_xor(x, y)", {"x": I32.astype(np.int64), "y": (SHIFT * 9).astype(np.int64)}, False),
    ("bitwise_invert", "tf.bitwise.invert(x)", {"x": I32.astype(np.uint8)}, False),
    ("bitwise_invert_signed", "tf.bitwise.invert(x)", {"x": I32}, False),
    ("left_shift", "tf.bitwise.left_shift(x, y)", {"x": I32, "y": SHIFT}, False),
    ("right_shift", "tf.bitwise.right_shift(x, y)", {"x": I32, "y": SHIFT}, False),
    ("bitwise_float_rejected", "tf.bitwise.bitwise_and(x, x)", {"x": X}, False),
    ("unravel_index", "tf.unravel_index(x, [3, 4])", {"x": np.array([0, 5, 11, 7], np.int32)}, False),
    ("unravel_index_scalar", "tf.unravel_index(x, [2, 3, 4])", {"x": np.array(17, np.int64)}, False),
    ("repeat_axis", "tf.repeat(x, [1, 0, 2], axis=0)", {"x": X}, True),
    ("repeat_flat", "tf.repeat(x, 2)", {"x": X[:2, :2]}, True),
    ("reverse_sequence", "tf.reverse_sequence(x, [2, 5, 0], seq_axis=1, batch_axis=0)", {"x": X}, True),
    ("reverse_sequence_dims", "tf.reverse_sequence(x, [3, 1], seq_dim=0, batch_dim=1)", {"x": X[:, :2].copy()}, True),
    ("batch_gather", "tf.batch_gather(x, [[0, 4], [2, 2], [1, 3]])", {"x": X}, True),
    ("where_v2", "tf.where_v2(x > 0, x, y)", {"x": X, "y": X[:1] * 3}, True),
    ("where_v2_scalar", "tf.where_v2(x > 0.5, x, 0.0)", {"x": X}, True),
    ("parallel_stack", "tf.parallel_stack([x, x * 2])", {"x": X}, False),
    ("ensure_shape", "tf.ensure_shape(x, [None, 5]) * 2", {"x": X}, True),
    ("ensure_shape_bad", "tf.ensure_shape(tf.placeholder_with_default(x, [None, None]), [3, 4])", {"x": X}, False),
    ("bitcast_down", "tf.bitcast(x, tf.uint8)", {"x": I32}, False),
    ("bitcast_up", "tf.bitcast(x, tf.int32)", {"x": np.arange(8, dtype=np.uint8).reshape(2, 4)}, False),
    ("bitcast_float", "tf.bitcast(x, tf.int64)", {"x": X}, False),
    ("space_to_depth", "tf.space_to_depth(x, 2)", {"x": RNG.uniform(size=(2, 4, 6, 3))}, True),
    ("depth_to_space", "tf.nn.depth_to_space(x, 2)", {"x": RNG.uniform(size=(2, 2, 3, 8))}, True),
    ("space_to_batch_nd", "tf.space_to_batch_nd(x, [2, 3], [[1, 1], [2, 1]])", {"x": RNG.uniform(size=(2, 4, 3, 2))}, True),
    ("batch_to_space_nd", "tf.manip.batch_to_space_nd(x, [2, 2], [[0, 1], [1, 0]])", {"x": RNG.uniform(size=(8, 2, 3, 1))}, True),
    ("space_to_batch", "tf.space_to_batch(x, [[0, 0], [1, 1]], 2)", {"x": RNG.uniform(size=(1, 4, 2, 2))}, True),
    ("nn_space_to_batch", "tf.nn.space_to_batch(x, [[0, 0], [1, 1]], block_size=2)", {"x": RNG.uniform(size=(1, 4, 2, 2))}, True),
    ("batch_to_space", "tf.batch_to_space(x, [[0, 0], [1, 1]], 2)", {"x": RNG.uniform(size=(4, 2, 2, 1))}, True),
    ("space_to_batch_1d", "tf.space_to_batch_nd(x, [3], [[1, 2]])", {"x": RNG.uniform(size=(2, 6, 2))}, True),
    ("extract_image_patches_valid", "tf.extract_image_patches(x, [1, 2, 3, 1], [1, 1, 2, 1], [1, 1, 1, 1], 'VALID')",
     {"x": RNG.uniform(size=(2, 4, 5, 2))}, True),
    ("extract_image_patches_same_rate", "tf.image.extract_image_patches(x, [1, 2, 2, 1], [1, 2, 1, 1], [1, 2, 1, 1], 'SAME')",
     {"x": RNG.uniform(size=(1, 5, 4, 3))}, True),
    ("extract_patches", "tf.image.extract_patches(x, [1, 3, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], 'SAME')",
     {"x": RNG.uniform(size=(1, 5, 5, 1))}, True),
]


def _set_row(name: str, expr: str, inputs: dict) -> Row:
    arrays = {k: np.asarray(v) for k, v in inputs.items()}
    lines = [f"{k} = tf.constant(inputs[{k!r}])" for k in arrays]
    lines += [f"s = {expr}", "fetch = {'indices': s.indices, 'values': s.values, 'shape': s.dense_shape}"]
    return Row(name, "\n".join(lines) + "\n", arrays)


A = np.array([[[1, 3, 3], [2, 5, 9]], [[7, 7, 1], [0, 0, 0]]], np.int64)
B = np.array([[[3, 4, 1], [5, 2, 2]], [[1, 8, 6], [2, 1, 0]]], np.int64)
SP = "tf.SparseTensor([[0, 0, 0], [0, 0, 2], [0, 1, 1], [1, 1, 0]], tf.constant([3, 8, 9, 0], tf.int64), [2, 2, 4])"
SETS = [
    ("sets_intersection", "tf.sets.intersection(a, b)", {"a": A, "b": B}),
    ("sets_union", "tf.sets.set_union(a, b)", {"a": A, "b": B}),
    ("sets_difference", "tf.sets.difference(a, b)", {"a": A, "b": B}),
    ("sets_difference_b_minus_a", "tf.sets.set_difference(a, b, aminusb=False)", {"a": A, "b": B}),
    ("sets_sparse_dense", f"tf.sets.set_intersection({SP}, b)", {"b": B}),
    ("sets_dense_sparse_difference", f"tf.sets.difference(a, {SP})", {"a": A}),
    ("sets_sparse_sparse_union", f"tf.sets.union({SP}, {SP})", {}),
    ("sets_strings", "tf.sets.union(a, b)", {"a": np.array([["a", "b"], ["c", "c"]]), "b": np.array([["b", "z"], ["a", "c"]])}),
]

ROWS = [op_row(name, build, inputs, grad) for name, build, inputs, grad in OPS] + \
    [_set_row(*row) for row in SETS] + [
    Row("sets_size", f"fetch = {{'y': tf.sets.size({SP}), 'z': tf.sets.set_size(tf.sets.union({SP}, tf.constant(inputs['b'])))}}\n",
        {"b": B}),
    Row("sets_size_dense_rejected", "fetch = {'y': tf.sets.size(tf.constant([[1, 2]]))}\n"),
    Row("sets_float_rejected", "fetch = {'y': tf.sets.union(tf.constant([[1.0]]), tf.constant([[2.0]])).values}\n"),
    Row("required_space_to_batch_paddings",
        "p, c = tf.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [0, 2]])\nfetch = {'p': p, 'c': c}\n"),
    Row("histogram_bad_range", "fetch = {'y': tf.histogram_fixed_width([1.0], [1.0, 0.0], nbins=3)}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("sort_set_bitwise", ROWS)
