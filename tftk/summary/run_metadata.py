"""`tf.RunOptions` and `tf.RunMetadata`: per-node timings and output sizes of one traced Session.run.

tensorboardX ships no StepStats or RunMetadata protos, so this module declares the subset of
TensorFlow's step_stats.proto / config.proto that TensorBoard reads, with TensorFlow's field
numbers: the bytes we write decode with TensorFlow's own classes (TensorBoard's graph tab shows
each node's compute time, memory and output shapes from them).
"""

from __future__ import annotations

import threading
from typing import Iterable

import numpy as np
from google.protobuf import text_format
from tensorboardX.proto import tensor_shape_pb2, types_pb2  # noqa: F401  (register the imported files)

from tftk.proto.declare import declare_file
from tftk.summary.tensor_proto import datatype_enum, shape_proto

__all__ = ["RunOptions", "RunMetadata", "StepStats", "NodeExecStats", "RunMetadataProto", "CPU_DEVICE"]

CPU_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
_ALLOCATOR = "cpu"

# message -> fields (name, number, type, *flags); numbers are TensorFlow's.
_MESSAGES = {
    "AllocationDescription": [
        ("requested_bytes", 1, "int64"), ("allocated_bytes", 2, "int64"),
        ("allocator_name", 3, "string"), ("allocation_id", 4, "int64")],
    "TensorDescription": [
        ("dtype", 1, "enum:.tensorboardX.DataType"),
        ("shape", 2, ".tensorboardX.TensorShapeProto"),
        ("allocation_description", 4, "AllocationDescription")],
    "AllocatorMemoryUsed": [
        ("allocator_name", 1, "string"), ("total_bytes", 2, "int64"),
        ("peak_bytes", 3, "int64"), ("live_bytes", 4, "int64")],
    "NodeOutput": [("slot", 1, "int32"), ("tensor_description", 3, "TensorDescription")],
    "NodeExecStats": [
        ("node_name", 1, "string"), ("all_start_micros", 2, "int64"),
        ("op_start_rel_micros", 3, "int64"), ("op_end_rel_micros", 4, "int64"),
        ("all_end_rel_micros", 5, "int64"), ("memory", 6, "AllocatorMemoryUsed", "repeated"),
        ("output", 7, "NodeOutput", "repeated"), ("timeline_label", 8, "string"),
        ("thread_id", 10, "uint32")],
    "DeviceStepStats": [("device", 1, "string"), ("node_stats", 2, "NodeExecStats", "repeated")],
    "StepStats": [("dev_stats", 1, "DeviceStepStats", "repeated")],
    "RunMetadata": [("step_stats", 1, "StepStats")],
    "RunOptions": [
        ("trace_level", 1, "enum:RunOptions.TraceLevel"), ("timeout_in_ms", 2, "int64"),
        ("inter_op_thread_pool", 3, "int32"), ("output_partition_graphs", 5, "bool")],
}
_TRACE_LEVELS = ["NO_TRACE", "SOFTWARE_TRACE", "HARDWARE_TRACE", "FULL_TRACE"]


_CLASSES = declare_file("tftk/step_stats.proto", "tftk", _MESSAGES,
                        enums={"RunOptions.TraceLevel": _TRACE_LEVELS},
                        dependencies=("tensorboardX/proto/types.proto",
                                      "tensorboardX/proto/tensor_shape.proto"))
StepStats = _CLASSES["StepStats"]
NodeExecStats = _CLASSES["NodeExecStats"]
RunMetadataProto = _CLASSES["RunMetadata"]
RunOptions = _CLASSES["RunOptions"]
"""`tf.RunOptions(trace_level=RunOptions.FULL_TRACE)`: a proto with TensorFlow's field numbers."""


class RunMetadata:
    """`tf.RunMetadata`: what one traced Session.run did, node by node; the executor fills it.

    `step_stats` is a StepStats proto (one DeviceStepStats for the CPU device). The executor calls
    `clear()` at the start of a traced run (TF1 replaces the contents on every run) and
    `record_node(...)` after each kernel; `record_node` is thread-safe.
    """

    def __init__(self) -> None:
        self.step_stats = StepStats()
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every recorded node (start of a new traced run)."""
        with self._lock:
            self.step_stats.Clear()

    def record_node(self, name: str, start_micros: int, end_micros: int,
                    output_arrays: Iterable = (), thread_id: int = 0) -> None:
        """Record one kernel execution: wall-clock start/end (µs since the epoch) and its outputs.

        Each output becomes a NodeOutput (dtype, shape, bytes); their total is the node's memory.
        """
        outputs = [np.asarray(array) for array in output_arrays]
        duration = max(0, int(end_micros) - int(start_micros))
        stats = NodeExecStats(
            node_name=name, all_start_micros=int(start_micros), op_start_rel_micros=0,
            op_end_rel_micros=duration, all_end_rel_micros=duration, thread_id=thread_id)
        for slot, array in enumerate(outputs):
            description = stats.output.add(slot=slot).tensor_description
            description.dtype = datatype_enum(array.dtype)
            description.shape.CopyFrom(shape_proto(array.shape))
            allocation = description.allocation_description
            allocation.requested_bytes = allocation.allocated_bytes = array.nbytes
            allocation.allocator_name = _ALLOCATOR
        if outputs:
            total = sum(array.nbytes for array in outputs)
            stats.memory.add(allocator_name=_ALLOCATOR, total_bytes=total, peak_bytes=total, live_bytes=total)
        with self._lock:
            devices = self.step_stats.dev_stats
            device = devices[0] if devices else devices.add(device=CPU_DEVICE)
            device.node_stats.append(stats)

    def to_proto(self) -> RunMetadataProto:
        """A RunMetadata proto (TensorFlow's wire format) holding a copy of the step stats."""
        with self._lock:
            return RunMetadataProto(step_stats=self.step_stats)

    def SerializeToString(self) -> bytes:  # noqa: N802  (the protobuf name TF1 code calls)
        """The RunMetadata proto's bytes, as TaggedRunMetadata stores them."""
        return self.to_proto().SerializeToString()

    def ParseFromString(self, data: bytes) -> None:  # noqa: N802
        """Replace the contents with a serialized RunMetadata (ours or TensorFlow's)."""
        proto = RunMetadataProto.FromString(data)
        with self._lock:
            self.step_stats.CopyFrom(proto.step_stats)

    @classmethod
    def FromString(cls, data: bytes) -> "RunMetadata":  # noqa: N802
        """A RunMetadata parsed from bytes."""
        metadata = cls()
        metadata.ParseFromString(data)
        return metadata

    def __str__(self) -> str:
        return text_format.MessageToString(self.to_proto())
