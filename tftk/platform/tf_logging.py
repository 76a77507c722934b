"""`tf.logging`: TF1's logging calls on Python's `logging`, under the logger named 'tensorflow'."""

from __future__ import annotations

import logging as _logging
import sys
from typing import Any

__all__ = ["DEBUG", "INFO", "WARN", "WARNING", "ERROR", "FATAL", "set_verbosity", "get_verbosity",
           "debug", "info", "warn", "warning", "error", "fatal", "log", "log_every_n", "log_first_n",
           "log_if", "vlog", "get_logger", "flush", "TaskLevelStatusMessage"]

DEBUG, INFO, WARN, ERROR, FATAL = _logging.DEBUG, _logging.INFO, _logging.WARN, _logging.ERROR, _logging.FATAL
WARNING = WARN

_logger = _logging.getLogger("tensorflow")
_counts: dict[Any, int] = {}


def get_logger() -> _logging.Logger:
    """The 'tensorflow' logger; on first use it prints `LEVEL:tensorflow:message` lines to stderr."""
    if not _logger.handlers:
        handler = _logging.StreamHandler(sys.stderr)
        handler.setFormatter(_logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
        _logger.addHandler(handler)
        _logger.propagate = False
        if _logger.level == _logging.NOTSET:
            _logger.setLevel(WARN)  # TF1's default: info and debug are hidden
    return _logger


def set_verbosity(v: int) -> None:
    """Show messages at level `v` (tf.logging.INFO, ...) and above."""
    get_logger().setLevel(v)


def get_verbosity() -> int:
    return get_logger().getEffectiveLevel()


def log(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg: Any, *args: Any, **kwargs: Any) -> None:
    log(DEBUG, msg, *args, **kwargs)


def info(msg: Any, *args: Any, **kwargs: Any) -> None:
    log(INFO, msg, *args, **kwargs)


def warning(msg: Any, *args: Any, **kwargs: Any) -> None:
    log(WARN, msg, *args, **kwargs)


warn = warning


def error(msg: Any, *args: Any, **kwargs: Any) -> None:
    log(ERROR, msg, *args, **kwargs)


def fatal(msg: Any, *args: Any, **kwargs: Any) -> None:
    log(FATAL, msg, *args, **kwargs)


def vlog(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    log(level, msg, *args, **kwargs)


def log_if(level: int, msg: Any, condition: bool, *args: Any) -> None:
    if condition:
        log(level, msg, *args)


def log_every_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Log on the 1st, (n+1)th, ... call from the same line of code."""
    caller = sys._getframe(1)
    key = (caller.f_code.co_filename, caller.f_lineno)
    count = _counts.get(key, 0)
    _counts[key] = count + 1
    log_if(level, msg, count % n == 0, *args)


def log_first_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Log only the first `n` calls from the same line of code."""
    caller = sys._getframe(1)
    key = (caller.f_code.co_filename, caller.f_lineno, "first")
    count = _counts.get(key, 0)
    _counts[key] = count + 1
    log_if(level, msg, count < n, *args)


def flush() -> None:
    """Flush every handler of the 'tensorflow' logger (TF 2.21's own flush raises NotImplementedError)."""
    for handler in _logger.handlers:
        handler.flush()


def TaskLevelStatusMessage(msg: Any) -> None:  # noqa: N802  (TF's spelling)
    """A task's status line: TF1 logs it at ERROR level so it always shows."""
    error(msg)
