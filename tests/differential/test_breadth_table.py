"""Against real TensorFlow: the TF 1.x names added as aliases and thin wrappers (issue 13, breadth).

Aliases TF itself makes (the same object under two names) are checked to be the same object in
both libraries; every new name is also called in a snippet whose values, shapes and gradients
must match TF's.
"""

import numpy as np
import pytest

from tests.differential.table import OpRow, SnippetRow, compare, expand, oracle_fixture
from tests.tf_oracle import run_in_tftk

# (alias, original): the same object in TF, so the same object in tftk. (tftk has no *_ref dtypes, so
# QUANTIZED_DTYPES is compared without TF's reference types.)
ALIASES = [
    ("tf.NoGradient", "tf.NotDifferentiable"), ("tf.no_gradient", "tf.NotDifferentiable"),
    ("tf.tensor_scatter_nd_add", "tf.tensor_scatter_add"), ("tf.tensor_scatter_nd_sub", "tf.tensor_scatter_sub"),
    ("tf.tensor_scatter_nd_update", "tf.tensor_scatter_update"), ("tf.get_seed", "tf.random.get_seed"),
    ("tf.dtypes.cast", "tf.cast"), ("tf.dtypes.complex", "tf.complex"), ("tf.dtypes.as_string", "tf.as_string"),
    ("tf.dtypes.saturate_cast", "tf.saturate_cast"), ("tf.dtypes.float32", "tf.float32"),
    ("tf.dtypes.as_dtype", "tf.as_dtype"), ("tf.dtypes.DType", "tf.DType"),
    ("tf.manip.gather_nd", "tf.gather_nd"), ("tf.manip.reverse", "tf.reverse"), ("tf.manip.tile", "tf.tile"),
    ("tf.math.in_top_k", "tf.nn.in_top_k"), ("tf.math.invert_permutation", "tf.invert_permutation"),
    ("tf.math.log_softmax", "tf.nn.log_softmax"), ("tf.math.softmax", "tf.nn.softmax"),
    ("tf.math.softsign", "tf.nn.softsign"), ("tf.math.top_k", "tf.nn.top_k"), ("tf.nn.avg_pool2d", "tf.nn.avg_pool"),
    ("tf.quantization.dequantize", "tf.dequantize"), ("tf.quantization.quantize", "tf.quantize"),
    ("tf.queue.FIFOQueue", "tf.FIFOQueue"), ("tf.queue.QueueBase", "tf.QueueBase"),
    ("tf.queue.RandomShuffleQueue", "tf.RandomShuffleQueue"),
    ("tf.train.piecewise_constant_decay", "tf.train.piecewise_constant"),
    ("tf.train.match_filenames_once", "tf.train.match_filenames_once"),
    ("tf.QUANTIZED_DTYPES", "tf.dtypes.QUANTIZED_DTYPES"),
]

S23 = (2, 3)
ROWS = [
    SnippetRow("aliases_are_the_same_objects",
               "outputs = {'same': np.array([" + ", ".join(f"{a} is {b}" for a, b in ALIASES) + "])}\n"),
    OpRow("log_sigmoid", "tf.log_sigmoid(x * 10)", [(S23,)]),
    OpRow("math_log_sigmoid", "tf.math.log_sigmoid(x)", [(S23,)]),
    OpRow("reduce_variance", "tf.math.reduce_variance(x, axis=1)", [((2, 3, 4),)]),
    OpRow("reduce_variance_all", "tf.math.reduce_variance(x)", [(S23,)]),
    OpRow("reduce_std", "tf.math.reduce_std(x, axis=[0, 2], keepdims=True)", [((2, 3, 4),)]),
    OpRow("arg_max", "tf.arg_max(x, 1)", [(S23,)], grad=False),
    OpRow("arg_min", "tf.arg_min(x, 0)", [(S23,)], grad=False),
    OpRow("math_scalar_mul", "tf.math.scalar_mul(2.5, x)", [(S23,)]),
    OpRow("math_softsign", "tf.math.softsign(x)", [(S23,)]),
    OpRow("math_log_softmax", "tf.math.log_softmax(x)", [(S23,)]),
    OpRow("manip_tile", "tf.manip.tile(x, [1, 2])", [(S23,)]),
    OpRow("manip_reverse", "tf.manip.reverse(x, [1])", [(S23,)]),
    OpRow("manip_reshape", "tf.manip.reshape(x, [-1])", [(S23,)]),
    # dynamic=False: tftk's gather_nd needs the indices' last dimension at build time (TF does not)
    OpRow("manip_gather_nd", "tf.manip.gather_nd(x, y)", [(S23, (2, 2))], fixed={"y": np.array([[1, 2], [0, 0]], np.int32)},
          dynamic=False),
    OpRow("manip_scatter_nd", "tf.manip.scatter_nd([[1], [0]], x, [3, 3])", [(S23,)]),
    OpRow("dtypes_cast", "tf.dtypes.cast(x, tf.float64)", [(S23,)]),
    OpRow("dtypes_saturate_cast", "tf.dtypes.saturate_cast(x * 100, tf.int8)", [(S23,)], grad=False),
    OpRow("nn_avg_pool2d", "tf.nn.avg_pool2d(x, [1, 2, 2, 1], [1, 1, 1, 1], 'VALID')", [((1, 3, 3, 2),)]),
    OpRow("tensor_scatter_nd_add", "tf.tensor_scatter_nd_add(x, [[0], [1]], y)", [((2, 3), (2, 3))]),
    SnippetRow("dtypes_module",
               "outputs = {'q': np.array(sorted(d.name for d in tf.dtypes.QUANTIZED_DTYPES if not d.name.endswith('_ref'))),"
               " 'c': np.array(tf.dtypes.complex(tf.constant(1.0), tf.constant(2.0)).dtype.name),"
               " 'names': np.array([tf.dtypes.as_dtype('float').name, tf.dtypes.uint32.name, tf.dtypes.uint64.name])}\n"
               "with tf.Session() as s:\n    outputs['s'] = s.run(tf.dtypes.as_string(tf.constant([1.5, 2.0]), precision=2)).astype(bytes)\n"),
    SnippetRow("errors_codes",
               "e = tf.errors\nnames = ['OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND',"
               " 'ALREADY_EXISTS', 'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION', 'ABORTED',"
               " 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS', 'UNAUTHENTICATED']\n"
               "codes = [getattr(e, n) for n in names]\n"
               "outputs = {'codes': np.array(codes), 'classes': np.array([e.exception_type_from_error_code(c).__name__"
               " for c in codes[1:]]), 'back': np.array([e.error_code_from_exception_type("
               "e.exception_type_from_error_code(c)) for c in codes[1:]])}\n"),
    SnippetRow("errors_unknown_code", "tf.errors.exception_type_from_error_code(99)\n"),
    SnippetRow("queue_namespace",
               "q = tf.queue.FIFOQueue(3, [tf.int32], shapes=[[]])\nenq = q.enqueue_many([[1, 2, 3]])\n"
               "with tf.Session() as s:\n    s.run(enq)\n    outputs = {'d': np.array([s.run(q.dequeue()) for _ in range(3)])}\n"),
    SnippetRow("quantization_namespace",
               "q = tf.quantization.quantize(tf.constant([0.0, 0.5, 1.0]), 0.0, 1.0, tf.quint8)\n"
               "d = tf.quantization.dequantize(q.output, q.output_min, q.output_max)\n"
               "with tf.Session() as s:\n    outputs = {'d': s.run(d)}\n"),
    SnippetRow("piecewise_constant_decay",
               "step = tf.placeholder(tf.int32, [])\nlr = tf.train.piecewise_constant_decay(step, [2, 5], [1.0, 0.5, 0.1])\n"
               "with tf.Session() as s:\n    outputs = {'lr': np.array([s.run(lr, {step: i}) for i in range(7)])}\n"),
    SnippetRow("get_seed_and_logger",
               "tf.set_random_seed(7)\nd = tf.get_seed(None)\nd2 = tf.get_seed(3)\n"
               "outputs = {'s': np.array([d[0], d2[0], d2[1]]), 'logger': np.array(tf.get_logger().name)}\n"),
]

ROWS += [
    SnippetRow("is_tensor",
               "sp = tf.SparseTensor([[0, 0]], [1.0], [2, 2])\nv = tf.Variable(1.0)\n"
               "outputs = {'is': np.array([tf.is_tensor(x) for x in (tf.constant(1), sp, v, 3, np.ones(2), [1], None,"
               " tf.IndexedSlices(tf.ones([1]), tf.constant([0])))])}\n"),
    SnippetRow("get_static_value",
               "p = tf.placeholder(tf.float32, [None])\n"
               "outputs = {'c': tf.get_static_value(tf.constant([1, 2])), 'mul': np.array(tf.get_static_value(tf.constant(1) * 2) is None), 's': tf.get_static_value(tf.shape(tf.ones([2, 3]))),"
               " 'none': np.array(tf.get_static_value(p) is None), 'py': tf.get_static_value(5)}\n"),
    SnippetRow("broadcast_static_shape",
               "f = tf.broadcast_static_shape\n"
               "outputs = {'s': np.array([str(f(tf.TensorShape([2, 1, 3]), tf.TensorShape([4, 1]))),"
               " str(f(tf.TensorShape([None, 3]), tf.TensorShape([1]))), str(f(tf.TensorShape(None), tf.TensorShape([3])))])}\n"),
    SnippetRow("broadcast_static_shape_error", "tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))\n"),
    SnippetRow("convert_to_tensor_or_indexed_slices",
               "i = tf.IndexedSlices(tf.ones([1, 2]), tf.constant([0]))\n"
               "t = tf.convert_to_tensor_or_indexed_slices([1.0, 2.0])\n"
               "outputs = {'same': np.array(tf.convert_to_tensor_or_indexed_slices(i) is i), 'dtype': np.array(t.dtype.name)}\n"),
    SnippetRow("op_scope",
               "x = tf.constant(1.0)\nwith tf.op_scope([x], None, 'outer') as s1:\n    y = tf.identity(x)\n"
               "with tf.op_scope([x], 'named') as s2:\n    z = tf.identity(x)\n"
               "outputs = {'n': np.array([s1, s2, y.op.name, z.op.name])}\n"),
]

CASES = expand(ROWS)


oracle = oracle_fixture(CASES)

@pytest.mark.parametrize("name", sorted(CASES))
def test_tf1_alias_matches_tensorflow(oracle, name):
    compare(run_in_tftk(*CASES[name]), oracle[name], names=False)
