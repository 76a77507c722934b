"""The compiled Example decoder (kernels/example_parse.py) gives what the protobuf path gives, for
every wire encoding protobuf accepts, and leaves to protobuf (and its errors) what it cannot decide."""

import struct

import numpy as np
import pytest

import tftk as tf
from tftk.kernels.example_parse import FLOAT_LIST, FOUND, INT64_LIST, MISSING, OTHER, parse_dense


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _floats(values, packed=True):
    if packed:
        return _field(2, _field(1, struct.pack(f"<{len(values)}f", *values)))
    return _field(2, b"".join(_varint(1 << 3 | 5) + struct.pack("<f", v) for v in values))


def _ints(values, packed=True):
    if packed:
        return _field(3, _field(1, b"".join(_varint(v) for v in values)))
    return _field(3, b"".join(_varint(1 << 3 | 0) + _varint(v) for v in values))


def _example(*entries: tuple[bytes, bytes], extra: bytes = b"") -> bytes:
    """An Example whose feature map has `entries` (key, Feature bytes) in this order."""
    features = b"".join(_field(1, _field(1, key) + _field(2, value)) for key, value in entries)
    return extra + _field(1, features)


RECORDS = {  # name -> (serialized Example, statuses of (x: 3 floats, n: 2 int64s))
    "packed": (_example((b"x", _floats([1, 2.5, -3])), (b"n", _ints([5, -7]))), [FOUND, FOUND]),
    "unpacked": (_example((b"n", _ints([1 << 40, 0], packed=False)), (b"x", _floats([0, 1, 2], packed=False))),
                 [FOUND, FOUND]),
    "packed_runs_and_mixed": (_example(  # an empty packed run, a packed run, then values one per field
        (b"x", _field(2, _field(1, b"") + _field(1, struct.pack("<f", 1)) + _varint(1 << 3 | 5) + struct.pack("<f", 2)
                      + _varint(1 << 3 | 5) + struct.pack("<f", 3))),
        (b"n", _field(3, _field(1, _varint(4)) + _varint(1 << 3) + _varint(5)))), [FOUND, FOUND]),
    "last_entry_wins": (_example((b"x", _floats([9, 9])), (b"x", _floats([1, 2, 3])), (b"n", _ints([1, 2]))),
                        [FOUND, FOUND]),
    "two_features_messages": (_example((b"x", _floats([1, 2, 3]))) + _example((b"n", _ints([3, 4]))),
                              [FOUND, FOUND]),
    "unknown_fields": (_example((b"x", _floats([1, 2, 3])), (b"n", _ints([1, 2])),
                                (b"other", _field(1, _field(1, b"bytes"))), extra=_varint(7 << 3) + _varint(300)),
                       [FOUND, FOUND]),
    "missing": (_example((b"x", _floats([1, 2, 3]))), [FOUND, MISSING]),
    "wrong_kind": (_example((b"x", _ints([1, 2, 3])), (b"n", _ints([1, 2]))), [OTHER, FOUND]),
    "wrong_count": (_example((b"x", _floats([1, 2])), (b"n", _ints([1, 2, 3]))), [OTHER, OTHER]),
    "empty_feature": (_example((b"x", b""), (b"n", _ints([1, 2]))), [OTHER, FOUND]),
    "truncated": (_example((b"x", _floats([1, 2, 3])), (b"n", _ints([1, 2])))[:-3], [OTHER, OTHER]),
}


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_compiled_decoder_statuses_and_values(name):
    record, statuses = RECORDS[name]
    floats, ints, columns, status = parse_dense([record], [b"x", b"n"], [FLOAT_LIST, INT64_LIST], [3, 2])
    assert status[0].tolist() == statuses
    if statuses == [FOUND, FOUND]:
        proto = tf.train.Example.FromString(record).features.feature
        assert floats[0].tolist() == list(np.float32(proto["x"].float_list.value))
        assert ints[0].tolist() == list(proto["n"].int64_list.value)


FEATURES = {"x": tf.FixedLenFeature([3], tf.float32),
            "n": tf.FixedLenFeature([2], tf.int64, default_value=[-1, -2])}


def _parse_batch(records, features=FEATURES):
    with tf.Graph().as_default():
        parsed = tf.parse_example(tf.constant(np.array(records, dtype=object)), features)
        with tf.Session() as sess:
            return sess.run(parsed)


def test_batch_mixing_decided_and_protobuf_records_equals_protobuf():
    good = [RECORDS[n][0] for n in ("packed", "unpacked", "last_entry_wins", "two_features_messages",
                                    "unknown_fields", "missing")]
    got = _parse_batch(good)
    for i, record in enumerate(good):
        proto = tf.train.Example.FromString(record).features.feature
        assert got["x"][i].tolist() == list(np.float32(proto["x"].float_list.value))
        assert got["n"][i].tolist() == (list(proto["n"].int64_list.value) if "n" in proto else [-1, -2])


@pytest.mark.parametrize("name, error, message", [
    ("wrong_kind", tf.errors.InvalidArgumentError, "Key: x.  Data types don't match"),
    ("wrong_count", tf.errors.InvalidArgumentError, "Key: n, Index: 0.  Number of int64 values != expected"),
    ("truncated", tf.errors.InvalidArgumentError, "Could not parse example input"),
])
def test_records_the_decoder_leaves_to_protobuf_raise_tfs_errors(name, error, message):
    records = [RECORDS["packed"][0], RECORDS[name][0]]
    with pytest.raises(error, match=message) as info:
        _parse_batch(records)
    assert "record 1 of" in str(info.value) or name == "truncated"


def test_required_feature_missing_names_the_record():
    with pytest.raises(tf.errors.InvalidArgumentError, match="record 1 of .*Feature: n .* is required"):
        _parse_batch([RECORDS["packed"][0], RECORDS["missing"][0]], {"x": FEATURES["x"],
                                                                     "n": tf.FixedLenFeature([2], tf.int64)})
