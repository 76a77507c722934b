"""Saver: seed 000's examples, bit-exact round trips, retention, subset restore, clear errors, and a
SIGKILL during Saver.save that must leave the previous checkpoint and the state file usable."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tftk.framework.errors import DataLossError, FailedPreconditionError, InvalidArgumentError, NotFoundError
from tftk.train.checkpoint_io import data_path, list_variables, print_tensors_in_checkpoint_file
from tftk.train.checkpoint_state import get_checkpoint_state, latest_checkpoint
from tftk.train.saver import Saver


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


def _two_variables():
    return tf.Variable(1.0, name="v1"), tf.Variable(2.0, name="v2")


def test_seed_000_dict_saver_stores_keys_and_swaps_on_restore(tmp_path, capsys):
    v1, v2 = _two_variables()
    saver = Saver({"variable_1": v1, "variable_2": v2})
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        assert saver.save(sess, str(tmp_path / "test-ckpt/model-2")) == str(tmp_path / "test-ckpt/model-2")
    print_tensors_in_checkpoint_file(str(tmp_path / "test-ckpt/model-2"), None, True)
    assert capsys.readouterr().out.splitlines()[:4] == [
        "tensor_name:  variable_1", "1.0", "tensor_name:  variable_2", "2.0"]

    tf.reset_default_graph()
    v1, v2 = _two_variables()
    saver = Saver({"variable_1": v2, "variable_2": v1})
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        saver.restore(sess, str(tmp_path / "test-ckpt/model-2"))
        print(sess.run(v1), sess.run(v2))
    assert capsys.readouterr().out == "2.0 1.0\n"


def test_list_saver_uses_op_names(tmp_path):
    v1, v2 = _two_variables()
    with tf.variable_scope("layer"):
        w = tf.get_variable("w", shape=[2], initializer=tf.zeros_initializer())
    saver = Saver([v1, v2, w])
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        prefix = saver.save(sess, str(tmp_path / "m"))
    assert [(n, s) for n, s, _ in list_variables(prefix)] == [("layer/w", (2,)), ("v1", ()), ("v2", ())]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_round_trip_is_bit_identical(tmp_path, dtype):
    rng = np.random.default_rng(7)
    value = rng.standard_normal((3, 4)).astype(dtype) if dtype != np.bool_ else rng.random((3, 4)) > 0.5
    if dtype == np.float32:
        value[0, 0] = np.float32(np.nan)  # NaN payloads survive too
    var = tf.Variable(value, name="x")
    saver = Saver()
    with tf.Session() as sess:
        sess.run(var.initializer)
        prefix = saver.save(sess, str(tmp_path / "ckpt"), global_step=3)
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        restored = sess.run(var)
    assert prefix.endswith("ckpt-3")
    assert restored.dtype == value.dtype and restored.tobytes() == value.tobytes()


def test_global_step_variable_names_the_file_and_state_tracks_max_to_keep(tmp_path):
    step = tf.Variable(0, name="global_step", trainable=False)
    bump = tf.assign_add(step, 1)
    saver = Saver(max_to_keep=2)
    base = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(step.initializer)
        saved = []
        for _ in range(4):
            sess.run(bump)
            saved.append(saver.save(sess, base, global_step=step))
    assert saved == [f"{base}-{i}" for i in (1, 2, 3, 4)]
    assert sorted(p.name for p in tmp_path.iterdir()) == [  # TF's V2 files + .meta (tftk wrote .npz before)
        "checkpoint", "model.ckpt-3.data-00000-of-00001", "model.ckpt-3.index", "model.ckpt-3.meta",
        "model.ckpt-4.data-00000-of-00001", "model.ckpt-4.index", "model.ckpt-4.meta"]
    state = get_checkpoint_state(tmp_path)
    assert state.model_checkpoint_path == f"{base}-4"
    assert state.all_model_checkpoint_paths == [f"{base}-3", f"{base}-4"]
    assert saver.last_checkpoints == [f"{base}-3", f"{base}-4"]
    assert latest_checkpoint(tmp_path) == f"{base}-4"


def test_restore_subset_after_initialising_the_rest(tmp_path):
    v1, v2 = _two_variables()
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        sess.run([tf.assign(v1, 10.0), tf.assign(v2, 20.0)])
        prefix = Saver().save(sess, str(tmp_path / "all"))
    subset = Saver([v1])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        subset.restore(sess, prefix)
        assert sess.run([v1, v2]) == [10.0, 2.0]


def test_restore_adds_no_ops_and_reuses_one_plan(tmp_path):
    v1, _ = _two_variables()
    saver = Saver()
    graph = tf.get_default_graph()
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        prefix = saver.save(sess, str(tmp_path / "m"))
        saver.restore(sess, prefix)
        before = (len(graph.get_operations()), graph.version, len(sess._plans))
        for _ in range(3):
            saver.restore(sess, prefix)
            saver.save(sess, str(tmp_path / "m"))
        assert (len(graph.get_operations()), graph.version, len(sess._plans)) == before


def test_restore_into_uninitialised_session_then_train_on(tmp_path):
    v1, v2 = _two_variables()
    total = v1 + v2
    saver = Saver()
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        prefix = saver.save(sess, str(tmp_path / "m"))
    with tf.Session() as sess:
        with pytest.raises(FailedPreconditionError):
            sess.run(total)
        saver.restore(sess, prefix)
        assert sess.run(total) == 3.0


def test_save_of_uninitialised_variable_names_it(tmp_path):
    _two_variables()
    saver = Saver()
    with tf.Session() as sess:
        with pytest.raises(FailedPreconditionError, match="v1"):
            saver.save(sess, str(tmp_path / "m"))
    assert not any(tmp_path.iterdir()) or not (tmp_path / "checkpoint").exists()


def test_no_variables_is_an_error_unless_allowed():
    with pytest.raises(ValueError, match="No variables to save"):
        Saver()
    assert Saver(allow_empty=True).save(None, "unused") is None


def test_duplicate_names_are_rejected():
    v1, _ = _two_variables()
    with pytest.raises(ValueError, match="same name: v1"):
        Saver([v1, v1])


# ---- errors name the file and the variable ------------------------------------------------------


@pytest.fixture()
def saved(tmp_path):
    v1, v2 = _two_variables()
    saver = Saver()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    prefix = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=5)
    sess.run([tf.assign(v1, -1.0), tf.assign(v2, -2.0)])
    yield saver, sess, prefix, (v1, v2)
    sess.close()


def _untouched(sess, variables):
    assert sess.run(list(variables)) == [-1.0, -2.0]


def test_missing_checkpoint_names_the_path(saved, tmp_path):
    saver, sess, _, variables = saved
    with pytest.raises(NotFoundError, match=re.escape(str(tmp_path / "nope")) + ".*latest_checkpoint"):
        saver.restore(sess, str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="None"):
        saver.restore(sess, None)
    _untouched(sess, variables)


def test_truncated_checkpoint_is_data_loss_naming_the_file(saved):
    saver, sess, prefix, variables = saved
    path = data_path(prefix)
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(DataLossError, match=re.escape(str(path))):
        saver.restore(sess, prefix)
    _untouched(sess, variables)


def test_corrupted_checkpoint_is_data_loss_naming_the_file(saved):
    saver, sess, prefix, variables = saved
    path = data_path(prefix)
    raw = bytearray(path.read_bytes())
    raw[0] ^= 0xFF  # first byte of v1's float data in the V2 data shard (names are stored sorted)
    path.write_bytes(bytes(raw))
    with pytest.raises(DataLossError, match=re.escape(str(path))):
        saver.restore(sess, prefix)
    _untouched(sess, variables)


def test_missing_key_names_key_variable_and_checkpoint(saved):
    _, sess, prefix, (v1, v2) = saved
    other = Saver({"v1": v1, "renamed": v2})
    with pytest.raises(NotFoundError, match=r"Key 'renamed' \(for variable v2\) not found in checkpoint .*model.ckpt-5"):
        other.restore(sess, prefix)
    _untouched(sess, (v1, v2))  # nothing is written when any key fails


def test_shape_mismatch_names_variable_and_checkpoint(saved):
    _, sess, prefix, (v1, v2) = saved
    wide = tf.Variable(np.zeros(3, np.float32), name="wide")
    sess.run(wide.initializer)
    with pytest.raises(InvalidArgumentError, match=r"restoring variable wide from key 'v1' of checkpoint "
                                                   r".*model.ckpt-5.*shape \(3,\).*holds \[\]"):
        Saver({"v1": wide}).restore(sess, prefix)


# ---- SIGKILL during Saver.save -----------------------------------------------------------------

TRAINER = """
import sys
import numpy as np
import tftk as tf
from tftk.train.saver import Saver

folder = sys.argv[1]
w = tf.Variable(np.zeros(1 << 20, np.float32), name="w")
step = tf.Variable(0, name="global_step")
train = tf.group(tf.assign_add(w, np.ones(1 << 20, np.float32)), tf.assign_add(step, 1))
saver = Saver(max_to_keep=2)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    while True:
        sess.run(train)
        saver.save(sess, folder + "/model.ckpt", global_step=step)
        print(sess.run(step), flush=True)
"""


def test_kill_during_saver_save_keeps_previous_checkpoint_and_state(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", TRAINER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "1", "trainer died before its first checkpoint"
        temp = re.compile(r"^\.model\.ckpt-\d+\.(npz|index|data-\d+-of-\d+)\..*\.tmp$")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(temp.match(n) for n in os.listdir(tmp_path)):
            pass
        proc.send_signal(signal.SIGKILL)
        killed_mid_save = any(temp.match(n) for n in os.listdir(tmp_path))
    finally:
        proc.kill()
        proc.wait()
    assert killed_mid_save, "the saver never showed a temp file to be killed on"

    newest = latest_checkpoint(tmp_path)
    assert newest is not None and not newest.endswith(".tmp")
    saved_step = int(newest.rsplit("-", 1)[1])
    w = tf.Variable(np.zeros(1 << 20, np.float32), name="w")
    step = tf.Variable(0, name="global_step")
    with tf.Session() as sess:
        Saver().restore(sess, newest)
        w_value, step_value = sess.run([w, step])
    assert step_value == saved_step and np.all(w_value == saved_step)
    for prefix in get_checkpoint_state(tmp_path).all_model_checkpoint_paths:
        assert Path(prefix + ".index").is_file() and Path(prefix + ".data-00000-of-00001").is_file()
