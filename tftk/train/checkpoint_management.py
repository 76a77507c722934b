"""TF1's checkpoint file helpers beside the state file: a CheckpointState proto for a directory,
checkpoint mtimes, removing one checkpoint's files, and waiting for new checkpoints (evaluation loops).

Both formats TF1 wrote are understood: V2 (`prefix.index` + `prefix.data-*-of-*`) and V1 (the
prefix is the file itself); tftk's own `.npz` checkpoints count as well.
"""

from __future__ import annotations

import glob
import logging
import os
import time
from typing import Any, Callable, Iterator, Sequence

from tftk.train.checkpoint_io import data_path
from tftk.train.checkpoint_state import latest_checkpoint

__all__ = ["generate_checkpoint_state_proto", "get_checkpoint_mtimes", "remove_checkpoint",
           "checkpoints_iterator"]

_log = logging.getLogger(__name__)
_V1, _V2 = 1, 2  # SaverDef.CheckpointFormatVersion


def generate_checkpoint_state_proto(save_dir: str, model_checkpoint_path: str,
                                    all_model_checkpoint_paths: Sequence[str] | None = None,
                                    all_model_checkpoint_timestamps: Sequence[float] | None = None,
                                    last_preserved_timestamp: float | None = None) -> Any:
    """A CheckpointState proto naming `model_checkpoint_path` as the newest of `all_model_checkpoint_paths`.

    The newest is appended to the list unless it is already last. When `save_dir` is relative,
    relative paths are rewritten relative to it (as the state file inside it stores them).

    Raises:
        ValueError: timestamps were given but not one per checkpoint path.
    """
    from tftk.proto.tensorflow import CheckpointState

    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if all_model_checkpoint_timestamps and len(all_model_checkpoint_timestamps) != len(paths):
        raise ValueError(f"Checkpoint timestamps, if provided, must match checkpoint paths (got paths {paths} "
                         f"and timestamps {list(all_model_checkpoint_timestamps)})")
    if not os.path.isabs(save_dir):
        def relative(p: str) -> str:
            return p if os.path.isabs(p) else os.path.relpath(p, save_dir)
        model_checkpoint_path = relative(model_checkpoint_path)
        paths = [relative(p) for p in paths]
    return CheckpointState(model_checkpoint_path=model_checkpoint_path, all_model_checkpoint_paths=paths,
                           all_model_checkpoint_timestamps=all_model_checkpoint_timestamps,
                           last_preserved_timestamp=last_preserved_timestamp)


def _first_match_mtime(pattern: str) -> float | None:
    """Whole seconds, as TF's file system stat reports them (its mtime_nsec is a multiple of 1e9)."""
    matches = sorted(glob.glob(pattern))
    return float(os.stat(matches[0]).st_mtime_ns // 10**9) if matches else None


def get_checkpoint_mtimes(checkpoint_prefixes: Sequence[str]) -> list[float]:
    """Modification times (whole seconds since the epoch) of the checkpoints that exist among `checkpoint_prefixes`.

    A V2 checkpoint's time is its index file's, a V1 one's the file's (prefixes are glob patterns,
    as in TF). Missing checkpoints are skipped, so the list can be shorter than the prefixes.
    """
    mtimes = []
    for prefix in checkpoint_prefixes:
        prefix = os.fspath(prefix)
        for pattern in (prefix + ".index", prefix, glob.escape(str(data_path(prefix)))):
            mtime = _first_match_mtime(pattern)
            if mtime is not None:
                mtimes.append(mtime)
                break
    return mtimes


def _delete_matching(pattern: str) -> None:
    for path in glob.glob(pattern):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def remove_checkpoint(checkpoint_prefix: str, checkpoint_format_version: int = _V2,
                      meta_graph_suffix: str = "meta") -> None:
    """Delete the files of one checkpoint: its MetaGraphDef, and its index and data shards (V2) or
    its file (V1, the prefix as a glob pattern). Files already gone are not an error."""
    prefix = os.fspath(checkpoint_prefix)
    if checkpoint_format_version not in (_V1, _V2):
        raise ValueError(f"checkpoint_format_version must be SaverDef.V1 (1) or SaverDef.V2 (2), "
                         f"got {checkpoint_format_version!r}")
    base = prefix[:-len(".npz")] if prefix.endswith(".npz") else prefix
    _delete_matching(glob.escape(f"{base}.{meta_graph_suffix}"))
    if checkpoint_format_version == _V2:
        _delete_matching(glob.escape(prefix + ".index"))
        _delete_matching(glob.escape(prefix) + ".data-?????-of-?????")
        _delete_matching(glob.escape(str(data_path(prefix))))  # tftk's own single-file format
    else:
        _delete_matching(prefix)


def _wait_for_new_checkpoint(checkpoint_dir: str, last_checkpoint: str | None, timeout: float | None,
                             seconds_to_sleep: float = 1.0) -> str | None:
    """The directory's newest checkpoint once it differs from `last_checkpoint`; None after `timeout` s."""
    stop_time = None if timeout is None else time.time() + timeout
    while True:
        path = latest_checkpoint(checkpoint_dir)
        if path is not None and path != last_checkpoint:
            return path
        if stop_time is not None and time.time() + seconds_to_sleep > stop_time:
            return None
        time.sleep(seconds_to_sleep)


def checkpoints_iterator(checkpoint_dir: str, min_interval_secs: float = 0, timeout: float | None = None,
                         timeout_fn: Callable[[], bool] | None = None) -> Iterator[str]:
    """Yield each new newest checkpoint of `checkpoint_dir` as it appears (evaluation loops).

    Polls the state file once a second. After `timeout` seconds without a new checkpoint the
    iterator ends, unless `timeout_fn` is given: it is asked then (and after each checkpoint)
    whether training is over, and a false answer resumes the wait. At least `min_interval_secs`
    pass between two yields.
    """
    checkpoint_path = None
    while True:
        new_path = _wait_for_new_checkpoint(checkpoint_dir, checkpoint_path, timeout)
        if new_path:
            start = time.time()
            checkpoint_path = new_path
            yield checkpoint_path
            remaining = start + min_interval_secs - time.time()
            if remaining > 0:
                time.sleep(remaining)
        elif timeout_fn is None:
            _log.info("Timed-out waiting for a checkpoint (without timeout_fn).")
            return
        if timeout_fn is not None and timeout_fn():
            _log.info("Done. No new checkpoints will be generated.")
            return
