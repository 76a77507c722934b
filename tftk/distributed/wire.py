"""The messages tasks exchange: a JSON header plus raw array buffers, length-prefixed on a socket.

No pickle: a message carries only JSON values and numeric/bool/bytes arrays. A malformed one (not
a JSON object, bad dtype, negative or oversized shape, nesting too deep) raises MalformedMessage,
and memory is taken only as bytes arrive: a header announcing a huge array costs nothing until
the data comes. What a task does with a request is limited by the server (see `server._served`).
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

import numpy as np

from tftk.framework import dtypes
from tftk.framework.tensor_shape import TensorShape

__all__ = ["send_message", "recv_message", "encode_attr", "decode_attr", "ConnectionClosed", "MalformedMessage"]

_LENGTH = struct.Struct("<Q")
_MAX_HEADER_BYTES = 256 << 20  # JSON headers (string tensors travel in them)
_MAX_BYTES = 64 << 30  # one array
_CHUNK = 1 << 20  # bytes read (and allocated) at a time


class ConnectionClosed(ConnectionError):
    """The other side closed the connection between messages."""


class MalformedMessage(ValueError):
    """Bytes that are not a message of this protocol: the stream cannot be trusted any more."""


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
    """Receive one message; ConnectionClosed if the peer closed before it began, MalformedMessage if it is not one."""
    prefix = _recv_exactly(sock, _LENGTH.size, allow_eof=True)
    length = _LENGTH.unpack(prefix)[0]
    if length > _MAX_HEADER_BYTES:
        raise MalformedMessage(f"message header of {length} bytes exceeds the {_MAX_HEADER_BYTES}-byte limit")
    try:
        header = json.loads(bytes(_recv_exactly(sock, length)))
    except (ValueError, RecursionError) as exc:
        raise MalformedMessage(f"message header is not JSON ({type(exc).__name__})") from None
    if not isinstance(header, dict) or not isinstance(header.get("arrays"), list):
        raise MalformedMessage("message header must be a JSON object with an 'arrays' list")
    arrays: list[np.ndarray | None] = []
    for spec in header.pop("arrays"):
        if spec is None:
            arrays.append(None)
        elif isinstance(spec, dict) and "bytes" in spec:
            arrays.append(_bytes_array(spec))
        else:
            dtype, count = _checked_spec(spec)
            data = _recv_exactly(sock, count * dtype.itemsize)
            arrays.append(np.frombuffer(data, dtype=dtype, count=count).reshape(spec["shape"]))
    return header, arrays


def _bytes_array(spec: dict) -> np.ndarray:
    """A string tensor sent in the header (a list of hex strings and a shape)."""
    try:
        items = np.empty(len(spec["bytes"]), dtype=object)
        items[:] = [bytes.fromhex(x) for x in spec["bytes"]]
        return items.reshape(_shape(spec))
    except (TypeError, ValueError, KeyError) as exc:
        raise MalformedMessage(f"malformed string array spec ({exc})") from None


def _shape(spec: dict) -> list[int]:
    shape = spec.get("shape")
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        raise MalformedMessage(f"malformed array shape {shape!r}")
    return shape


def _checked_spec(spec: Any) -> tuple[np.dtype, int]:
    """The dtype and element count of an array spec; MalformedMessage for anything malformed."""
    if not isinstance(spec, dict) or not isinstance(spec.get("dtype"), str):
        raise MalformedMessage(f"malformed array spec {spec!r:.200}")
    try:
        dtype = np.dtype(spec["dtype"])
    except TypeError:
        raise MalformedMessage(f"unknown dtype {spec['dtype']!r:.100}") from None
    if dtype.kind not in "biufc":
        raise MalformedMessage(f"arrays of dtype {dtype} cannot travel")
    count = 1
    for d in _shape(spec):
        count *= d
    if count * dtype.itemsize > _MAX_BYTES:
        raise MalformedMessage(f"array of {count * dtype.itemsize} bytes exceeds the {_MAX_BYTES}-byte limit")
    return dtype, count


def _recv_exactly(sock: socket.socket, size: int, allow_eof: bool = False) -> bytearray:
    """`size` bytes from `sock`, the buffer growing as they arrive (never `size` allocated up front)."""
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(min(_CHUNK, size - len(data)))
        if not chunk:
            if allow_eof and not data:
                raise ConnectionClosed("connection closed")
            raise ConnectionError(f"connection lost in the middle of a message ({len(data)} of {size} bytes)")
        data += chunk
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
