"""tf.sparse.merge and tf.sparse.reduce_max_sparse (and their tf.sparse_* spellings) against TF 2.21.

merge: one and several id tensors, sorted or not; reduce_max_sparse: axes, keepdims, empty groups, zero maxima.
"""

import pytest

import tftk
from tests.tf_oracle import assert_same_outputs, both_succeeded, run_in_tf

_SETUP = """
ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]], tf.constant([4, 1, 2, 0, 3, 1], tf.{dt}), [3, 3])
vals = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]], [0.5, -1.0, 2.0, 3.0, 4.0, 5.0], [3, 3])
"""
_OUT = """
with tf.Session() as s:
    r = s.run(m)
outputs = {"indices": r.indices, "values": r.values, "shape": r.dense_shape}
"""
CASES = {
    "single_int32": (_SETUP.format(dt="int32") + "m = tf.sparse.merge(ids, vals, 5)" + _OUT, {}),
    "single_int64_legacy_name": (_SETUP.format(dt="int64") + "m = tf.sparse_merge(ids, vals, 5)" + _OUT, {}),
    "already_sorted": (_SETUP.format(dt="int64") + "m = tf.sparse.merge(ids, vals, 5, already_sorted=True)" + _OUT, {}),
    "two_id_lists": (_SETUP.format(dt="int64")
                     + "ids2 = tf.SparseTensor(ids.indices, tf.constant([1, 0, 1, 0, 1, 0], tf.int64), [3, 3])\n"
                     + "m = tf.sparse.merge([ids, ids2], vals, [5, 2])" + _OUT, {}),
}

_SP = """
sp = tf.SparseTensor([[0, 0, 1], [0, 2, 0], [2, 1, 1], [2, 1, 0], [3, 0, 0]],
                     tf.cast(tf.constant([-3.0, 0.0, 5.0, -1.0, -2.0]), tf.{dt}), [4, 3, 2])
"""
CASES.update({f"max_{dt}_{tag}": (_SP.format(dt=dt) + f"m = tf.{fn}(sp{args})" + _OUT, {})
              for dt in ("float32", "int64")
              for tag, fn, args in [("all", "sparse.reduce_max_sparse", ""),
                                    ("axis1", "sparse.reduce_max_sparse", ", axis=1"),
                                    ("axis02_keep", "sparse_reduce_max_sparse", ", axis=[0, 2], keepdims=True"),
                                    ("axis_neg1", "sparse.reduce_max_sparse", ", axis=-1")]})


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.slow  # real TensorFlow in a subprocess
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_tensorflow(oracle, case):
    assert_same_outputs(*both_succeeded(oracle, CASES, case))


@pytest.mark.parametrize("as_list, vocab_size, error", [(False, [5], TypeError), (True, [5, 2], ValueError),
                                                        (True, 5, ValueError)])
def test_bad_arguments_are_refused(as_list, vocab_size, error):
    with tftk.Graph().as_default():
        ids = tftk.SparseTensor([[0, 0]], tftk.constant([1], tftk.int64), [1, 1])
        with pytest.raises(error, match="sparse_merge"):
            tftk.sparse.merge([ids] if as_list else ids, ids, vocab_size)
