"""The search's append-only journal: one JSON object per line, flushed and fsynced per event."""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["Journal", "read_journal"]


def read_journal(path: Path) -> list[dict]:
    """Every complete event in `path`; a torn last line (the writer was killed mid-write) is dropped."""
    if not path.exists():
        return []
    events = []
    lines = path.read_bytes().split(b"\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            if number == len(lines):  # unterminated last line: an interrupted append
                break
            from tftk.framework.errors import DataLossError  # the engine's errors load only on a corrupt journal

            raise DataLossError(message=f"{path}:{number}: corrupt journal line; the search state cannot be replayed") from None
    return events


class Journal:
    """Appends events durably; opening it cuts a torn last line so new events start on a line of their own."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            data = path.read_bytes()
            end = data.rfind(b"\n") + 1
            if end != len(data):
                with open(path, "r+b") as handle:
                    handle.truncate(end)
        self._handle = open(path, "a", encoding="utf-8")

    def append(self, event: dict) -> None:
        self._handle.write(json.dumps(event, sort_keys=True) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()
