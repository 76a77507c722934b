"""Graphs TensorFlow wrote (tf.compat.v1, `as_graph_def()`) with op types tftk imports through
their OpDef signature (formats/signature_import.py): imported into tftk, they give TF's values.

Each row is TF1 code over constants that sets `y`; in the TF venv the graph is built, `y` run and
the GraphDef serialised, then tftk imports that GraphDef and runs the same tensor.
"""

import numpy as np
import pytest

import tftk as tf
from tests.tf_oracle import run_in_tf
from tftk.proto.tensorflow import GraphDef

X = "tf.constant(np.linspace(-2.0, 2.5, 24).reshape(2, 3, 4).astype(np.float32))"
M = "tf.constant(np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]))"
IMG = "tf.constant(np.arange(2 * 4 * 4 * 3, dtype=np.float32).reshape(2, 4, 4, 3) / 10.0)"
WORDS = "tf.constant(['a b', 'Hello World', '', ' x  y '])"

ROWS = {  # name -> (TF1 expression for y, the op types it must contain)
    "gather_nd": ("tf.gather_nd(tf.reshape(tf.range(12), [3, 4]), [[0, 1], [2, 3]])", {"GatherNd"}),
    "one_hot": ("tf.one_hot([0, 2, -1, 1], 3, on_value=5.0, off_value=-1.0, axis=0)", {"OneHot"}),
    "sparse_to_dense": ("tf.sparse_to_dense([[0, 1], [2, 0]], [3, 2], [7, 8], default_value=-1)", {"SparseToDense"}),
    "hash_bucket_fast": ("tf.string_to_hash_bucket_fast(tf.constant(['a', 'bc', '']), 1000)",
                         {"StringToHashBucketFast"}),
    "hash_bucket_strong": ("tf.strings.to_hash_bucket_strong(tf.constant(['a', 'bc']), 50, [1, 2])",
                           {"StringToHashBucketStrong"}),
    "where": ("tf.where(tf.constant([[True, False], [False, True]]))", {"Where"}),
    "sparse_xent": ("tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 3], logits=tf.reshape(" + X
                    + "[0], [3, 4])[:2])", {"SparseSoftmaxCrossEntropyWithLogits"}),
    "pad": ("tf.pad(" + X + ", [[0, 1], [2, 0], [1, 1]])", {"Pad"}),
    "mirror_pad": ("tf.pad(" + X + ", [[0, 1], [2, 0], [1, 1]], mode='REFLECT')", {"MirrorPad"}),
    "floor_sign_round": ("tf.floor(" + X + ") + tf.sign(" + X + ") + tf.round(" + X + " * 1.3)",
                         {"Floor", "Sign", "Round"}),
    "unpack": ("tf.unstack(" + X + ", axis=1)[2]", {"Unpack"}),
    "top_k": ("tf.nn.top_k(" + X + ", k=2)[0] + tf.cast(tf.nn.top_k(" + X + ", k=2)[1], tf.float32)", {"TopKV2"}),
    "leaky_relu_selu_softsign": ("tf.nn.leaky_relu(" + X + ", 0.3) + tf.nn.selu(" + X + ") + tf.nn.softsign(" + X
                                 + ")", {"LeakyRelu", "Selu", "Softsign"}),
    "resize_bilinear": ("tf.image.resize_bilinear(" + IMG + ", [6, 5])", {"ResizeBilinear"}),
    "resize_nearest": ("tf.image.resize_nearest_neighbor(" + IMG + ", [3, 7])", {"ResizeNearestNeighbor"}),
    "cumsum_cumprod": ("tf.cumsum(" + X + ", axis=2, exclusive=True) + tf.cumprod(" + X + ", axis=1, reverse=True)",
                       {"Cumsum", "Cumprod"}),
    "erf_reciprocal": ("tf.erf(" + X + ") + tf.reciprocal(" + X + " + 3.0)", {"Erf", "Reciprocal"}),
    "einsum": ("tf.einsum('ijk,ilk->ijl', " + X + ", " + X + ")", {"Einsum"}),
    "l2_loss": ("tf.nn.l2_loss(" + X + ")", {"L2Loss"}),
    "lrn": ("tf.nn.lrn(" + IMG + ", depth_radius=1, bias=1.0, alpha=0.1, beta=0.5)", {"LRN"}),
    "depth_to_space": ("tf.depth_to_space(tf.reshape(tf.range(32.0), [1, 2, 2, 8]), 2)", {"DepthToSpace"}),
    "space_to_depth": ("tf.space_to_depth(" + IMG + ", 2)", {"SpaceToDepth"}),
    "rank": ("tf.raw_ops.Rank(input=" + X + ")", {"Rank"}),
    "reverse": ("tf.reverse(" + X + ", [0, 2])", {"ReverseV2"}),
    "segment_sum": ("tf.segment_sum(tf.reshape(" + X + ", [6, 4]), [0, 0, 1, 1, 1, 3])", {"SegmentSum"}),
    "unsorted_segment_max": ("tf.unsorted_segment_max(tf.reshape(" + X + ", [6, 4]), [2, 0, 1, 1, 0, 2], 3)",
                             {"UnsortedSegmentMax"}),
    "string_ops": ("tf.strings.length(tf.strings.upper(" + WORDS + ")) + tf.strings.length(tf.strings.strip("
                   + WORDS + "))", {"StringLength", "StringUpper", "StringStrip"}),
    "string_join_substr": ("tf.strings.join([tf.substr(" + WORDS + ", 0, 2), " + WORDS + "], separator='|')",
                           {"StringJoin", "Substr"}),
    "string_split": ("tf.string_split(" + WORDS + ").values", {"StringSplit"}),
    "regex_replace": ("tf.raw_ops.RegexReplace(input=" + WORDS + ", pattern='l+', rewrite='L')", {"RegexReplace"}),
    "as_string": ("tf.as_string(tf.constant([1.5, -2.25]), precision=2)", {"AsString"}),
    "string_to_number": ("tf.string_to_number(tf.constant(['1.5', '-3']))", {"StringToNumber"}),
    "stateless_uniform": ("tf.raw_ops.StatelessRandomUniform(shape=[3, 4], seed=[1, 2])", {"StatelessRandomUniform"}),
    "stateless_normal": ("tf.raw_ops.StatelessRandomNormal(shape=[5], seed=[7, 3], dtype=tf.float64)", {"StatelessRandomNormal"}),
    "stateless_truncated": ("tf.raw_ops.StatelessTruncatedNormal(shape=[4, 2], seed=[0, 9])",
                            {"StatelessTruncatedNormal"}),
    "matrix_inverse": ("tf.matrix_inverse(" + M + ")", {"MatrixInverse"}),
    "cholesky": ("tf.cholesky(" + M + ")", {"Cholesky"}),
    "qr": ("tf.abs(tf.qr(" + M + ")[1])", {"Qr"}),
    "svd": ("tf.svd(" + M + ", compute_uv=False)", {"Svd"}),
    "determinant": ("tf.matrix_determinant(" + M + ")", {"MatrixDeterminant"}),
    "matrix_solve": ("tf.matrix_solve(" + M + ", tf.ones([3, 2], tf.float64))", {"MatrixSolve"}),
    "band_part_diag": ("tf.matrix_band_part(" + M + ", 0, 1) + tf.raw_ops.MatrixDiag(diagonal=tf.raw_ops.MatrixDiagPart(input=" + M
                       + "))",
                       {"MatrixBandPart", "MatrixDiag", "MatrixDiagPart"}),
    "fft": ("tf.abs(tf.signal.fft(tf.complex(" + X + ", " + X + " * 0.5)))", {"FFT", "ComplexAbs", "Complex"}),
    "rfft": ("tf.abs(tf.signal.rfft(" + X + "))", {"RFFT"}),
    "math_more": ("tf.atan2(" + X + ", " + X + " + 3.0) + tf.expm1(" + X + ") + tf.ceil(" + X + ") + tf.lgamma(" + X
                  + " + 3.0) + tf.digamma(" + X + " + 3.0)", {"Atan2", "Expm1", "Ceil", "Lgamma", "Digamma"}),
    "logical_isfinite": ("tf.logical_or(tf.is_finite(" + X + "), tf.logical_not(tf.is_nan(" + X + ")))",
                         {"LogicalOr", "LogicalNot", "IsFinite", "IsNan"}),
    "in_top_k": ("tf.nn.in_top_k(tf.reshape(" + X + ", [6, 4]), [0, 1, 2, 3, 3, 0], 2)", {"InTopKV2"}),
    "space_to_batch": ("tf.space_to_batch_nd(" + IMG + ", [2, 2], [[0, 0], [0, 0]])", {"SpaceToBatchND"}),
    "diag": ("tf.diag([1.0, 2.0, 3.0]) + tf.raw_ops.DiagPart(input=tf.ones([3, 3]))", {"Diag", "DiagPart"}),
    "bucketize": ("tf.raw_ops.Bucketize(input=" + X + ", boundaries=[-1.0, 0.0, 1.5])", {"Bucketize"}),
    "unique_with_counts": ("tf.unique_with_counts(tf.constant([3, 1, 3, 2, 1, 3]))[2]", {"UniqueWithCounts"}),
    "list_diff": ("tf.setdiff1d(tf.constant([1, 2, 3, 4, 5]), tf.constant([2, 4]))[0]", {"ListDiff"}),
    "lin_space_roll": ("tf.roll(tf.raw_ops.LinSpace(start=0.0, stop=1.0, num=5), 2, 0)", {"LinSpace", "Roll"}),
    "dynamic_partition": ("tf.dynamic_partition(tf.range(6), [0, 1, 0, 2, 1, 0], 3)[0]", {"DynamicPartition"}),
    "bincount": ("tf.raw_ops.Bincount(arr=[1, 1, 3, 0], size=5, weights=tf.constant([], tf.float32))", {"Bincount"}),
    "stateless_uniform_int": ("tf.raw_ops.StatelessRandomUniformInt(shape=[4], seed=[3, 4], minval=-5, maxval=9)",
                              {"StatelessRandomUniformInt"}),
    "stateless_multinomial": ("tf.raw_ops.StatelessMultinomial(logits=tf.log([[0.2, 0.3, 0.5]]), num_samples=6, "
                              "seed=[5, 6])", {"StatelessMultinomial"}),
    "stateless_poisson": ("tf.raw_ops.StatelessRandomPoisson(shape=[5], seed=[1, 1], lam=tf.constant(3.0), "
                          "dtype=tf.float32)", {"StatelessRandomPoisson"}),
    "stateless_gamma": ("tf.raw_ops.StatelessRandomGammaV2(shape=[4], seed=[2, 8], alpha=tf.constant(2.5))",
                        {"StatelessRandomGammaV2"}),
    "hash_bucket": ("tf.raw_ops.StringToHashBucket(string_tensor=" + WORDS + ", num_buckets=7)", {"StringToHashBucket"}),
    "resize_area_bicubic": ("tf.raw_ops.ResizeArea(images=" + IMG + ", size=[2, 3]) + tf.raw_ops.ResizeBicubic(images="
                            + IMG + ", size=[2, 3])", {"ResizeArea", "ResizeBicubic"}),
    "hsv": ("tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(" + IMG + " / 10.0))", {"RGBToHSV", "HSVToRGB"}),
    "segment_mean": ("tf.segment_mean(tf.reshape(" + X + ", [6, 4]), [0, 0, 1, 2, 2, 2])", {"SegmentMean"}),
    "reduce_join": ("tf.raw_ops.ReduceJoin(inputs=tf.reshape(" + WORDS + ", [2, 2]), reduction_indices=1, "
                    "separator='+')", {"ReduceJoin"}),
    "adjust_contrast": ("tf.raw_ops.AdjustContrastv2(images=" + IMG + ", contrast_factor=1.7)", {"AdjustContrastv2"}),
    "fft2d_ifft3d": ("tf.abs(tf.signal.fft2d(tf.complex(" + X + ", " + X + "))) + tf.abs(tf.signal.ifft3d(tf.complex("
                     + X + ", -" + X + ")))", {"FFT2D", "IFFT3D"}),
    "serialize_parse_tensor": ("tf.parse_tensor(tf.serialize_tensor(" + X + "), tf.float32)",
                               {"SerializeTensor", "ParseTensor"}),
    "decode_raw": ("tf.decode_raw(tf.constant(['abcd', 'efgh']), tf.int16)", {"DecodeRaw"}),
    "decode_csv": ("tf.decode_csv(tf.constant(['1,2.5,x', '3,,y']), [[0], [1.0], ['z']])[1]", {"DecodeCSV"}),
    "quantize_dequantize": ("tf.raw_ops.Dequantize(input=tf.raw_ops.QuantizeV2(input=" + X + ", min_range=-2.0, "
                            "max_range=2.5, T=tf.quint8)[0], min_range=-2.0, max_range=2.5)",
                            {"QuantizeV2", "Dequantize"}),
    "lrn_grad": ("tf.gradients(tf.reduce_sum(tf.nn.lrn(" + IMG + ", 2) * " + IMG + "), " + "[])[0] if False else "
                 "tf.raw_ops.LRNGrad(input_grads=" + IMG + ", input_image=" + IMG + ", output_image=tf.nn.lrn(" + IMG
                 + ", 2), depth_radius=2)", {"LRNGrad"}),
    "random_gamma_grad": ("tf.raw_ops.RandomGammaGrad(alpha=tf.constant([1.5, 3.0]), sample=tf.constant([0.7, 2.0]))",
                          {"RandomGammaGrad"}),
    "non_max_suppression": ("tf.raw_ops.NonMaxSuppression(boxes=[[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], "
                            "[0.0, 2.0, 1.0, 3.0]], scores=[0.9, 0.8, 0.7], max_output_size=3, iou_threshold=0.5)",
                            {"NonMaxSuppression"}),
    "summaries": ("tf.summary.merge([tf.summary.scalar('loss', tf.constant(1.5)), tf.summary.scalar('acc', 0.25)])",
                  {"ScalarSummary", "MergeSummary"}),
}

_SNIPPET = """
y = {expr}
graph = tf.get_default_graph()
with tf.Session() as sess:
    value = np.asarray(sess.run(y))
if value.dtype == object:  # strings: npz keeps them as unicode
    value = np.array([v.decode("latin-1") for v in value.reshape(-1)]).reshape(value.shape)
outputs = {{"value": value, "name": np.array(y.name), "graph": np.array(graph.as_graph_def().SerializeToString()),
           "types": np.array(sorted({{op.type for op in graph.get_operations()}}))}}
"""


@pytest.fixture(scope="module")
def tensorflow_graphs():
    return run_in_tf({name: (_SNIPPET.format(expr=expr), {}) for name, (expr, _) in ROWS.items()})


@pytest.mark.parametrize("name", sorted(ROWS))
def test_tensorflow_written_graph_imports_and_gives_tensorflows_values(tensorflow_graphs, name):
    result = tensorflow_graphs[name]
    assert result.error is None, result.message
    out = result.outputs
    assert ROWS[name][1] <= set(out["types"].tolist()), "the row no longer builds the op types it tests"
    graph_def = GraphDef()
    graph_def.ParseFromString(out["graph"].item())
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            got = sess.run(graph.get_tensor_by_name(str(out["name"])))
    expected = out["value"]
    if expected.dtype.kind in "SUO":
        assert [v.decode("latin-1") if isinstance(v, bytes) else v for v in np.ravel(got)] == \
            [v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in np.ravel(expected)]
        return
    assert np.asarray(got).dtype == expected.dtype and np.shape(got) == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


_FRESH = """
import json, sys
import numpy as np
import tftk as tf
from tftk.proto.tensorflow import GraphDef
graph_def = GraphDef()
graph_def.ParseFromString(open(sys.argv[1], "rb").read())
with tf.Graph().as_default() as graph:
    tf.import_graph_def(graph_def, name="")
    value = np.asarray(tf.Session().run(graph.get_tensor_by_name(sys.argv[2]))).tolist()
    print(json.dumps(value, default=lambda b: b.decode("latin-1")))
"""


@pytest.mark.parametrize("name", ["sparse_to_dense", "hash_bucket_fast", "string_join_substr"])
def test_a_fresh_process_imports_op_types_no_module_has_registered_yet(tensorflow_graphs, name, tmp_path):
    """tftk registers op types when their API module is imported; importing a file comes first."""
    import json
    import subprocess
    import sys
    out = tensorflow_graphs[name].outputs
    (tmp_path / "graph.pb").write_bytes(out["graph"].item())
    proc = subprocess.run([sys.executable, "-c", _FRESH, str(tmp_path / "graph.pb"), str(out["name"])],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = out["value"].tolist()
    assert got == expected


OPTIMIZERS = {  # TF1 optimizer over a ref variable with a sparse (gather) gradient -> its SparseApply* op
    "SparseApplyMomentum": "tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True)",
    "SparseApplyAdagrad": "tf.train.AdagradOptimizer(0.2)",
    "SparseApplyRMSProp": "tf.train.RMSPropOptimizer(0.05, momentum=0.5)",
    "SparseApplyCenteredRMSProp": "tf.train.RMSPropOptimizer(0.05, momentum=0.5, centered=True)",
    "SparseApplyFtrl": "tf.train.FtrlOptimizer(0.3, l1_regularization_strength=0.01)",
    "SparseApplyFtrlV2": "tf.train.FtrlOptimizer(0.3, l2_shrinkage_regularization_strength=0.1)",
    "SparseApplyAdadelta": "tf.train.AdadeltaOptimizer(1.0)",
    "SparseApplyProximalAdagrad": "tf.train.ProximalAdagradOptimizer(0.2, l1_regularization_strength=0.01)",
    "SparseApplyProximalGradientDescent": "tf.train.ProximalGradientDescentOptimizer(0.2, l2_regularization_strength=0.1)",
}

_TRAIN = """
v = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0, name="v")
loss = tf.reduce_sum(tf.sin(tf.gather(v, [0, 2, 2])))
train = {optimizer}.minimize(loss, name="train")
init = tf.global_variables_initializer()
with tf.Session() as sess:
    sess.run(init)
    sess.run(train)
    sess.run(train)
    value = sess.run(v)
outputs = {{"value": value, "graph": np.array(tf.get_default_graph().as_graph_def().SerializeToString()),
           "init": np.array(init.name), "types": np.array(sorted({{op.type for op in tf.get_default_graph().get_operations()}}))}}
"""


@pytest.fixture(scope="module")
def tensorflow_training_graphs():
    return run_in_tf({op: (_TRAIN.format(optimizer=optimizer), {}) for op, optimizer in OPTIMIZERS.items()})


@pytest.mark.parametrize("op_type", sorted(OPTIMIZERS))
def test_tensorflow_sparse_optimizer_step_imports_and_trains_as_tensorflow(tensorflow_training_graphs, op_type):
    out = tensorflow_training_graphs[op_type].outputs
    assert out is not None, tensorflow_training_graphs[op_type].message
    assert op_type in set(out["types"].tolist())
    graph_def = GraphDef()
    graph_def.ParseFromString(out["graph"].item())
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            sess.run(graph.get_operation_by_name(str(out["init"])))
            for _ in range(2):
                sess.run(graph.get_operation_by_name("train"))
            got = sess.run(graph.get_tensor_by_name("v:0"))
    np.testing.assert_allclose(got, out["value"], rtol=1e-5, atol=1e-6)
