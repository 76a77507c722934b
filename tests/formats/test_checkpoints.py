"""TF's V2 checkpoints (TensorBundle): tftk reads TF's files, TF reads tftk's, corruption is caught."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tftk.framework.errors import DataLossError, NotFoundError
from tftk.train import checkpoint_io as io
from tftk.train.tensor_bundle import BundleReader, write_bundle

from tests.formats import fixture_models
from tests.tf_oracle import run_script_in_tf

FIXTURES = Path(__file__).parent.parent / "fixtures" / "formats"
DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
          "uint32", "uint64", "bool", "complex64", "complex128"]


def _arrays():
    rng = np.random.default_rng(0)
    arrays = {f"v_{d}": (rng.standard_normal((3, 5)) * 30).astype(d) for d in DTYPES}
    arrays["v_string"] = np.array([[b"a", b""], [b"\x00\xff" * 100, "é".encode()]], dtype=object)
    arrays["scalar"] = np.float64(1.5)
    arrays["empty"] = np.zeros((0, 3), np.float32)
    arrays["empty_strings"] = np.empty((0,), object)
    arrays["scope/with/slashes"] = np.arange(4000, dtype=np.int32)  # forces several restart points
    for i in range(300):  # enough entries for more than one block restart group
        arrays[f"many/{i:03d}"] = np.array([i], np.int64)
    return arrays


def test_round_trip_every_dtype(tmp_path):
    arrays = _arrays()
    written = io.save_bundle(tmp_path / "ck", arrays)
    assert [p.name for p in written] == ["ck.index", "ck.data-00000-of-00001"]
    back = io.load_arrays(tmp_path / "ck")
    assert sorted(back) == sorted(arrays)
    for name, value in arrays.items():
        assert back[name].dtype == np.asarray(value).dtype, name
        np.testing.assert_array_equal(back[name], value)
    listed = {name: (shape, dtype) for name, shape, dtype in io.list_variables(tmp_path / "ck")}
    assert listed["v_float16"] == ((3, 5), np.dtype("float16")) and listed["scalar"] == ((), np.dtype("float64"))


def test_tftk_reads_tensorflow_dtypes_and_partitioned_checkpoints():
    reader = tf.train.NewCheckpointReader(str(FIXTURES / "dtypes" / "model.ckpt"))
    with np.load(FIXTURES / "dtypes" / "values.npz") as values:
        for name in values.files:
            np.testing.assert_array_equal(reader.get_tensor("v_" + name), values[name])
            assert reader.get_tensor("v_" + name).dtype == values[name].dtype
    assert reader.get_tensor("v_string").tolist() == [[b"a", b"", b"hello"], [b"\x00\xff", b"tf", b"x" * 300]]
    prefix = str(FIXTURES / "partitioned" / "model.ckpt")
    assert tf.train.list_variables(prefix) == [("emb", [30, 4])]
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "emb"), np.load(FIXTURES / "partitioned" / "emb.npy"))


def test_checkpoint_reader_api_shapes():
    prefix = str(FIXTURES / "mlp" / "model.ckpt-3")
    reader = tf.train.load_checkpoint(str(FIXTURES / "mlp"))  # a folder: its latest checkpoint
    shapes = reader.get_variable_to_shape_map()
    assert shapes["dense/kernel"] == [4, 8] and shapes["global_step"] == []
    assert reader.get_variable_to_dtype_map()["dense/kernel"] == tf.float32
    assert reader.has_tensor("out/bias") and not reader.has_tensor("nope")
    assert ("dense/kernel/Adam", [4, 8]) in tf.train.list_variables(prefix)
    assert tf.train.load_variable(prefix, "global_step") == 3
    assert tf.train.checkpoint_exists(prefix) and not tf.train.checkpoint_exists(prefix + "x")
    with pytest.raises(NotFoundError, match="Key 'nope' not found"):
        reader.get_tensor("nope")


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_resume_tensorflow_checkpoint_matches_tensorflow_next_step(kind):
    values = np.load(FIXTURES / kind / "values.npz")
    with tf.Graph().as_default():
        model = fixture_models.build(tf, kind)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, tf.train.latest_checkpoint(str(FIXTURES / kind)))
            assert sess.run(model["global_step"]) == 3
            np.testing.assert_allclose(sess.run(model["output"], {model["x"]: values["x_eval"]}),
                                       values["eval_output"], rtol=1e-5, atol=1e-6)
            feed = {model["x"]: values["x_train"], model["y"]: values["y_train"]}
            sess.run(model["train_op"], feed)
            np.testing.assert_allclose(sess.run(model["loss"], feed), values["loss_after_next_step"], rtol=1e-5)


TF_READ = """
import json, sys
import numpy as np
import tensorflow.compat.v1 as tf
reader = tf.train.load_checkpoint(sys.argv[1])
out = {}
for name, shape in tf.train.list_variables(sys.argv[1]):
    value = reader.get_tensor(name)
    out[name] = [str(value.dtype), list(value.shape),
                 [v.hex() if isinstance(v, bytes) else repr(v) for v in np.asarray(value).ravel().tolist()]]
print(json.dumps(out))
"""


def test_tensorflow_reads_tftk_checkpoints(tmp_path):
    arrays = {k: v for k, v in _arrays().items() if not k.startswith("many/")}
    io.save_bundle(tmp_path / "ck", arrays)
    script = tmp_path / "read.py"
    script.write_text(TF_READ)
    theirs = json.loads(run_script_in_tf(str(script), str(tmp_path / "ck")))
    assert sorted(theirs) == sorted(arrays)
    for name, value in arrays.items():
        array = np.asarray(value)
        dtype, shape, flat = theirs[name]
        assert shape == list(array.shape), name
        if array.dtype.kind == "O":
            assert flat == [v.hex() for v in array.ravel().tolist()]
        else:
            assert dtype == str(array.dtype), name
            assert flat == [repr(v) for v in array.ravel().tolist()], name


def test_saver_writes_v2_and_restores_old_npz_folders(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        with tf.Session() as sess:
            sess.run(v.initializer)
            new = tf.train.Saver().save(sess, str(tmp_path / "new"))
            old = tf.train.Saver(write_version=1).save(sess, str(tmp_path / "old"))
            sess.run(v.assign([0.0, 0.0]))
            assert Path(new + ".index").is_file() and Path(old + ".npz").is_file()
            for prefix in (new, old):
                tf.train.Saver().restore(sess, prefix)
                np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


# ---- bad input ----------------------------------------------------------------------------------

@pytest.fixture()
def small(tmp_path):
    prefix = tmp_path / "ck"
    write_bundle(prefix, {"a": np.arange(6, dtype=np.float32), "s": np.array([b"xy", b"z"], dtype=object)})
    return prefix


def _index(prefix):
    return Path(str(prefix) + ".index")


def _shard(prefix):
    return Path(str(prefix) + ".data-00000-of-00001")


@pytest.mark.parametrize("damage, names_file, message", [
    (lambda p: _index(p).write_bytes(_index(p).read_bytes()[:-10]), "index", "bad magic|shorter"),
    (lambda p: _index(p).write_bytes(_index(p).read_bytes()[:20]), "index", "shorter than a table footer"),
    (lambda p: _index(p).write_bytes(b"\x01" + _index(p).read_bytes()[1:]), "index", "checksum mismatch"),
    (lambda p: _shard(p).write_bytes(_shard(p).read_bytes()[:10]), "shard", "truncated"),
    (lambda p: _shard(p).write_bytes(b"\x07" + _shard(p).read_bytes()[1:]), "shard", "Checksum mismatch"),
    (lambda p: _shard(p).unlink(), "shard", "is missing"),
])
def test_damaged_checkpoint_is_one_clear_error_naming_the_file(small, damage, names_file, message):
    damage(small)
    path = _index(small) if names_file == "index" else _shard(small)
    with pytest.raises(DataLossError, match=message) as info:
        io.load_arrays(small)
    assert str(path) in str(info.value)


def test_oversized_length_fields_never_allocate(tmp_path):
    from tftk.proto.tensorflow import BundleEntryProto, BundleHeaderProto
    from tftk.train.sorted_table import build_table
    header = BundleHeaderProto(num_shards=1)
    huge = BundleEntryProto(dtype=1, offset=0, size=1 << 50)
    huge.shape.dim.add(size=1 << 48)
    _index(tmp_path / "ck").write_bytes(build_table([(b"", header.SerializeToString()),
                                                     (b"w", huge.SerializeToString())]))
    _shard(tmp_path / "ck").write_bytes(b"\x00" * 16)
    with pytest.raises(DataLossError, match=r"needs bytes \[0, 1125899906842624\) of 16"):
        io.load_arrays(tmp_path / "ck")


def test_cli_inspect_checkpoint_reads_both_formats_and_reports_damage(tmp_path, small):
    from typer.testing import CliRunner

    from tftk.cli import app
    runner = CliRunner()
    result = runner.invoke(app, ["inspect-checkpoint", str(FIXTURES / "mlp" / "model.ckpt-3")])
    assert result.exit_code == 0 and "dense/kernel (DT_FLOAT) [4,8]" in result.output
    _shard(small).write_bytes(b"\x07" + _shard(small).read_bytes()[1:])
    result = runner.invoke(app, ["inspect-checkpoint", str(small), "--all-tensors"])
    assert result.exit_code == 2 and str(_shard(small)) in result.output and "Traceback" not in result.output


def test_init_from_checkpoint_maps_scopes_and_names():
    prefix = str(FIXTURES / "mlp" / "model.ckpt-3")
    with tf.Graph().as_default():
        with tf.variable_scope("fine"):
            kernel = tf.get_variable("kernel", [4, 8])
        bias = tf.get_variable("b", [8])
        other = tf.get_variable("untouched", [2], initializer=tf.ones_initializer())
        tf.train.init_from_checkpoint(prefix, {"dense/": "fine/", "dense/bias": bias})
        with pytest.raises(ValueError, match="Tensor nope is not found"):
            tf.train.init_from_checkpoint(prefix, {"nope": other})
        with pytest.raises(ValueError, match="doesn't match with shape"):
            tf.train.init_from_checkpoint(prefix, {"out/bias": other})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(kernel), tf.train.load_variable(prefix, "dense/kernel"))
            np.testing.assert_array_equal(sess.run(bias), tf.train.load_variable(prefix, "dense/bias"))
            np.testing.assert_array_equal(sess.run(other), [1.0, 1.0])
