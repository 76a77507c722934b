"""TF1's checkpoint state file and the Saver's retention rules (max_to_keep, keep_checkpoint_every_n_hours)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tftk.framework.errors import DataLossError
from tftk.user_input import UserInputError
from tftk.train.checkpoint_io import checkpoint_exists, save_arrays
from tftk.train.checkpoint_state import (
    CheckpointRetention, CheckpointState, get_checkpoint_state, latest_checkpoint, update_checkpoint_state,
)


def _save(prefix) -> str:
    save_arrays(prefix, {"w": np.ones(2)})
    return str(prefix)


def test_state_file_is_tf1_text_proto_with_relative_paths(tmp_path):
    newest = _save(tmp_path / "model.ckpt-2")
    update_checkpoint_state(tmp_path, newest, [str(tmp_path / "model.ckpt-1"), newest],
                            all_model_checkpoint_timestamps=[10.5, 20.25], last_preserved_timestamp=1.0)
    assert (tmp_path / "checkpoint").read_text() == (
        'model_checkpoint_path: "model.ckpt-2"\n'
        'all_model_checkpoint_paths: "model.ckpt-1"\n'
        'all_model_checkpoint_paths: "model.ckpt-2"\n'
        "all_model_checkpoint_timestamps: 10.5\n"
        "all_model_checkpoint_timestamps: 20.25\n"
        "last_preserved_timestamp: 1.0\n")
    assert get_checkpoint_state(tmp_path) == CheckpointState(
        str(tmp_path / "model.ckpt-2"), [str(tmp_path / "model.ckpt-1"), str(tmp_path / "model.ckpt-2")],
        [10.5, 20.25], 1.0)


def test_paths_outside_the_directory_stay_absolute(tmp_path):
    run = tmp_path / "run"
    outside = _save(tmp_path / "elsewhere" / "model.ckpt-1")
    update_checkpoint_state(run, outside)
    assert f'model_checkpoint_path: "{outside}"' in (run / "checkpoint").read_text()
    assert latest_checkpoint(run) == outside


def test_newest_is_appended_to_all_paths_unless_last(tmp_path):
    update_checkpoint_state(tmp_path, tmp_path / "b", [tmp_path / "a"])
    assert get_checkpoint_state(tmp_path).all_model_checkpoint_paths == [str(tmp_path / "a"), str(tmp_path / "b")]
    update_checkpoint_state(tmp_path, tmp_path / "b", [tmp_path / "a", tmp_path / "b"])
    assert get_checkpoint_state(tmp_path).all_model_checkpoint_paths == [str(tmp_path / "a"), str(tmp_path / "b")]


def test_relative_directory_gives_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _save("logs/model.ckpt-5")
    update_checkpoint_state("logs", "logs/model.ckpt-5")
    assert (tmp_path / "logs" / "checkpoint").read_text().startswith('model_checkpoint_path: "model.ckpt-5"\n')
    assert latest_checkpoint("logs") == str(tmp_path / "logs" / "model.ckpt-5")


def test_awkward_paths_round_trip(tmp_path):
    weird = str(tmp_path / 'mo"del \\ é\tckpt-1')
    update_checkpoint_state(tmp_path, weird)
    assert "\\303\\251" in (tmp_path / "checkpoint").read_text()  # non-ASCII as octal bytes, like TF
    assert get_checkpoint_state(tmp_path).model_checkpoint_path == weird


def test_reads_a_file_written_by_tensorflow(tmp_path):
    (tmp_path / "checkpoint").write_text(
        'model_checkpoint_path: "model.ckpt-20"\n'
        'all_model_checkpoint_paths: "model.ckpt-10"\n'
        'all_model_checkpoint_paths: "model.ckpt-20"\n'
        "all_model_checkpoint_timestamps: 1554154213.8977087\n"
        "all_model_checkpoint_timestamps: 1554154250.123\n"
        "last_preserved_timestamp: 1554154200.5\n")
    state = get_checkpoint_state(tmp_path)
    assert state.model_checkpoint_path == str(tmp_path / "model.ckpt-20")
    assert state.all_model_checkpoint_timestamps == [1554154213.8977087, 1554154250.123]
    assert state.last_preserved_timestamp == 1554154200.5


def test_no_state_file_means_none(tmp_path):
    assert get_checkpoint_state(tmp_path) is None
    assert latest_checkpoint(tmp_path) is None
    assert latest_checkpoint(tmp_path / "does-not-exist") is None


def test_latest_is_none_when_its_data_file_is_gone(tmp_path):
    update_checkpoint_state(tmp_path, _save(tmp_path / "model.ckpt-1"))
    assert latest_checkpoint(tmp_path) == str(tmp_path / "model.ckpt-1")
    (tmp_path / "model.ckpt-1.npz").unlink()
    assert latest_checkpoint(tmp_path) is None


def test_custom_state_filename(tmp_path):
    update_checkpoint_state(tmp_path, _save(tmp_path / "m-1"), latest_filename="checkpoint_best")
    assert latest_checkpoint(tmp_path) is None
    assert latest_checkpoint(tmp_path, "checkpoint_best") == str(tmp_path / "m-1")


@pytest.mark.parametrize("text, reason", [
    ('model_checkpoint_path: "a\n', "line 1"),
    ('model_checkpoint_path: "a"\nbogus_field: 3\n', "line 2"),
    ('all_model_checkpoint_paths: "a"\n', "no model_checkpoint_path"),
    ('model_checkpoint_path: "a"\nall_model_checkpoint_timestamps: soon\n', "line 2"),
])
def test_invalid_state_file_names_file_and_line(tmp_path, text, reason):
    (tmp_path / "checkpoint").write_text(text)
    with pytest.raises(DataLossError, match=rf"checkpoint is invalid \({reason}.*fix or delete it"):
        get_checkpoint_state(tmp_path)


def test_save_path_may_not_be_the_state_file(tmp_path):
    with pytest.raises(UserInputError, match="conflicts with path used for checkpoint state"):
        update_checkpoint_state(tmp_path, tmp_path / "checkpoint")


# --- Retention ------------------------------------------------------------------------------------

def test_max_to_keep_deletes_oldest_after_state_update(tmp_path):
    keep = CheckpointRetention(max_to_keep=2, now=0.0)
    deleted = []
    for step in range(1, 5):
        prefix = _save(tmp_path / f"model.ckpt-{step}")
        keep.record(prefix, timestamp=float(step))
        update_checkpoint_state(tmp_path, prefix, keep.last_checkpoints,
                                all_model_checkpoint_timestamps=keep.timestamps)
        deleted += keep.delete_expired()
    assert deleted == [str(tmp_path / "model.ckpt-1"), str(tmp_path / "model.ckpt-2")]
    assert [checkpoint_exists(tmp_path / f"model.ckpt-{s}") for s in range(1, 5)] == [False, False, True, True]
    state = get_checkpoint_state(tmp_path)
    assert state.all_model_checkpoint_paths == [str(tmp_path / "model.ckpt-3"), str(tmp_path / "model.ckpt-4")]
    assert state.all_model_checkpoint_timestamps == [3.0, 4.0]


@pytest.mark.parametrize("max_to_keep", [None, 0])
def test_max_to_keep_none_keeps_every_file_but_lists_only_newest(tmp_path, max_to_keep):
    keep = CheckpointRetention(max_to_keep=max_to_keep, now=0.0)
    for step in range(1, 4):
        prefix = _save(tmp_path / f"m-{step}")
        keep.record(prefix, timestamp=float(step))
        update_checkpoint_state(tmp_path, prefix, keep.last_checkpoints)
        assert keep.delete_expired() == []
    assert all(checkpoint_exists(tmp_path / f"m-{s}") for s in range(1, 4))
    assert get_checkpoint_state(tmp_path).all_model_checkpoint_paths == [str(tmp_path / "m-3")]


def test_resaving_the_same_prefix_does_not_duplicate_it():
    keep = CheckpointRetention(max_to_keep=3, now=0.0, delete=lambda p: None)
    for prefix, stamp in [("a", 1.0), ("b", 2.0), ("a", 3.0)]:
        keep.record(prefix, stamp)
    assert keep.last_checkpoints == ["b", "a"] and keep.timestamps == [2.0, 3.0]


def test_keep_every_n_hours_preserves_checkpoints_past_each_mark():
    """One save every 1000 s, max_to_keep=2, one preserved per hour: the first checkpoint saved after
    each hour mark survives falling out of the window; the rest are deleted."""
    deleted: list[str] = []
    keep = CheckpointRetention(max_to_keep=2, keep_checkpoint_every_n_hours=1.0, now=0.0, delete=deleted.append)
    for t in range(0, 12000, 1000):
        keep.record(f"ckpt-{t}", float(t))
        keep.delete_expired()
    # Fell out so far: 0 .. 9000. Marks at 3600, 7200, 10800: 4000 and 8000 are preserved.
    assert deleted == [f"ckpt-{t}" for t in (0, 1000, 2000, 3000, 5000, 6000, 7000, 9000)]
    assert keep.last_preserved_timestamp == 8000.0
    assert keep.last_checkpoints == ["ckpt-10000", "ckpt-11000"]


def test_recover_last_checkpoints_skips_missing_and_uses_mtimes(tmp_path):
    present = _save(tmp_path / "m-1")
    os.utime(tmp_path / "m-1.npz", (1234.0, 1234.0))
    keep = CheckpointRetention(max_to_keep=5)
    keep.recover_last_checkpoints([present, str(tmp_path / "m-0")])
    assert keep.last_checkpoints == [present] and keep.timestamps == [1234.0]
