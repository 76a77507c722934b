"""generate_checkpoint_state_proto, get_checkpoint_mtimes, remove_checkpoint against real TF; checkpoints_iterator by behaviour."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

import tftk as tf
from tests.tf_oracle import assert_same_outputs, both_succeeded, run_in_tf

STATE_PROTO_ARGS = {
    "relative_dir_appends_newest": "'ck', 'ck/m-3', ['ck/m-1', 'ck/m-2']",
    "relative_dir_keeps_absolute": "'ck', '/abs/m-3', ['/abs/m-3']",
    "absolute_dir_keeps_paths": "'/abs/ck', 'ck/m-3', None, [1.5], 7.25",
    "timestamps_must_match_paths": "'ck', 'ck/m-3', ['ck/m-1'], [1.0]",
}


def _state_proto_snippet(args: str) -> str:
    return (f"state = tf.train.generate_checkpoint_state_proto({args})\n"
            "outputs = {'newest': np.array(state.model_checkpoint_path),\n"
            "           'all': np.array(list(state.all_model_checkpoint_paths) + ['<end>']),\n"
            "           'times': np.array(list(state.all_model_checkpoint_timestamps), np.float64),\n"
            "           'preserved': np.array(state.last_preserved_timestamp),\n"
            "           'text': np.array(str(state))}\n")


# Save one checkpoint, then remove it or another one; what is left in the folder is the result.
_SAVE = ("import tempfile, os\n"
         "folder = tempfile.mkdtemp()\n"
         "v = tf.Variable([1.0, 2.0], name='v')\n"
         "saver = tf.train.Saver()\n"
         "with tf.Session() as sess:\n"
         "    sess.run(tf.global_variables_initializer())\n"
         "    first = saver.save(sess, os.path.join(folder, 'model'), global_step=1)\n"
         "    second = saver.save(sess, os.path.join(folder, 'model'), global_step=2)\n")
FILE_CASES = {
    "remove_v2_checkpoint": _SAVE + "tf.train.remove_checkpoint(first)\n",
    "remove_keeps_meta_with_other_suffix": _SAVE + "tf.train.remove_checkpoint(second, meta_graph_suffix='other')\n",
    "remove_missing_checkpoint_is_quiet": _SAVE + "tf.train.remove_checkpoint(first + '0')\n",
    "mtimes_skip_missing": _SAVE + "times = tf.train.get_checkpoint_mtimes([first, first + '9', second])\n",
}


def _file_snippet(source: str) -> str:
    return source + ("outputs = {'left': np.array(sorted(os.listdir(folder)))}\n"
                     "if 'times' in dir():\n"
                     "    stats = [float(int(os.stat(p + '.index').st_mtime)) for p in (first, second)]\n"
                     "    outputs['times_match'] = np.array(times == stats)\n")


CASES = {**{name: (_state_proto_snippet(args), {}) for name, args in STATE_PROTO_ARGS.items()},
         **{name: (_file_snippet(src), {}) for name, src in FILE_CASES.items()}}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(set(CASES) - {"timestamps_must_match_paths"}))
def test_matches_tensorflow(oracle, name):
    assert_same_outputs(*both_succeeded(oracle, CASES, name))


def test_mismatched_timestamps_raise_like_tensorflow(oracle):
    from tests.tf_oracle import run_in_tftk
    expected = oracle["timestamps_must_match_paths"]
    got = run_in_tftk(*CASES["timestamps_must_match_paths"])
    assert expected.error == got.error == "ValueError"
    assert "must match checkpoint paths" in got.message


def test_remove_checkpoint_rejects_unknown_format(tmp_path):
    with pytest.raises(ValueError, match="checkpoint_format_version must be"):
        tf.train.remove_checkpoint(str(tmp_path / "m"), checkpoint_format_version=7)


def test_remove_v1_checkpoint_deletes_the_prefix_file_and_meta(tmp_path):
    for name in ("model.ckpt", "model.ckpt.meta", "model.ckpt-keep"):
        (tmp_path / name).write_bytes(b"x")
    tf.train.remove_checkpoint(str(tmp_path / "model.ckpt"), checkpoint_format_version=1)
    assert sorted(os.listdir(tmp_path)) == ["model.ckpt-keep"]


def _save(folder, step: int) -> str:
    with tf.Graph().as_default():
        v = tf.Variable(float(step), name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            return saver.save(sess, os.path.join(folder, "model"), global_step=step)


def test_checkpoints_iterator_yields_each_new_checkpoint_then_times_out(tmp_path):
    first = _save(str(tmp_path), 1)
    seen = []
    for path in tf.train.checkpoints_iterator(str(tmp_path), timeout=2.5):
        seen.append(path)
        if len(seen) == 1:
            threading.Timer(0.3, _save, (str(tmp_path), 2)).start()
    assert seen == [first, str(tmp_path / "model-2")]


def test_checkpoints_iterator_asks_timeout_fn_whether_to_keep_waiting(tmp_path):
    answers = iter([False, True])
    calls = []

    def training_over() -> bool:
        calls.append(time.time())
        return next(answers)

    assert list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0.1, timeout_fn=training_over)) == []
    assert len(calls) == 2
