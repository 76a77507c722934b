"""Nodes in TensorFlow's form (no `_tftk_*` marks) import through TF's OpDef signature.

The table: every differential row (tests/formats/tf_form_round_trip.py) built in tftk, exported,
stripped of what TensorFlow would not have written, imported into a new graph and run; values
must be the original's. The quick tier runs a row per newly importable op family; the slow tier
every row. Plus the errors a user sees for what cannot be rebuilt.
"""

import numpy as np
import pytest

import tftk as tf
from tests.formats.tf_form_round_trip import as_tensorflow_wrote_it, build_and_run, differential_cases, \
    import_and_run
from tftk.formats.importer import UnsupportedNodeError
from tftk.formats.lookup_table_import import LOOKUP_BUILDERS
from tftk.formats.op_signatures import _signatures
from tftk.formats.resource_variable_import import RESOURCE_BUILDERS
from tftk.formats.stack_import import STACK_BUILDERS
from tftk.formats.tensor_array_import import TENSOR_ARRAY_BUILDERS
from tftk.formats.signature_import import UNSUPPORTED

# Op types whose output is a resource handle (queues, readers, iterators): refused with the reason.
HANDLES = {op for op, sig in _signatures().items() if any(arg[2] == 20 for arg in sig["outputs"])} \
    - set(LOOKUP_BUILDERS) - set(RESOURCE_BUILDERS) - set(TENSOR_ARRAY_BUILDERS) - set(STACK_BUILDERS)
CASES = {name: (body, inputs) for name, body, inputs in differential_cases()}
QUICK = ["core_ops_table:floor", "core_ops_table:sign", "core_ops_table:round", "core_ops_table:erf",
         "core_ops_table:reciprocal", "core_ops_table:selu", "core_ops_table:softsign", "core_ops_table:leaky_relu",
         "core_ops_table:cumsum_excl_rev", "core_ops_table:cumprod", "core_ops_table:tile",
         "linalg_ops_tf:cholesky", "linalg_ops_tf:matrix_inverse", "linalg_ops_tf:qr_r_times_q",
         "linalg_ops_tf:svd_vectors_squared", "signal_ops_tf:fft", "scatter_segment_special_tf:segment_max",
         "linalg_ops_tf:einsum_three_operands", "text_ops_tf:join", "sort_set_bitwise_tf:reverse_sequence",
         "sort_set_bitwise_tf:ensure_shape", "sort_set_bitwise_tf:bitcast_down", "sort_set_bitwise_tf:depth_to_space",
         "image_more_tf:non_max_suppression_overlaps", "special_math_more_tf:ndtri"]
QUICK = [name for name in QUICK if name in CASES]
# Rows whose graph keeps nodes tftk cannot export in TF's form and cannot read back in its own.
KNOWN_EXPORT_GAPS: dict[str, str] = {}


def _round_trip(name: str) -> set:
    body, inputs = CASES[name]
    try:
        graph, names, values = build_and_run(body, inputs)
    except Exception as exc:  # a row of the differential tables that checks an error tftk raises
        pytest.skip(f"the row raises in tftk itself: {type(exc).__name__}")
    graph_def, types = as_tensorflow_wrote_it(graph.as_graph_def())
    refused = sorted(types & set(UNSUPPORTED)) + sorted(f"{t}.*resource" for t in types & HANDLES)
    if refused:  # the user is told which node and why
        with pytest.raises(UnsupportedNodeError, match="|".join(refused)):
            import_and_run(graph_def, names)
        return types
    got = import_and_run(graph_def, names)
    for key, value in values.items():
        expected, actual = np.asarray(value), np.asarray(got[key])
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, key
        if expected.dtype.kind in "fc":
            np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6, equal_nan=True, err_msg=key)
        else:
            np.testing.assert_array_equal(actual, expected, err_msg=key)
    return types


def test_quick_rows_cover_new_op_types():
    assert len(QUICK) >= 20, "the quick tier's row names no longer match the differential tables"


@pytest.mark.parametrize("name", QUICK)
def test_tensorflow_form_round_trip_quick(name):
    assert _round_trip(name), "no node was written in TensorFlow's form"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_tensorflow_form_round_trip_every_differential_row(name):
    if name in KNOWN_EXPORT_GAPS:
        pytest.xfail(KNOWN_EXPORT_GAPS[name])
    _round_trip(name)


def _graph_def(build) -> object:
    graph = tf.Graph()
    with graph.as_default():
        build()
    graph_def, _ = as_tensorflow_wrote_it(graph.as_graph_def())
    return graph_def


def test_a_tf_input_tftk_keeps_as_an_attr_must_be_constant():
    graph_def = _graph_def(lambda: tf.cumsum(tf.constant([1.0, 2.0]), axis=0, name="c"))
    cumsum = next(n for n in graph_def.node if n.op == "Cumsum")
    feed = graph_def.node.add(name="axis_in", op="Placeholder")  # the axis now comes at run time
    feed.attr["dtype"].type = tf.int32.as_datatype_enum
    cumsum.input[1] = "axis_in"
    with tf.Graph().as_default(), \
            pytest.raises(UnsupportedNodeError, match="node 'c': its axis input must be constant"):
        tf.import_graph_def(graph_def, name="")


def test_a_queue_handle_is_refused_with_reason():
    graph_def = _graph_def(lambda: tf.FIFOQueue(3, [tf.float32], name="q").size())
    with tf.Graph().as_default(), \
            pytest.raises(UnsupportedNodeError, match="node 'q' \\(FIFOQueueV2\\): output 'handle' is a 'resource'"):
        tf.import_graph_def(graph_def, name="")


def test_pre_v3_tensor_array_op_is_refused_with_reason():
    from tftk.formats.signature_import import signature_builder
    from tftk.proto.tensorflow import NodeDef
    builder = signature_builder(NodeDef(name="ta/scatter", op="TensorArrayScatter"))
    with pytest.raises(UnsupportedNodeError, match="node 'ta/scatter' .*pre-V3 TensorArrayScatter"):
        builder([], {}, "ta/scatter")


def test_static_shape_comes_from_output_shapes_when_tensorflow_wrote_them():
    graph = tf.Graph()
    with graph.as_default():
        tf.cumsum(tf.placeholder(tf.float32, [None, 3], name="x"), axis=1, name="c")
    graph_def = graph.as_graph_def(add_shapes=True)
    graph_def, types = as_tensorflow_wrote_it(graph_def)
    assert "Cumsum" in types
    with tf.Graph().as_default() as imported:
        tf.import_graph_def(graph_def, name="")
        assert imported.get_tensor_by_name("c:0").shape.as_list() == [None, 3]
