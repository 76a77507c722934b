"""Injected disk faults: writes under one folder fail with EACCES (a read-only folder, which root's chmod
cannot make) or ENOSPC (a full disk), as the OS would report them."""

from __future__ import annotations

import builtins
import contextlib
import errno
import io
import os
from pathlib import Path
from typing import Iterator

import pytest

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


@contextlib.contextmanager
def failing_writes(monkeypatch: pytest.MonkeyPatch, folder: Path, code: int = errno.EACCES) -> Iterator[None]:
    """Every open-for-writing and mkdir inside `folder` (the folder itself included) raises OSError(code)."""
    folder = Path(folder).absolute()
    real_open, real_os_open, real_mkdir = builtins.open, os.open, os.mkdir

    def inside(path) -> bool:
        if isinstance(path, int):
            return False
        target = Path(os.fsdecode(path)).absolute()
        return target == folder or folder in target.parents

    def fail(path):
        raise OSError(code, os.strerror(code), os.fsdecode(path))

    def fake_open(file, mode="r", *args, **kwargs):
        if any(flag in mode for flag in "wax+") and inside(file):
            fail(file)
        return real_open(file, mode, *args, **kwargs)

    def fake_os_open(path, flags, *args, **kwargs):
        if flags & WRITE_FLAGS and inside(path):
            fail(path)
        return real_os_open(path, flags, *args, **kwargs)

    def fake_mkdir(path, *args, **kwargs):
        if inside(path):
            fail(path)
        return real_mkdir(path, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(builtins, "open", fake_open)
        patch.setattr(io, "open", fake_open)
        patch.setattr(os, "open", fake_os_open)
        patch.setattr(os, "mkdir", fake_mkdir)
        yield


def tree(folder: Path) -> dict[str, bytes]:
    """Every file and folder under `folder` with its content (folders: b'<dir>')."""
    return {str(p.relative_to(folder)): (b"<dir>" if p.is_dir() else p.read_bytes())
            for p in sorted(Path(folder).rglob("*"))}
