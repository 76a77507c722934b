"""Loops written as TF's functional While (FunctionDefs + TensorLists) and read back.

Each program is built in tftk, its GraphDef (and gradient) written, then read back by tftk and
run by real TensorFlow (frozen GraphDef and SavedModel): the same values.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tftk.formats.functions import graph_library
from tftk.proto.tensorflow import GraphDef

from tests.tf_oracle import run_script_in_tf


def _rows(shape, seed=0):
    return np.random.RandomState(seed).rand(*shape).astype(np.float64) - 0.5


def _while_loop(x):
    w = tf.constant(np.linspace(0.5, 1.5, 3), name="w")
    _, y = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, tf.tanh(y * w) + 0.5 * y), [0, x])
    return y


def _while_loop_max_iterations(x):
    _, y = tf.while_loop(lambda i, y: i < 100, lambda i, y: (i + 1, tf.sin(y) * 2.0), [0, x], maximum_iterations=3)
    return y


def _scan(x):
    return tf.scan(lambda acc, row: acc * 0.5 + tf.square(row), tf.transpose(x), initializer=tf.zeros_like(x[:, 0]))


def _map_fn(x):
    return tf.map_fn(lambda row: tf.reduce_sum(row * row) * row, x)


def _foldl(x):
    return tf.foldl(lambda acc, row: acc * row + 1.0, x)


def _dynamic_rnn(cell):
    def build(x):
        seq = tf.reshape(x, [-1, 2, 3])
        outputs, state = tf.nn.dynamic_rnn(cell(), tf.cast(seq, tf.float32), dtype=tf.float32)
        return tf.cast(tf.reduce_sum(outputs, axis=1) + (state.h if hasattr(state, "h") else state), tf.float64)
    return build


def _nested(x):
    def outer(i, y):
        _, inner = tf.while_loop(lambda j, z: j < 2, lambda j, z: (j + 1, z * 0.5 + 1.0), [0, y])
        return i + 1, inner * y
    return tf.while_loop(lambda i, y: i < 3, outer, [0, x])[1]


def _tensor_array(x):
    def body(i, ta):
        return i + 1, ta.write(i, tf.sin(tf.gather(x, i)) * tf.cast(i, tf.float64))
    return tf.while_loop(lambda i, ta: i < 4, body, [0, tf.TensorArray(tf.float64, size=4)])[1].stack()


def _cond(x):
    positive = tf.reduce_sum(x) > 0.0
    inner = lambda: tf.cond(tf.reduce_max(x) > 0.3, lambda: tf.sin(x) * 3.0, lambda: x + tf.constant(2.0, tf.float64))
    return tf.cond(positive, lambda: inner() * x, lambda: tf.square(x) + 1.0)


def _cond_in_while(x):
    body = lambda i, y: (i + 1, tf.cond(tf.equal(i % 2, 0), lambda: y * 1.5, lambda: tf.tanh(y) - 0.25))
    return tf.while_loop(lambda i, y: i < 5, body, [0, x])[1]


def _while_in_cond(x):
    loop = lambda: tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.sin(y) + y), [0, x])[1]
    return tf.cond(tf.reduce_sum(x) > 0.0, loop, lambda: x * 2.0)


# (name, build(x) -> y, x's shape, whether tftk takes its gradient)
PROGRAMS = [
    ("while_loop", _while_loop, (4, 3), True),
    ("maximum_iterations", _while_loop_max_iterations, (4, 3), True),
    ("scan", _scan, (4, 3), True),
    ("map_fn", _map_fn, (4, 3), True),
    ("foldl", _foldl, (4, 3), True),
    ("dynamic_rnn_lstm", _dynamic_rnn(lambda: tf.nn.rnn_cell.BasicLSTMCell(5)), (4, 6), True),
    ("dynamic_rnn_gru", _dynamic_rnn(lambda: tf.nn.rnn_cell.GRUCell(5)), (4, 6), True),
    ("nested_while", _nested, (4, 3), True),
]
IDS = [p[0] for p in PROGRAMS]
# loops whose bodies hold ops written in tftk's own form (TensorArray's value ops, IndexedSlicesToDense):
# tftk re-runs them, TensorFlow cannot yet
TFTK_FORM_PROGRAMS = [("tensor_array", _tensor_array, (4, 3), True)]
# tftk's conds are written as TF1's Switch/Merge (formats/cond_export); x's sign picks the branches
COND_PROGRAMS = [(f"{name}_{sign}", build, (4, 3), True, sign)
                 for name, build in [("cond", _cond), ("cond_in_while", _cond_in_while), ("while_in_cond", _while_in_cond)]
                 for sign in ("positive", "negative")]


def _build(build, shape, with_gradient, sign=None):
    """(graph_def, the output names to compare, the values tftk computes for x)."""
    value = _rows(shape) if sign is None else np.abs(_rows(shape)) * (1.0 if sign == "positive" else -1.0)
    with tf.Graph().as_default() as graph:
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float64, [None, shape[1]], name="x")
        y = tf.identity(build(x), name="y")
        fetches = [y]
        if with_gradient:
            fetches += tf.gradients(tf.reduce_sum(y * y), [x])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            expected = sess.run(fetches, {x: value})
            graph_def = tf.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(),
                                                                     [t.op.name for t in fetches])
    return graph_def, [t.name for t in fetches], value, expected


@pytest.mark.parametrize("name, build, shape, with_gradient", PROGRAMS + TFTK_FORM_PROGRAMS,
                         ids=IDS + [p[0] for p in TFTK_FORM_PROGRAMS])
def test_tftk_reruns_its_functional_while_graphs(name, build, shape, with_gradient):
    graph_def, names, value, expected = _build(build, shape, with_gradient)
    assert "While" in {n.op for n in graph_def.node} and graph_library(graph_def).function
    assert not {"WhileGrad"} & {n.op for n in graph_def.node}
    with tf.Graph().as_default():
        x, *fetches = tf.import_graph_def(GraphDef.FromString(graph_def.SerializeToString()),
                                          return_elements=["x:0"] + names, name="")
        with tf.Session() as sess:
            got = sess.run(fetches, {x: value})
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, build, shape, with_gradient, sign", COND_PROGRAMS, ids=[p[0] for p in COND_PROGRAMS])
def test_tftk_reruns_its_switch_merge_conds(name, build, shape, with_gradient, sign):
    """Reading Switch/Merge back is the TF1 control-flow importer's (formats/v1_control_flow)."""
    pytest.importorskip("tftk.formats.v1_control_flow")
    graph_def, names, value, expected = _build(build, shape, with_gradient, sign)
    written = {n.op for n in graph_def.node} | {n.op for f in graph_library(graph_def).function for n in f.node_def}
    assert {"Switch", "Merge"} <= written
    with tf.Graph().as_default():
        x, *fetches = tf.import_graph_def(graph_def, return_elements=["x:0"] + names, name="")
        with tf.Session() as sess:
            got = sess.run(fetches, {x: value})
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


TF_RUN = """
import json, sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
spec = json.load(open(sys.argv[1]))
out = {}
for name, case in spec.items():
    graph_def = tf.GraphDef()
    graph_def.ParseFromString(open(case["pb"], "rb").read())
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            try:
                out[name] = [v.tolist() for v in sess.run(case["fetches"], {"x:0": np.load(case["x"])})]
            except Exception as exc:
                out[name] = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
print(json.dumps(out))
"""


@pytest.mark.slow  # runs real TensorFlow in a subprocess
def test_tensorflow_runs_tftk_frozen_loop_graphs(tmp_path):
    """Forward and gradient of each program: TF's functional While runs tftk's FunctionDefs, TF1's
    Switch/Merge its conds (in the graph and inside loop bodies)."""
    spec, expected = {}, {}
    for name, build, shape, with_gradient, *sign in PROGRAMS + COND_PROGRAMS:
        graph_def, names, value, expected[name] = _build(build, shape, with_gradient, *sign)
        (tmp_path / f"{name}.pb").write_bytes(graph_def.SerializeToString())
        np.save(tmp_path / f"{name}.npy", value)
        spec[name] = {"pb": str(tmp_path / f"{name}.pb"), "x": str(tmp_path / f"{name}.npy"), "fetches": names}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    (tmp_path / "run.py").write_text(TF_RUN)
    theirs = json.loads(run_script_in_tf(str(tmp_path / "run.py"), str(tmp_path / "spec.json")))
    for name in spec:
        assert "error" not in theirs[name], (name, theirs[name])
        for got, want in zip(theirs[name], expected[name]):
            # float32 to 1e-5 (the RNN equality tolerance): tftk's vectorised cell kernels and the TF ops
            # they are written as round differently (a GRU step differed by 2e-7 on a 0.085 value)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.slow  # runs real TensorFlow in a subprocess
@pytest.mark.parametrize("model", ["lstm_adam", "gru_adam"])
def test_tftk_dynamic_rnn_saved_model_loads_in_tensorflow_and_tftk(tmp_path, model):
    """A dynamic_rnn model trained a step in tftk, saved with simple_save: TF and tftk serve it."""
    from tests.differential import training_models
    from tests.formats.test_saved_model import TF_LOAD
    batch = training_models.batches(model, 2)
    with tf.Graph().as_default() as graph:
        (x, y), loss, train_op = training_models.MODELS[model](tf)
        output = graph.get_tensor_by_name("rnn/transpose_1:0")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op, {x: batch[0][0], y: batch[0][1]})
            ours = sess.run(output, {x: batch[1][0]})
            tf.saved_model.simple_save(sess, str(tmp_path / "sm"), {"x": x}, {"y": output})
    np.save(tmp_path / "x.npy", batch[1][0])
    (tmp_path / "load.py").write_text(TF_LOAD)
    theirs = json.loads(run_script_in_tf(str(tmp_path / "load.py"), str(tmp_path / "sm"), str(tmp_path / "x.npy")))
    np.testing.assert_allclose(theirs["y"], ours, rtol=1e-5, atol=1e-6)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "sm"))
        signature = meta.signature_def["serving_default"]
        np.testing.assert_array_equal(sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: batch[1][0]}),
                                      ours)


def _list_graph():
    """TensorList ops built directly (as TF 2's loops use them): their values, exported GraphDef."""
    from tftk.ops.list_ops import build_list_op
    f64, i32 = {"element_dtype": tf.float64}, {"element_dtype": tf.float64, "shape_type": tf.int32}
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float64, [3, 2], name="x")
        shape, zero, one = tf.constant([2]), tf.constant(0), tf.constant(1)
        rows = build_list_op("TensorListFromTensor", [x, shape], i32).outputs[0]
        second = build_list_op("TensorListGetItem", [rows, one, shape], f64).outputs[0]
        changed = build_list_op("TensorListSetItem", [rows, zero, second * 2.0], f64).outputs[0]
        pushed = build_list_op("TensorListPushBack", [changed, tf.sin(second)], f64).outputs[0]
        popped, last = build_list_op("TensorListPopBack", [pushed, shape], f64).outputs
        reserved = build_list_op("TensorListReserve", [shape, tf.constant(2)], i32).outputs[0]
        filled = build_list_op("TensorListSetItem", [reserved, one, last], f64).outputs[0]
        summed = tf.add_n([pushed, pushed])  # TF's AddN of lists: item by item
        fetches = {
            "stacked": build_list_op("TensorListStack", [changed, shape], dict(f64, num_elements=-1)).outputs[0],
            "popped_length": build_list_op("TensorListLength", [popped], {}).outputs[0],
            "last": last,
            "filled": build_list_op("TensorListStack", [filled, shape], dict(f64, num_elements=-1)).outputs[0],
            "element_shape": build_list_op("TensorListElementShape", [rows], {"shape_type": tf.int32}).outputs[0],
            "summed": build_list_op("TensorListStack", [summed, shape], dict(f64, num_elements=-1)).outputs[0],
        }
        value = np.arange(6.0).reshape(3, 2)
        with tf.Session() as sess:
            ours = sess.run(fetches, {x: value})
        return graph.as_graph_def(), {k: t.name for k, t in fetches.items()}, value, ours


def test_tensor_list_ops_values():
    _, _, value, ours = _list_graph()
    changed = value.copy()
    changed[0] = value[1] * 2.0
    np.testing.assert_array_equal(ours["stacked"], changed)
    np.testing.assert_array_equal(ours["popped_length"], 3)
    np.testing.assert_array_equal(ours["last"], np.sin(value[1]))
    np.testing.assert_array_equal(ours["filled"], [[0.0, 0.0], np.sin(value[1])])  # item 0 unset: zeros
    np.testing.assert_array_equal(ours["element_shape"], [2])
    np.testing.assert_array_equal(ours["summed"], 2 * np.vstack([changed, np.sin(value[1])]))


@pytest.mark.slow  # runs real TensorFlow in a subprocess
def test_tensor_list_ops_match_tensorflow(tmp_path):
    graph_def, names, value, ours = _list_graph()
    (tmp_path / "lists.pb").write_bytes(graph_def.SerializeToString())
    np.save(tmp_path / "x.npy", value)
    keys = sorted(names)
    spec = {"lists": {"pb": str(tmp_path / "lists.pb"), "x": str(tmp_path / "x.npy"), "fetches": [names[k] for k in keys]}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    (tmp_path / "run.py").write_text(TF_RUN)
    theirs = json.loads(run_script_in_tf(str(tmp_path / "run.py"), str(tmp_path / "spec.json")))["lists"]
    assert "error" not in theirs, theirs
    for key, got in zip(keys, theirs):
        np.testing.assert_array_equal(got, ours[key], err_msg=key)


def test_unset_item_without_a_known_element_shape_is_a_clear_error():
    from tftk.ops.list_ops import build_list_op
    with tf.Graph().as_default():
        unknown = tf.constant(-1)
        reserved = build_list_op("TensorListReserve", [unknown, tf.constant(2)],
                                 {"element_dtype": tf.float32, "shape_type": tf.int32}).outputs[0]
        item = build_list_op("TensorListGetItem", [reserved, tf.constant(0), unknown],
                             {"element_dtype": tf.float32}).outputs[0]
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match="item 0 was never set and the element shape"):
            sess.run(item)


def test_a_while_whose_body_is_not_in_the_library_names_it():
    graph_def, names, value, _ = _build(_while_loop, (4, 3), False)
    library = graph_library(graph_def)
    kept = [f for f in library.function if not f.signature.name.endswith("_body")]
    del library.function[:]
    library.function.extend(kept)
    stripped = GraphDef()
    stripped.node.extend(graph_def.node)
    from tftk.formats.functions import set_graph_library
    set_graph_library(stripped, library)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="function 'while_while_body' is not in the "
                                                                  "graph's library"):
        tf.import_graph_def(stripped, name="")


def test_body_ops_named_like_the_loop_args_keep_their_names():
    """The function's args (counter, var_0, ...) take names no op of the body has."""
    def body(i, y):
        return tf.add(i, 1, name="counter"), tf.multiply(y, 2.0, name="var_1")
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float64, [2], name="x")
        y = tf.identity(tf.while_loop(lambda i, y: i < 3, body, [0, x])[1], name="y")
        graph_def = graph.as_graph_def()
    body_def = next(f for f in graph_library(graph_def).function if f.signature.name.endswith("_body"))
    assert {"counter", "var_1"} <= {n.name for n in body_def.node_def}
    assert not {"counter", "var_1"} & {a.name for a in body_def.signature.input_arg}
    with tf.Graph().as_default():
        x2, y2 = tf.import_graph_def(graph_def, return_elements=["x:0", "y:0"], name="")
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y2, {x2: [1.0, 3.0]}), [8.0, 24.0])


@pytest.mark.parametrize("form", ["write_graph", "meta_graph", "saved_model"])
def test_text_format_files_keep_the_loop_functions(tmp_path, form):
    """Protobuf's text format drops unknown fields: the library goes through a twin that declares it."""
    value = _rows((4, 3))
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float64, [None, 3], name="x")
        y = tf.identity(_while_loop(x), name="y")
        with tf.Session() as sess:
            expected = sess.run(y, {x: value})
            if form == "write_graph":
                path = tf.train.write_graph(graph, str(tmp_path), "graph.pbtxt", as_text=True)
            elif form == "meta_graph":
                path = str(tmp_path / "graph.meta")
                tf.train.export_meta_graph(path, as_text=True)
            else:
                builder = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "sm"))
                signature = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
                builder.add_meta_graph_and_variables(sess, ["serve"], {"serving_default": signature})
                builder.save(as_text=True)
    text = (Path(path).read_text() if form != "saved_model" else (tmp_path / "sm" / "saved_model.pbtxt").read_text())
    assert "library {" in text and "while_while_body" in text
    with tf.Graph().as_default(), tf.Session() as sess:
        if form == "write_graph":
            from tftk.proto.tensorflow import parse_text
            tf.import_graph_def(parse_text(text, GraphDef), name="")
        elif form == "meta_graph":
            tf.train.import_meta_graph(path)
        else:
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "sm"))
        np.testing.assert_allclose(sess.run("y:0", {"x:0": value}), expected, rtol=1e-12)
