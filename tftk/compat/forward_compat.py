"""`tf.compat.forward_compatible`: is a date inside the GraphDef forward-compatibility window?

Programs ask it before emitting a graph feature added on a date: True once the horizon (the date
the library's consumers are known to understand, plus `TF_FORWARD_COMPATIBILITY_DELTA_DAYS`) is
past that date. tftk reads and writes TF 2.21's graphs, so it uses TF 2.21's horizon.
"""

from __future__ import annotations

import datetime
import os

_HORIZON = datetime.date(2026, 1, 16)  # TF 2.21's forward-compatibility horizon
_DELTA_DAYS_ENV = "TF_FORWARD_COMPATIBILITY_DELTA_DAYS"


def _date_number(year: int, month: int, day: int) -> int:
    """TF's packing of a date into one comparable int (day in 5 bits, month in 4)."""
    return (year << 9) | (month << 5) | day


def _horizon() -> datetime.date:
    delta = os.environ.get(_DELTA_DAYS_ENV)
    if delta is None:
        return _HORIZON
    try:
        days = int(delta)
    except ValueError:
        raise ValueError(f"{_DELTA_DAYS_ENV}={delta!r} is not a whole number of days; unset it or give e.g. 30")
    return _HORIZON + datetime.timedelta(days=days)


def forward_compatible(year: int, month: int, day: int) -> bool:
    """True when graphs may use features added on (year, month, day): the horizon is after it."""
    horizon = _horizon()
    return _date_number(horizon.year, horizon.month, horizon.day) > _date_number(year, month, day)
