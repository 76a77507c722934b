"""`DeviceSpec`: the parts of a device name (`/job:ps/replica:0/task:1/device:CPU:0`), parsed and merged.

Nested `tf.device` scopes merge field by field (inner fields win), and placement in a cluster
reads the job and task of an op's device from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

__all__ = ["DeviceSpec", "merge_device_strings"]

_SHORT_DEVICE = re.compile(r"^(cpu|gpu):(\d+|\*)$", re.IGNORECASE)


@dataclass(frozen=True)
class DeviceSpec:
    """A (possibly partial) device name; None fields are unspecified."""

    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None

    @classmethod
    def from_string(cls, spec: str) -> "DeviceSpec":
        """Parse `/job:J/replica:R/task:T/device:TYPE:I`, any parts in any order, or `/cpu:0`-style."""
        fields: dict = {}
        for part in (p for p in (spec or "").split("/") if p):
            key, _, value = part.partition(":")
            short = _SHORT_DEVICE.match(part)
            if short:
                fields["device_type"] = short.group(1).upper()
                fields["device_index"] = None if short.group(2) == "*" else int(short.group(2))
            elif key == "job" and value:
                fields["job"] = value
            elif key in ("replica", "task") and value.isdigit():
                fields[key] = int(value)
            elif key == "device" and value:
                kind, _, index = value.partition(":")
                fields["device_type"] = kind.upper()
                fields["device_index"] = int(index) if index.isdigit() else None
            else:
                raise ValueError(f"Unknown attribute {part!r} in device specification {spec!r}: expected "
                                 "/job:NAME, /replica:N, /task:N, /device:TYPE:N or /cpu:N")
        return cls(**fields)

    def to_string(self) -> str:
        parts = []
        if self.job is not None:
            parts.append(f"/job:{self.job}")
        if self.replica is not None:
            parts.append(f"/replica:{self.replica}")
        if self.task is not None:
            parts.append(f"/task:{self.task}")
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            parts.append(f"/device:{self.device_type}:{index}")
        return "".join(parts)

    def merge_from(self, other: "DeviceSpec") -> "DeviceSpec":
        """This spec with every field `other` specifies replaced by other's."""
        return replace(self, **{k: v for k, v in vars(other).items() if v is not None})

    def __str__(self) -> str:
        return self.to_string()


def merge_device_strings(outer: str, inner: str) -> str:
    """The device of an op in scope `inner` nested in `outer`: inner's fields win.

    An empty side leaves the other string exactly as written (so `/cpu:0` stays `/cpu:0`).
    """
    if not outer:
        return inner
    if not inner:
        return outer
    return DeviceSpec.from_string(outer).merge_from(DeviceSpec.from_string(inner)).to_string()
