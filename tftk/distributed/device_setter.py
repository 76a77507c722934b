"""`replica_device_setter`: variables round-robin over the ps tasks, everything else on the worker."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from tftk.distributed.cluster import ClusterSpec
from tftk.framework.device import DeviceSpec

__all__ = ["replica_device_setter", "STANDARD_PS_OPS"]

STANDARD_PS_OPS = ("Variable", "VariableV2", "VarHandleOp", "AutoReloadVariable", "MutableHashTable",
                   "MutableHashTableOfTensors", "MutableDenseHashTable")


class _RoundRobinStrategy:
    """Task 0, 1, ..., n-1, 0, ... for successive variables."""

    def __init__(self, num_tasks: int):
        self._num_tasks = num_tasks
        self._next = 0

    def __call__(self, op: Any) -> int:
        task = self._next
        self._next = (self._next + 1) % self._num_tasks
        return task


def replica_device_setter(ps_tasks: int = 0, ps_device: str = "/job:ps", worker_device: str = "/job:worker",
                          merge_devices: bool = True, cluster: Any = None, ps_ops: Sequence[str] | None = None,
                          ps_strategy: Callable[[Any], int] | None = None) -> Callable[[Any], str] | None:
    """A device function for `tf.device`: ops of `ps_ops` types go to `ps_device` (task chosen by
    `ps_strategy`, round robin by default), all others to `worker_device`.

    With `cluster` (a ClusterSpec or its dict), the number of ps tasks is the size of ps_device's
    job; without ps tasks the result is None, which `tf.device` treats as "no placement".
    Devices already set by inner scopes win field by field (`merge_devices`).
    """
    if cluster is not None:
        spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
        ps_job = DeviceSpec.from_string(ps_device).job
        if ps_job not in spec.jobs:
            return None
        ps_tasks = spec.num_tasks(ps_job)
    if ps_tasks == 0:
        return None
    ps_types = frozenset(STANDARD_PS_OPS if ps_ops is None else ps_ops)
    strategy = ps_strategy if ps_strategy is not None else _RoundRobinStrategy(ps_tasks)
    ps_spec = DeviceSpec.from_string(ps_device or "")
    worker_spec = DeviceSpec.from_string(worker_device or "")

    def device_function(op: Any) -> str:
        if not merge_devices and op.device:
            return op.device
        current = DeviceSpec.from_string(op.device or "")
        if ps_device and op.type in ps_types:
            chosen = ps_spec
            if ps_spec.job and current.job in (None, ps_spec.job):
                chosen = DeviceSpec(**{**vars(ps_spec), "task": strategy(op)})
            return chosen.merge_from(current).to_string()
        return worker_spec.merge_from(current).to_string()

    return device_function
