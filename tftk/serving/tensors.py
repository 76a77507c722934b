"""Request values <-> numpy: TF Serving's JSON (row `instances`, columnar `inputs`, `{"b64": ...}`) and
TensorProto. Every malformed value is a `RequestError` naming the input.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any, Mapping

import numpy as np

from tftk.serving.servable import RequestError, Signature

__all__ = ["json_inputs", "json_outputs", "json_value", "example_from_json", "to_tensor_proto", "from_tensor_proto",
           "DTYPE_ENUM", "ENUM_DTYPE", "DTYPE_NAME"]

# tensorflow.DataType numbers (types.proto) of the dtypes a request can carry.
DTYPE_ENUM = {np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int32): 3, np.dtype(np.uint8): 4,
              np.dtype(np.int16): 5, np.dtype(np.int8): 6, np.dtype(object): 7, np.dtype(np.int64): 9,
              np.dtype(np.bool_): 10, np.dtype(np.uint16): 17, np.dtype(np.float16): 19,
              np.dtype(np.uint32): 22, np.dtype(np.uint64): 23}
ENUM_DTYPE = {number: dtype for dtype, number in DTYPE_ENUM.items()}
DTYPE_NAME = {dtype: name for dtype, name in zip(DTYPE_ENUM, (
    "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8", "DT_INT16", "DT_INT8", "DT_STRING", "DT_INT64", "DT_BOOL",
    "DT_UINT16", "DT_HALF", "DT_UINT32", "DT_UINT64"))}
# TensorProto's repeated field for each dtype (half travels as int bits in half_val).
_VALUE_FIELD = {1: "float_val", 2: "double_val", 3: "int_val", 4: "int_val", 5: "int_val", 6: "int_val",
                7: "string_val", 9: "int64_val", 10: "bool_val", 17: "int_val", 19: "half_val", 22: "uint32_val",
                23: "uint64_val"}


# ---- JSON -------------------------------------------------------------------------------------------
def _decode_strings(value: Any, key: str) -> Any:
    """Nested lists with `{"b64": ...}` objects replaced by bytes and str by UTF-8 bytes."""
    if isinstance(value, list):
        return [_decode_strings(item, key) for item in value]
    if isinstance(value, dict):
        if set(value) != {"b64"} or not isinstance(value["b64"], str):
            raise RequestError(f"input '{key}': an object inside a tensor must be {{\"b64\": \"<base64>\"}}")
        try:
            return base64.b64decode(value["b64"], validate=True)
        except (binascii.Error, ValueError):
            raise RequestError(f"input '{key}': invalid base64 in {{\"b64\": ...}}") from None
    if isinstance(value, str):
        return value.encode("utf-8")
    return value


def json_value(value: Any, key: str) -> np.ndarray:
    """A JSON tensor (number, string, b64 object, or nested lists of them) as a numpy array."""
    try:  # the common case, numbers, without walking the lists in Python
        array = np.array(value)
        if array.dtype.kind in "biuf":
            return array
    except ValueError:
        pass
    value = _decode_strings(value, key)
    try:
        array = np.array(value)
    except ValueError:
        raise RequestError(f"input '{key}': the nested lists are not rectangular") from None
    if array.dtype.kind == "S":
        array = np.array(value, dtype=object)
    if array.dtype.kind not in "biufO":
        raise RequestError(f"input '{key}': values must be numbers, booleans or strings")
    if array.dtype == object and any(not isinstance(v, bytes) for v in array.reshape(-1)):
        raise RequestError(f"input '{key}': mixes strings with other values or has ragged lists")
    return array


def json_inputs(body: Mapping[str, Any], signature: Signature) -> tuple[dict[str, np.ndarray], bool]:
    """(inputs by signature key, row format?) from a predict request body."""
    has_rows, has_columns = "instances" in body, "inputs" in body
    if has_rows == has_columns:
        raise RequestError('JSON body must have exactly one of "instances" (row format) or "inputs" (columnar)')
    keys = list(signature.inputs)
    if has_columns:
        value = body["inputs"]
        if isinstance(value, dict) and not (set(value) == {"b64"} and len(keys) == 1 and "b64" not in keys):
            return {key: json_value(item, key) for key, item in value.items()}, False
        if len(keys) != 1:
            raise RequestError(f'"inputs" must be an object naming each of the signature inputs {keys}')
        return {keys[0]: json_value(value, keys[0])}, False
    rows = body["instances"]
    if not isinstance(rows, list) or not rows:
        raise RequestError('"instances" must be a non-empty list')
    named = all(isinstance(row, dict) and not set(row) == {"b64"} for row in rows)
    if not named:
        if len(keys) != 1:
            raise RequestError(f"instances must be objects naming each of the signature inputs {keys}")
        return {keys[0]: json_value(rows, keys[0])}, True
    names = set(rows[0])
    if any(set(row) != names for row in rows):
        raise RequestError("every instance must name the same inputs")
    return {key: json_value([row[key] for row in rows], key) for key in rows[0]}, True


def _jsonable(array: np.ndarray) -> Any:
    if array.dtype == object or array.dtype.kind == "S":
        def text(item):
            try:
                return item.decode("utf-8") if isinstance(item, bytes) else str(item)
            except UnicodeDecodeError:
                return {"b64": base64.b64encode(item).decode("ascii")}
        return np.vectorize(text, otypes=[object])(array).tolist() if array.size else array.tolist()
    values = array.tolist()
    if array.dtype.kind == "f" and not _all_finite(array):
        return _nonfinite(values)
    return values


def _all_finite(array: np.ndarray) -> bool:
    """True when every value is finite; may say False for large finite values (their squares overflow), which
    only sends them the slow way. One BLAS call: isfinite(...).all() was the answer's costliest step."""
    return math.isfinite(np.vdot(array, array))


def _nonfinite(value: Any) -> Any:
    """NaN and infinities as TF Serving writes them: the strings "NaN", "Infinity", "-Infinity"."""
    if isinstance(value, list):
        return [_nonfinite(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def json_outputs(outputs: dict[str, np.ndarray], rows: bool) -> dict[str, Any]:
    """`{"predictions": ...}` (row format) or `{"outputs": ...}` (columnar), as TF Serving answers."""
    if not rows:
        if len(outputs) == 1:
            return {"outputs": _jsonable(next(iter(outputs.values())))}
        return {"outputs": {key: _jsonable(value) for key, value in outputs.items()}}
    if len(outputs) == 1:
        return {"predictions": _jsonable(next(iter(outputs.values())))}
    count = {len(value) if value.ndim else -1 for value in outputs.values()}
    if len(count) != 1 or -1 in count:
        raise RequestError("outputs have different batch sizes; use the columnar \"inputs\" format")
    columns = {key: _jsonable(value) for key, value in outputs.items()}
    return {"predictions": [{key: column[i] for key, column in columns.items()} for i in range(count.pop())]}


def example_from_json(features: Any, index: int):
    """A tf.Example from a classify/regress request's JSON object of features (lists or scalars)."""
    from tftk.proto.example import Example

    if not isinstance(features, dict):
        raise RequestError(f"example {index}: must be an object of feature name -> value(s)")
    example = Example()
    for key, value in features.items():
        values = value if isinstance(value, list) else [value]
        decoded = _decode_strings(values, key)
        feature = example.features.feature[key]
        if all(isinstance(v, bytes) for v in decoded):
            feature.bytes_list.value.extend(decoded)
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in decoded):
            feature.int64_list.value.extend(decoded)
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in decoded):
            feature.float_list.value.extend(decoded)
        else:
            raise RequestError(f"example {index}: feature '{key}' must be a flat list of numbers or of strings")
    return example


# ---- TensorProto ------------------------------------------------------------------------------------
def from_tensor_proto(proto, key: str) -> np.ndarray:
    """A TensorProto (tensor_content or the typed *_val fields, a single value broadcast) as numpy."""
    dtype = ENUM_DTYPE.get(proto.dtype)
    if dtype is None:
        raise RequestError(f"input '{key}': unsupported dtype {proto.dtype}")
    if proto.tensor_shape.unknown_rank:
        raise RequestError(f"input '{key}': tensor_shape must be known")
    shape = tuple(int(d.size) for d in proto.tensor_shape.dim)
    if any(d < 0 for d in shape):
        raise RequestError(f"input '{key}': negative dimension in tensor_shape {list(shape)}")
    count = int(np.prod(shape, dtype=np.int64))
    if proto.tensor_content:
        if dtype == object:
            raise RequestError(f"input '{key}': strings travel in string_val, not tensor_content")
        if len(proto.tensor_content) != count * dtype.itemsize:
            raise RequestError(f"input '{key}': tensor_content holds {len(proto.tensor_content)} bytes, "
                               f"shape {list(shape)} needs {count * dtype.itemsize}")
        return np.frombuffer(proto.tensor_content, dtype).reshape(shape).copy()
    values = getattr(proto, _VALUE_FIELD[proto.dtype])
    if dtype == object:
        array = np.empty(len(values), object)
        array[:] = list(values)
    elif proto.dtype == 19:
        array = np.array(values, np.uint16).view(np.float16)
    else:
        array = np.array(values, dtype)
    if len(array) == count:
        return array.reshape(shape)
    if len(array) == 1:
        return np.broadcast_to(array, shape).copy()
    raise RequestError(f"input '{key}': {len(array)} values for shape {list(shape)}")


def to_tensor_proto(array: np.ndarray, proto) -> None:
    """Fill `proto` (a TensorProto) with `array`: tensor_content for numbers, string_val for strings."""
    array = np.asarray(array)
    if array.dtype.kind in "SU":
        array = array.astype(object)
    if array.dtype not in DTYPE_ENUM:
        raise ValueError(f"cannot send dtype {array.dtype} in a TensorProto")
    proto.dtype = DTYPE_ENUM[array.dtype]
    for size in array.shape:
        proto.tensor_shape.dim.add(size=size)
    if array.dtype == object:
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode() for v in array.reshape(-1))
    else:
        proto.tensor_content = np.ascontiguousarray(array).tobytes()
