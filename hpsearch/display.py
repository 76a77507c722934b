"""Progress of a search: a live rich table on a terminal, one plain line per event otherwise; the final ranking."""

from __future__ import annotations

import sys
from typing import IO

from hpsearch.records import TrialRecord, ranked

__all__ = ["SearchDisplay", "format_config", "ranking_table", "common_config"]

LIVE_ROWS = 20
TOP_ROWS = 10  # rows of the final ranking


def format_config(config: dict) -> str:
    """A compact one-line config: floats to 4 significant digits."""
    return " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(config.items()))


def _metric(record: TrialRecord) -> str:
    return "-" if record.metric is None else f"{record.metric:.6g}"


def _table(records: list[TrialRecord], title: str, hidden: frozenset[str] = frozenset()):
    from rich.table import Table

    table = Table(title=title)
    for column in ("trial", "config", "rung", "iterations", "metric", "status"):
        table.add_column(column)
    for r in records:
        shown = {key: value for key, value in r.config.items() if key not in hidden}
        table.add_row(r.trial_id, format_config(shown), str(r.rung), str(r.resource), _metric(r), r.status)
    return table


def common_config(records: list[TrialRecord]) -> dict:
    """The config entries every trial shares (printed once, not in every row)."""
    if len(records) < 2:
        return {}
    first = records[0].config
    return {key: value for key, value in first.items() if all(r.config.get(key, object()) == value for r in records)}


def ranking_table(records: list[TrialRecord], limit: int | None = TOP_ROWS) -> str:
    """The final ranked table as plain text (rich renders it, without colour codes): the best `limit` trials,
    the config entries they differ in, and one line for what all trials share."""
    from rich.console import Console

    ordered = ranked(records)
    common = common_config(ordered)
    console = Console(width=110, record=True, file=_Discard(), color_system=None)
    console.print(_table(ordered[:limit], "hpsearch: trials ranked (best first)", frozenset(common)))
    if limit is not None and len(ordered) > limit:
        console.print(f"... {len(ordered) - limit} more trials in the search's journal.jsonl")
    if common:
        console.print(f"every trial: {format_config(common)}")
    return console.export_text()


class _Discard:
    """A file that drops what it is given (rich records the text; we print it ourselves)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


class SearchDisplay:
    """Shows trial events as they happen; `live=None` picks the rich table when `out` is a terminal."""

    def __init__(self, out: IO[str] | None = None, live: bool | None = None):
        self.out = out or sys.stdout
        self.live = self.out.isatty() if live is None else live
        self._live = None

    def start(self) -> None:
        if self.live:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(console=Console(file=self.out), auto_refresh=False)
            self._live.start()

    def event(self, record: TrialRecord, line: str, records: dict[str, TrialRecord]) -> None:
        """Report one event about `record`; `records` is the whole search (for the live table)."""
        if self._live is None:
            print(f"[hpsearch] {record.trial_id} {line}", file=self.out, flush=True)
            return
        running = [r for r in records.values() if r.status == "running"]
        rest = ranked([r for r in records.values() if r.status != "running"])
        self._live.update(_table((running + rest)[:LIVE_ROWS], "hpsearch"), refresh=True)

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
