"""Graph, Operation and Tensor: defaults, attributes, static shapes, operators, slicing, dtypes."""

import numpy as np
import pytest

import tftk as tf


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def test_as_default_nests_and_restores():
    outer = tf.get_default_graph()
    g1, g2 = tf.Graph(), tf.Graph()
    with g1.as_default() as entered:
        assert entered is g1 and tf.get_default_graph() is g1
        with g2.as_default():
            assert tf.get_default_graph() is g2
            assert tf.constant(1).graph is g2
        assert tf.get_default_graph() is g1
    assert tf.get_default_graph() is outer


def test_reset_default_graph_gives_a_new_graph_and_refuses_inside_a_nested_graph():
    before = tf.get_default_graph()
    tf.constant(1, name="c")
    tf.reset_default_graph()
    after = tf.get_default_graph()
    assert after is not before and after.get_operations() == []
    assert tf.constant(1, name="c").name == "c:0"
    with tf.Graph().as_default():
        with pytest.raises(AssertionError, match="nested"):
            tf.reset_default_graph()


def test_operation_and_tensor_attributes():
    a = tf.constant([[1.0, 2.0]], name="a")
    b = tf.constant([[3.0], [4.0]], name="b")
    m = tf.matmul(a, b, name="m")
    op = m.op
    assert m.name == "m:0" and op.name == "m" and op.type == "MatMul"
    assert m.value_index == 0 and m.dtype == tf.float32 and m.graph is tf.get_default_graph()
    assert list(op.inputs) == [a, b] and op.outputs == [m]
    assert a.consumers() == [op] and m.consumers() == []
    assert op.graph is tf.get_default_graph()
    assert tf.get_default_graph().get_operation_by_name("m") is op
    assert tf.get_default_graph().get_tensor_by_name("m:0") is m


def test_operation_traceback_points_at_the_building_line():
    c = tf.constant(1.0) * 2.0
    frames = c.op.traceback
    assert any(f.filename == __file__ and f.name == "test_operation_traceback_points_at_the_building_line"
               for f in frames)


def test_control_inputs_are_recorded():
    first = tf.no_op(name="first")
    with tf.control_dependencies([first]):
        second = tf.constant(1, name="second")
    assert second.op.control_inputs == [first]
    with tf.control_dependencies([first]), tf.control_dependencies(None):
        free = tf.constant(2)
    assert free.op.control_inputs == []


def test_device_is_recorded_on_ops():
    with tf.device("/cpu:0"):
        a = tf.constant(1.0, name="a")
        with tf.device("/gpu:1"):
            b = a + 1.0
    c = a * 3.0
    assert a.op.device == "/cpu:0" and a.device == "/cpu:0"
    assert b.op.device == "/device:GPU:1"  # nested scopes merge into the canonical form (TF1)
    assert c.op.device == ""


def test_nested_device_scopes_merge_field_by_field_inner_first():
    with tf.device("/job:ps/task:0"):
        with tf.device("/task:1"):
            a = tf.constant(1.0)
        with tf.device(lambda op: "/job:worker" if op.type == "Const" else "/job:ps/task:7"):
            b = tf.constant(2.0)
            c = tf.identity(b)
        with tf.device(None):
            d = tf.constant(3.0)
    assert (a.device, b.device, c.device, d.device) == ("/job:ps/task:1", "/job:worker/task:0", "/job:ps/task:7", "")


def test_malformed_device_name_fails_when_the_scope_opens():
    with pytest.raises(ValueError, match="Unknown attribute 'gpu-1' in device specification"):
        with tf.device("/gpu-1"):
            pass


def test_static_shapes_with_unknown_dims():
    p = tf.placeholder(tf.float32, [None, 3], name="p")
    assert p.shape.as_list() == [None, 3] and p.get_shape().as_list() == [None, 3]
    assert p.shape.ndims == 2 and not p.shape.is_fully_defined()
    assert str(p.shape) == "(?, 3)"
    p.set_shape([4, None])
    assert p.shape.as_list() == [4, 3]
    with pytest.raises(ValueError, match="not compatible"):
        p.set_shape([5, 3])
    unknown = tf.placeholder(tf.float32)
    assert unknown.shape.ndims is None
    unknown.set_shape([2, None])
    assert unknown.shape.as_list() == [2, None]


def test_tensor_shape_behaviour():
    s = tf.TensorShape([2, None, 4])
    assert s.as_list() == [2, None, 4] and s.ndims == 3 and len(s) == 3
    assert s.is_compatible_with([2, 7, 4]) and not s.is_compatible_with([3, 7, 4])
    assert s.merge_with([None, 5, 4]).as_list() == [2, 5, 4]
    assert tf.TensorShape([2, 3]).num_elements() == 6 and s.num_elements() is None
    assert tf.TensorShape(None).ndims is None
    assert tf.TensorShape([1]).concatenate([2, 3]).as_list() == [1, 2, 3]
    assert tf.TensorShape([2, 3]) == tf.TensorShape([2, 3])
    assert s[0].value == 2 and s[1].value is None
    with pytest.raises(ValueError):
        s.merge_with([3, None, 4])


@pytest.mark.parametrize("dtype,np_dtype", [
    (tf.float16, np.float16), (tf.float32, np.float32), (tf.float64, np.float64),
    (tf.int8, np.int8), (tf.int16, np.int16), (tf.int32, np.int32), (tf.int64, np.int64),
    (tf.uint8, np.uint8), (tf.bool, np.bool_),
])
def test_dtypes_round_trip_numpy(dtype, np_dtype):
    assert dtype.as_numpy_dtype == np_dtype
    assert tf.as_dtype(np_dtype) is dtype and tf.as_dtype(np.dtype(np_dtype)) is dtype
    assert tf.as_dtype(dtype.name) is dtype
    value = run(tf.constant(np.array([1, 0], dtype=np_dtype)))
    assert value.dtype == np_dtype and value.tolist() == [1, 0]


def test_dtype_properties_and_python_defaults():
    assert tf.float32.is_floating and not tf.float32.is_integer
    assert tf.uint8.is_integer and tf.uint8.is_unsigned and tf.int8.min == -128
    assert tf.constant(1).dtype is tf.int32 and tf.constant(1.5).dtype is tf.float32
    assert tf.constant(True).dtype is tf.bool
    assert tf.constant(np.float64(1.5)).dtype is tf.float64  # numpy values keep their dtype
    s = tf.constant(["ab", "c"])
    assert s.dtype is tf.string
    assert run(s).tolist() == [b"ab", b"c"]


def test_python_operators_match_numpy():
    xv = np.array([[1.0, -2.0], [3.5, 4.0]], dtype=np.float32)
    yv = np.array([[2.0, 3.0], [-1.5, 0.5]], dtype=np.float32)
    x, y = tf.constant(xv), tf.constant(yv)
    fetches = [x + y, x - y, x * y, x / y, x // y, x % y, abs(x) ** y, x @ y, -x,
               x < y, x <= y, x > y, x >= y, 2.0 - x, 1.0 / x, 3.0 * x]
    expected = [xv + yv, xv - yv, xv * yv, xv / yv, xv // yv, np.mod(xv, yv),
                np.abs(xv) ** yv, xv @ yv, -xv, xv < yv, xv <= yv, xv > yv, xv >= yv,
                2.0 - xv, 1.0 / xv, 3.0 * xv]
    for got, want in zip(run(fetches), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    bx, by = tf.constant([True, False, True]), tf.constant([True, True, False])
    both, either, neither = run([bx & by, bx | by, ~bx])
    assert both.tolist() == [True, False, False] and either.tolist() == [True, True, True]
    assert neither.tolist() == [False, True, False]


def test_tensors_are_not_python_bools_and_compare_by_identity():
    x = tf.constant(1)
    with pytest.raises(TypeError, match="bool"):
        bool(x)
    assert x == x and x != tf.constant(1)
    assert {x: 1}[x] == 1


SLICE_VALUE = np.arange(24).reshape(2, 3, 4)


@pytest.mark.parametrize("key", [
    1, -1, (0, 1), (1, -1, -2), slice(1, None), (slice(None), slice(None, None, 2)),
    (slice(None, None, -1), 0), (Ellipsis, 2), (0, Ellipsis), (slice(None), None, 1),
    (None, 0), (0, Ellipsis, None), (slice(0, 2), slice(1, 3), slice(None, None, -2)),
], ids=repr)
def test_getitem_matches_numpy(key):
    tf_key = tuple(tf.newaxis if k is None else k for k in key) if isinstance(key, tuple) else key
    t = tf.constant(SLICE_VALUE)[tf_key]
    want = SLICE_VALUE[key]
    assert t.shape.as_list() == list(want.shape)
    np.testing.assert_array_equal(run(t), want)


def test_getitem_on_unknown_dims_keeps_them_unknown():
    p = tf.placeholder(tf.int64, [None, 4])
    t = p[:, 1:3]
    assert t.shape.as_list() == [None, 2]
    np.testing.assert_array_equal(run(t, {p: SLICE_VALUE[0]}), SLICE_VALUE[0][:, 1:3])


def test_collections_with_graph_keys_and_scope_prefix_filter():
    with tf.variable_scope("enc"):
        w_enc = tf.get_variable("w", [1])
    with tf.variable_scope("encoder"):
        w_encoder = tf.get_variable("w", [1])
    with tf.variable_scope("dec"):
        w_dec = tf.get_variable("w", [1], trainable=False)
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES) == [w_enc, w_encoder, w_dec]
    assert tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES) == [w_enc, w_encoder]
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="enc") == [w_enc, w_encoder]
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="enc/") == [w_enc]
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="dec") == [w_dec]
    assert tf.GraphKeys.VARIABLES == tf.GraphKeys.GLOBAL_VARIABLES == "variables"
    loss = tf.constant(1.0, name="loss")
    tf.add_to_collection(tf.GraphKeys.LOSSES, loss)
    tf.add_to_collections(["a", "b"], loss)
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [loss] == tf.get_collection("b")
    copy = tf.get_collection("a")
    copy.append("x")
    assert tf.get_collection("a") == [loss]  # get_collection returns a copy
    tf.get_collection_ref("a").append(w_dec)
    assert tf.get_collection("a") == [loss, w_dec]
    assert tf.get_collection("missing") == []
