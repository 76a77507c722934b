"""SavedModel both ways: TF's folders load in tftk, tftk's load in real TensorFlow, same outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tftk as tf

from tests.formats import fixture_models
from tests.tf_oracle import run_script_in_tf

FIXTURES = Path(__file__).parent.parent / "fixtures" / "formats"

TF_LOAD = """
import json, sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
with tf.Graph().as_default(), tf.Session() as sess:
    meta = tf.saved_model.loader.load(sess, ["serve"], sys.argv[1])
    sig = meta.signature_def["serving_default"]
    out = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: np.load(sys.argv[2])})
    print(json.dumps({"method": sig.method_name, "y": out.tolist()}))
"""


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_tensorflow_saved_model_loads_in_tftk(kind):
    values = np.load(FIXTURES / kind / "values.npz")
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], str(FIXTURES / kind / "saved_model"))
        signature = meta.signature_def[tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        out = sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: values["x_eval"]})
    np.testing.assert_allclose(out, values["eval_output"], atol=1e-6)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_tftk_saved_model_loads_in_tensorflow_and_tftk(tmp_path, kind):
    values = np.load(FIXTURES / kind / "values.npz")
    with tf.Graph().as_default():
        model = fixture_models.build(tf, kind)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(model["train_op"], {model["x"]: values["x_train"], model["y"]: values["y_train"]})
            ours = sess.run(model["output"], {model["x"]: values["x_eval"]})
            tf.saved_model.simple_save(sess, str(tmp_path / "sm"), {"x": model["x"]}, {"y": model["output"]})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sm"]  # nothing staged is left behind
    np.save(tmp_path / "x.npy", values["x_eval"])
    script = tmp_path / "load.py"
    script.write_text(TF_LOAD)
    theirs = json.loads(run_script_in_tf(str(script), str(tmp_path / "sm"), str(tmp_path / "x.npy")))
    assert theirs["method"] == "tensorflow/serving/predict"
    np.testing.assert_allclose(theirs["y"], ours, rtol=1e-5, atol=1e-6)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "sm"))
        signature = meta.signature_def["serving_default"]
        np.testing.assert_allclose(sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: values["x_eval"]}),
                                   ours, rtol=1e-6)


def test_builder_signatures_and_errors(tmp_path):
    sm = tf.saved_model
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [2.0]], name="w")
        y = tf.matmul(x, w, name="y")
        examples = tf.placeholder(tf.string, [None], name="examples")
        info = sm.utils.build_tensor_info(y)
        assert info.name == "y:0" and [d.size for d in info.tensor_shape.dim] == [-1, 1]
        regress = sm.signature_def_utils.regression_signature_def(examples, y)
        assert regress.method_name == "tensorflow/serving/regress" and sm.signature_def_utils.is_valid_signature(regress)
        with pytest.raises(ValueError, match="Classification classes and scores cannot both be None"):
            sm.signature_def_utils.classification_signature_def(examples, None, None)
        with pytest.raises(ValueError, match="Prediction inputs cannot be None or empty"):
            sm.signature_def_utils.predict_signature_def({}, {"y": y})
        with tf.Session() as sess:
            sess.run(w.initializer)
            builder = sm.builder.SavedModelBuilder(str(tmp_path / "m"))
            with pytest.raises(AssertionError, match="has not been saved yet"):
                builder.add_meta_graph(["eval"])
            builder.add_meta_graph_and_variables(sess, ["serve"], {"predict": sm.predict_signature_def({"x": x}, {"y": y}),
                                                                   "regress": regress})
            builder.add_meta_graph(["eval", "gpu"])
            builder.save(as_text=True)
    assert (tmp_path / "m" / "saved_model.pbtxt").is_file()
    with pytest.raises(AssertionError, match="already exists, and isn't empty"):
        sm.builder.SavedModelBuilder(str(tmp_path / "m"))
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(RuntimeError, match=r"tags \['train'\] could not be found.*\[\['gpu', 'eval'\]|tags \['train'\]"):
            sm.loader.load(sess, ["train"], str(tmp_path / "m"))
        meta = sm.loader.load(sess, ["serve"], str(tmp_path / "m"))
        assert sorted(meta.signature_def) == ["predict", "regress"]
        assert sess.run("y:0", {"x:0": [[1.0, 1.0]]}).tolist() == [[3.0]]
    with pytest.raises(OSError, match="SavedModel file does not exist"):
        sm.loader.load(tf.Session(graph=tf.Graph()), ["serve"], str(tmp_path))
