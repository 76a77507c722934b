"""The messages tasks exchange: a JSON header plus raw array buffers, length-prefixed on a socket.

No pickle: a message carries only JSON values and numeric/bool/bytes arrays, and a malformed
one (bad dtype, negative or oversized shape) is rejected before anything is allocated. What a
task does with a request is limited by the server (see `server._served`).
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

import numpy as np

from tftk.framework import dtypes
from tftk.framework.tensor_shape import TensorShape

__all__ = ["send_message", "recv_message", "encode_attr", "decode_attr", "ConnectionClosed"]

_LENGTH = struct.Struct("<Q")
_MAX_HEADER_BYTES = 256 << 20  # JSON headers (string tensors travel in them)
_MAX_BYTES = 64 << 30  # one array


class ConnectionClosed(ConnectionError):
    """The other side closed the connection between messages."""


def send_message(sock: socket.socket, header: dict, arrays: list[np.ndarray | None] = ()) -> None:
    """Send `header` (JSON-able) and `arrays` (None allowed) as one message."""
    specs, buffers = [], []
    for array in arrays:
        if array is None:
            specs.append(None)
            continue
        array = np.asarray(array)
        if array.dtype == object:  # tftk's string tensors: arrays of bytes
            specs.append({"bytes": [bytes(x).hex() for x in array.reshape(-1)], "shape": list(array.shape)})
            continue
        if array.dtype.kind not in "biufc":
            raise TypeError(f"Cannot send an array of dtype {array.dtype} to another task")
        if not array.flags.c_contiguous:
            array = array.copy()  # (np.ascontiguousarray would turn a 0-d array into 1-d)
        specs.append({"dtype": array.dtype.str, "shape": list(array.shape)})
        buffers.append(memoryview(array).cast("B"))
    head = json.dumps({**header, "arrays": specs}).encode()
    sock.sendall(_LENGTH.pack(len(head)) + head)
    for buffer in buffers:
        sock.sendall(buffer)


def recv_message(sock: socket.socket) -> tuple[dict, list[np.ndarray | None]]:
    """Receive one message; raises ConnectionClosed if the peer closed before it began."""
    prefix = _recv_exactly(sock, _LENGTH.size, allow_eof=True)
    length = _LENGTH.unpack(prefix)[0]
    if length > _MAX_HEADER_BYTES:
        raise ValueError(f"message header of {length} bytes exceeds the {_MAX_HEADER_BYTES}-byte limit")
    header = json.loads(bytes(_recv_exactly(sock, length)))
    arrays: list[np.ndarray | None] = []
    for spec in header.pop("arrays"):
        if spec is None:
            arrays.append(None)
        elif "bytes" in spec:
            items = np.empty(len(spec["bytes"]), dtype=object)
            items[:] = [bytes.fromhex(x) for x in spec["bytes"]]
            arrays.append(items.reshape(spec["shape"]))
        else:
            dtype, count = _checked_spec(spec)
            data = _recv_exactly(sock, count * dtype.itemsize)
            arrays.append(np.frombuffer(data, dtype=dtype, count=count).reshape(spec["shape"]))
    return header, arrays


def _checked_spec(spec: dict) -> tuple[np.dtype, int]:
    """The dtype and element count of an array spec; ValueError for anything malformed."""
    dtype = np.dtype(spec["dtype"])
    shape = spec["shape"]
    if dtype.kind not in "biufc" or not isinstance(shape, list) or \
            not all(isinstance(d, int) and d >= 0 for d in shape):
        raise ValueError(f"malformed array spec {spec!r}")
    count = 1
    for d in shape:
        count *= d
    if count * dtype.itemsize > _MAX_BYTES:
        raise ValueError(f"array of {count * dtype.itemsize} bytes exceeds the {_MAX_BYTES}-byte limit")
    return dtype, count


def _recv_exactly(sock: socket.socket, size: int, allow_eof: bool = False) -> bytearray:
    data = bytearray(size)
    view = memoryview(data)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:])
        if n == 0:
            if allow_eof and got == 0:
                raise ConnectionClosed("connection closed")
            raise ConnectionError(f"connection lost in the middle of a message ({got} of {size} bytes)")
        got += n
    return data


def encode_attr(value: Any) -> Any:
    """An op attribute as JSON (dtypes, shapes, numbers, strings, lists); TypeError otherwise."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dtypes.DType):
        return {"dtype": value.name}
    if isinstance(value, TensorShape):
        return {"shape": value.as_tuple()}
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, (list, tuple)):
        return {"list": [encode_attr(v) for v in value]}
    raise TypeError(f"attribute value {value!r} of type {type(value).__name__} cannot be sent to another task")


def decode_attr(value: Any) -> Any:
    """The attribute value `encode_attr` encoded."""
    if isinstance(value, dict):
        if "dtype" in value:
            return dtypes.as_dtype(value["dtype"])
        if "shape" in value:
            return TensorShape(value["shape"])
        return [decode_attr(v) for v in value["list"]]
    return value
