"""TF1's `checkpoint` state file (which checkpoints a directory holds, which is newest) and the Saver's
retention bookkeeping (max_to_keep, keep_checkpoint_every_n_hours).

The state file is TF1's CheckpointState text proto, so a TF1 reader and ours agree:

    model_checkpoint_path: "model.ckpt-3"
    all_model_checkpoint_paths: "model.ckpt-2"
    all_model_checkpoint_paths: "model.ckpt-3"
    all_model_checkpoint_timestamps: 1712345678.25
    ...

Paths inside the directory are stored relative to it (the folder can be moved); others stay absolute.
The file is replaced atomically, so a process killed mid-update leaves the previous version.
"""

from __future__ import annotations

import logging
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from tftk.atomic import atomic_write_text
from tftk.framework.errors import DataLossError
from tftk.user_input import UserInputError
from tftk.train.checkpoint_io import checkpoint_exists, data_path, delete_checkpoint

__all__ = [
    "STATE_FILENAME", "CheckpointState", "get_checkpoint_state", "latest_checkpoint",
    "update_checkpoint_state", "CheckpointRetention",
]

STATE_FILENAME = "checkpoint"
_log = logging.getLogger(__name__)


@dataclass
class CheckpointState:
    """TF1's CheckpointState proto; paths as absolute checkpoint prefixes once read."""

    model_checkpoint_path: str
    all_model_checkpoint_paths: list[str] = field(default_factory=list)
    all_model_checkpoint_timestamps: list[float] = field(default_factory=list)
    last_preserved_timestamp: float = 0.0


def get_checkpoint_state(checkpoint_dir: str | os.PathLike, latest_filename: str | None = None
                         ) -> CheckpointState | None:
    """The directory's checkpoint state with absolute paths, or None when it has no state file.

    Raises:
        DataLossError: the state file exists but is not a valid CheckpointState text proto.
    """
    folder = Path(checkpoint_dir).absolute()
    path = folder / (latest_filename or STATE_FILENAME)
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    state = _parse(text, path)
    state.model_checkpoint_path = _absolute(folder, state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [_absolute(folder, p) for p in state.all_model_checkpoint_paths]
    return state


def latest_checkpoint(checkpoint_dir: str | os.PathLike, latest_filename: str | None = None) -> str | None:
    """Prefix of the newest checkpoint, or None if there is no state file or its data file is gone."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    if not checkpoint_exists(state.model_checkpoint_path):
        _log.warning("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
        return None
    return state.model_checkpoint_path


def update_checkpoint_state(save_dir: str | os.PathLike, model_checkpoint_path: str | os.PathLike,
                            all_model_checkpoint_paths: Sequence[str | os.PathLike] | None = None,
                            latest_filename: str | None = None,
                            all_model_checkpoint_timestamps: Sequence[float] | None = None,
                            last_preserved_timestamp: float | None = None) -> None:
    """Atomically rewrite the directory's state file, naming `model_checkpoint_path` as the newest.

    As in TF1, `model_checkpoint_path` is appended to `all_model_checkpoint_paths` unless it is
    already the last entry. Relative paths are taken relative to the current directory.

    Raises:
        UserInputError: the checkpoint prefix is the state file's own path.
    """
    folder = Path(save_dir).absolute()
    state_path = folder / (latest_filename or STATE_FILENAME)
    newest = os.path.abspath(model_checkpoint_path)
    if Path(newest) == state_path:
        raise UserInputError(f"Save path '{model_checkpoint_path}' conflicts with path used for checkpoint state. "
                             "Please use a different save path.")
    paths = [os.path.abspath(p) for p in (all_model_checkpoint_paths or [])]
    if not paths or paths[-1] != newest:
        paths.append(newest)
    lines = [f'model_checkpoint_path: "{_escape(_stored(folder, newest))}"']
    lines += [f'all_model_checkpoint_paths: "{_escape(_stored(folder, p))}"' for p in paths]
    lines += [f"all_model_checkpoint_timestamps: {float(t)!r}" for t in all_model_checkpoint_timestamps or []]
    if last_preserved_timestamp is not None:
        lines.append(f"last_preserved_timestamp: {float(last_preserved_timestamp)!r}")
    atomic_write_text(state_path, "\n".join(lines) + "\n")


class CheckpointRetention:
    """Which checkpoints a Saver keeps, with TF1's rules; deletes the data files of those that fall out.

    `record(prefix)` after each save, then `update_checkpoint_state(dir, prefix, last_checkpoints,
    all_model_checkpoint_timestamps=timestamps, last_preserved_timestamp=...)`, then
    `delete_expired()` — TF1's Saver order, so the state file never names a deleted checkpoint.

    - max_to_keep None or 0: nothing is tracked or deleted; the state file names only the newest.
    - Otherwise the newest `max_to_keep` are kept. A checkpoint falling out is still preserved if it
      was saved after the next keep-every-n-hours mark; the mark then advances by n hours.
    """

    def __init__(self, max_to_keep: int | None = 5, keep_checkpoint_every_n_hours: float = 10000.0, *,
                 now: float | None = None, delete: Callable[[str], None] = delete_checkpoint):
        start = time.time() if now is None else now
        self.max_to_keep = max_to_keep
        self.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self.last_preserved_timestamp = start
        self._next_preserve_time = start + keep_checkpoint_every_n_hours * 3600
        self._kept: list[tuple[str, float]] = []
        self._expired: list[tuple[str, float]] = []
        self._delete = delete

    @property
    def last_checkpoints(self) -> list[str]:
        """Prefixes still kept, oldest first."""
        return [prefix for prefix, _ in self._kept]

    @property
    def timestamps(self) -> list[float]:
        """Save times of `last_checkpoints`."""
        return [stamp for _, stamp in self._kept]

    def record(self, prefix: str | os.PathLike, timestamp: float | None = None) -> None:
        """Note a checkpoint just saved; the oldest beyond max_to_keep is queued for deletion."""
        if not self.max_to_keep:
            return
        prefix = os.fspath(prefix)
        self._kept = [entry for entry in self._kept if entry[0] != prefix]
        self._kept.append((prefix, time.time() if timestamp is None else timestamp))
        if len(self._kept) > self.max_to_keep:
            self._expired.append(self._kept.pop(0))

    def delete_expired(self) -> list[str]:
        """Delete the data files of queued checkpoints, except those preserved by the n-hours rule."""
        deleted = []
        while self._expired:
            prefix, stamp = self._expired.pop(0)
            if stamp > self._next_preserve_time:
                self._next_preserve_time += self.keep_checkpoint_every_n_hours * 3600
                self.last_preserved_timestamp = stamp
                continue
            self._delete(prefix)
            deleted.append(prefix)
        return deleted

    def set_last_checkpoints_with_time(self, entries: Iterable[tuple[str, float]]) -> None:
        """Replace the kept list, e.g. from a state file's paths and timestamps after a restart."""
        self._kept = [(os.fspath(prefix), float(stamp)) for prefix, stamp in entries]

    def recover_last_checkpoints(self, prefixes: Iterable[str | os.PathLike]) -> None:
        """Keep-track of existing checkpoints among `prefixes`, timed by their data files' mtimes (TF1)."""
        self.set_last_checkpoints_with_time(
            (os.fspath(p), data_path(p).stat().st_mtime) for p in prefixes if checkpoint_exists(p))


# ---------------------------------------------------------------------------------------------
# The text proto: C-style escaped strings, doubles; comments and blank lines ignored.

_LINE = re.compile(r"^\s*(\w+)\s*:\s*(.*?)\s*$")
_STRING = re.compile(r'^"((?:[^"\\]|\\.)*)"$|^\'((?:[^\'\\]|\\.)*)\'$', re.S)
_ESCAPE = re.compile(rb"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))", re.S)
_SIMPLE_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b'"': b'"', b"'": b"'", b"\\": b"\\",
                   b"a": b"\a", b"b": b"\b", b"f": b"\f", b"v": b"\v", b"?": b"?"}
_STRING_FIELDS = {"model_checkpoint_path", "all_model_checkpoint_paths"}
_FLOAT_FIELDS = {"all_model_checkpoint_timestamps", "last_preserved_timestamp"}


def _parse(text: str, path: Path) -> CheckpointState:
    """A CheckpointState from its text format; DataLossError naming the file and line otherwise."""
    fields: dict[str, list] = {name: [] for name in _STRING_FIELDS | _FLOAT_FIELDS}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line)
        name = match.group(1) if match else None
        try:
            if name in _STRING_FIELDS:
                fields[name].append(_unquote(match.group(2)))
            elif name in _FLOAT_FIELDS:
                fields[name].append(float(match.group(2)))
            else:
                raise ValueError("not a CheckpointState field")
        except ValueError as exc:
            raise _corrupt(path, f"line {number} {line.strip()!r}: {exc}") from None
    if not fields["model_checkpoint_path"]:
        raise _corrupt(path, "no model_checkpoint_path")
    return CheckpointState(
        model_checkpoint_path=fields["model_checkpoint_path"][-1],
        all_model_checkpoint_paths=fields["all_model_checkpoint_paths"],
        all_model_checkpoint_timestamps=fields["all_model_checkpoint_timestamps"],
        last_preserved_timestamp=(fields["last_preserved_timestamp"] or [0.0])[-1],
    )


def _corrupt(path: Path, reason: str) -> DataLossError:
    return DataLossError(
        None, None, f"Checkpoint state file {path} is invalid ({reason}): fix or delete it; it only lists "
        "checkpoints, their .npz data files are untouched")


def _unquote(value: str) -> str:
    """A text-format string literal's content (C escapes, octal bytes as TF writes them, UTF-8)."""
    match = _STRING.match(value)
    if not match:
        raise ValueError("expected a quoted string")
    raw = (match.group(1) if match.group(1) is not None else match.group(2)).encode("utf-8")

    def replace(escape: re.Match) -> bytes:
        octal, hexa, char = escape.groups()
        if octal:
            return bytes([int(octal, 8) & 0xFF])
        if hexa:
            return bytes([int(hexa, 16)])
        if char not in _SIMPLE_ESCAPES:
            raise ValueError(f"unknown escape \\{char.decode('latin-1')}")
        return _SIMPLE_ESCAPES[char]

    return _ESCAPE.sub(replace, raw).decode("utf-8")


def _escape(value: str) -> str:
    """C-escape a string as protobuf's text format does (non-ASCII bytes as octal)."""
    out = []
    for byte in value.encode("utf-8"):
        char = chr(byte)
        if char in "\"'\\":
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif 0x20 <= byte < 0x7F:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)


def _stored(folder: Path, prefix: str) -> str:
    """How a prefix is written: relative to the folder when inside it, absolute otherwise."""
    relative = os.path.relpath(prefix, folder)
    return prefix if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def _absolute(folder: Path, stored: str) -> str:
    """A stored path made absolute against the folder."""
    return stored if os.path.isabs(stored) else os.path.normpath(os.path.join(folder, stored))
