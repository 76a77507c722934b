"""Graphs as small as TF's: Fill for large zeros/ones, compact TensorProtos, meta_graph_def events."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tftk.proto.tensorflow import MetaGraphDef
from tftk.summary.tensor_proto import TensorProtoError, make_ndarray, make_tensor_proto

from tests.formats.deep_mnist_model import build

FIXTURES = Path(__file__).parent.parent / "fixtures" / "formats"


@pytest.mark.parametrize("make, value", [(tf.zeros, 0.0), (tf.ones, 1.0)])
def test_large_zeros_and_ones_build_a_fill(make, value):
    with tf.Graph().as_default() as graph:
        out = make([300, 400], tf.float32)
        assert out.op.type == "Fill" and out.op.name == make.__name__
        names = {op.name for op in graph.get_operations()}
        assert {f"{make.__name__}/shape_as_tensor", f"{make.__name__}/Const"} <= names
        assert out.shape.as_list() == [300, 400]
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), np.full((300, 400), value, np.float32))
        assert graph.as_graph_def().ByteSize() < 300


def test_small_zeros_are_a_splat_constant_of_constant_size():
    with tf.Graph().as_default() as graph:
        out = tf.zeros([20, 30], tf.int64)
        assert out.op.type == "Const"
        node = graph.as_graph_def().node[0]
        assert list(node.attr["value"].tensor.int64_val) == [0] and not node.attr["value"].tensor.tensor_content
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), np.zeros((20, 30), np.int64))


DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "bool", "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["splat", "random", "scalar", "empty"])
def test_tensor_proto_round_trip(dtype, kind):
    rng = np.random.default_rng(0)
    shape = {"splat": (50, 40), "random": (7, 3), "scalar": (), "empty": (0, 4)}[kind]
    if kind == "splat":
        array = np.full(shape, 3, dtype=dtype)
    else:
        array = (rng.standard_normal(shape) * 50).astype(dtype)
    proto = make_tensor_proto(array)
    back = make_ndarray(proto)
    assert back.dtype == array.dtype and back.shape == array.shape
    np.testing.assert_array_equal(back, array)
    if kind == "splat" and dtype not in ("uint32", "uint64"):  # no typed field for those in the proto
        assert proto.ByteSize() < 40 and not proto.tensor_content


def test_large_constant_is_tensor_content_and_nan_splat_is_compact():
    array = np.arange(10000, dtype=np.float32)
    proto = make_tensor_proto(array)
    assert len(proto.tensor_content) == 40000 and not proto.float_val
    nan = make_tensor_proto(np.full((100, 100), np.nan, np.float32))
    assert len(nan.float_val) == 1 and np.isnan(make_ndarray(nan)).all()


def test_strings_round_trip():
    array = np.array([[b"a", b"bc"], [b"", b"\xff"]], dtype=object)
    np.testing.assert_array_equal(make_ndarray(make_tensor_proto(array)), array)


@pytest.mark.parametrize("corrupt, message", [
    (lambda p: setattr(p, "tensor_content", p.tensor_content[:-1]), "tensor_content holds 15 bytes"),
    (lambda p: (p.ClearField("tensor_content"), p.float_val.extend([1.0] * 5)), "5 values for a tensor"),
    (lambda p: p.tensor_shape.dim.add(size=-1), "fully known shape"),
    (lambda p: [p.tensor_shape.dim.add(size=1 << 30) for _ in range(3)], "too large"),
    (lambda p: setattr(p, "dtype", 14), "unsupported tensor dtype DT_BFLOAT16"),
])
def test_bad_tensor_proto_is_a_clear_error(corrupt, message):
    proto = make_tensor_proto(np.arange(4, dtype=np.float32))
    corrupt(proto)
    with pytest.raises(TensorProtoError, match=message):
        make_ndarray(proto)


def _deep_mnist_graph():
    graph = tf.Graph()
    with graph.as_default():
        build(tf)
    return graph


def test_deep_mnist_graph_def_within_1_5x_of_tensorflow():
    recorded = json.loads((FIXTURES / "graph_sizes.json").read_text())["deep_mnist_adam_graph_def_bytes"]
    size = _deep_mnist_graph().as_graph_def().ByteSize()
    assert size <= 1.5 * recorded, (size, recorded)


def test_file_writer_writes_graph_and_meta_graph_events(tmp_path):
    graph = _deep_mnist_graph()
    writer = tf.summary.FileWriter(str(tmp_path), graph)
    writer.close()
    events = [e for f in tmp_path.iterdir() for e in tf.train.summary_iterator(str(f))]
    kinds = [e.WhichOneof("what") for e in events]
    assert kinds == ["file_version", "graph_def", "meta_graph_def"]
    recorded = json.loads((FIXTURES / "graph_sizes.json").read_text())["deep_mnist_adam_graph_def_bytes"]
    assert len(events[1].graph_def) <= 1.5 * recorded * 1.3  # + the _output_shapes TF also adds
    meta = MetaGraphDef.FromString(events[2].meta_graph_def)
    assert {n.name for n in meta.graph_def.node} >= {op.name for op in graph.get_operations()}
    assert meta.meta_info_def.tensorflow_version


def test_supervisor_writes_meta_graph_event(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(1.0, name="w")
        tf.train.get_or_create_global_step()
        sv = tf.train.Supervisor(logdir=str(tmp_path), save_summaries_secs=0, save_model_secs=0)
        with sv.managed_session() as sess:
            sess.run(tf.train.get_global_step())
        sv.stop()
    events = [e for f in tmp_path.glob("events.*") for e in tf.train.summary_iterator(str(f))]
    metas = [MetaGraphDef.FromString(e.meta_graph_def) for e in events if e.WhichOneof("what") == "meta_graph_def"]
    assert len(metas) == 1
    assert "w" in {n.name for n in metas[0].graph_def.node}
