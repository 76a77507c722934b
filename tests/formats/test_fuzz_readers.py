"""Fuzz the readers of untrusted bytes: a checkpoint index, a bundle entry, a TensorProto.

Whatever the bytes, a reader either returns or raises its one documented error (naming the
file); it never crashes with another exception nor allocates from an unchecked length.
"""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tftk.framework.errors import DataLossError, NotFoundError
from tftk.proto.tensorflow import TensorProto
from tftk.summary.tensor_proto import TensorProtoError, make_ndarray, make_tensor_proto
from tftk.train.sorted_table import TableError, build_table, read_table
from tftk.train.tensor_bundle import BundleReader, write_bundle

# TFTK_FUZZ_EXAMPLES=20000 for a longer run than CI's.
SETTINGS = settings(max_examples=int(os.environ.get("TFTK_FUZZ_EXAMPLES", "300")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _valid_index() -> bytes:
    return build_table([(b"", b"\x08\x01"), (b"a", b"\x08\x01\x12\x00"), (b"b/c", b"x" * 40)]
                       + [(f"k{i:03d}".encode(), bytes([i])) for i in range(40)])


VALID = _valid_index()


@SETTINGS
@given(st.data())
def test_table_reader_survives_mutations(data):
    raw = bytearray(VALID)
    for _ in range(data.draw(st.integers(1, 6))):
        position = data.draw(st.integers(0, len(raw) - 1))
        raw[position] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    try:
        read_table(bytes(raw[:cut]) if data.draw(st.booleans()) else bytes(raw))
    except TableError:
        pass


@SETTINGS
@given(st.binary(max_size=300))
def test_table_reader_survives_random_bytes(raw):
    try:
        read_table(raw)
    except TableError:
        pass


@SETTINGS
@given(st.data())
def test_bundle_reader_survives_corrupt_index_and_shard(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("fuzz")
    prefix = folder / "ck"
    write_bundle(prefix, {"w": np.arange(12, dtype=np.float32).reshape(3, 4),
                          "s": np.array([b"ab", b"c"], dtype=object), "i": np.int64(7)})
    for suffix in (".index", ".data-00000-of-00001"):
        path = folder / f"ck{suffix}"
        raw = bytearray(path.read_bytes())
        for _ in range(data.draw(st.integers(0, 4))):
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
        path.write_bytes(bytes(raw[:data.draw(st.integers(0, len(raw)))]) if data.draw(st.booleans()) else bytes(raw))
    try:
        reader = BundleReader(prefix)
        for name in reader.variables():
            reader.read(name)
    except (DataLossError, NotFoundError) as exc:
        assert "ck" in str(exc)


@SETTINGS
@given(st.binary(max_size=200))
def test_tensor_proto_reader_survives_random_protos(raw):
    try:
        proto = TensorProto.FromString(raw)
    except Exception:  # not even a protobuf: the parser's own DecodeError
        return
    try:
        make_ndarray(proto)
    except TensorProtoError:
        pass


@SETTINGS
@given(st.lists(st.integers(-1, 6), max_size=4), st.integers(0, 14), st.binary(max_size=64),
       st.lists(st.floats(allow_nan=True), max_size=5))
def test_tensor_proto_fields_that_disagree_are_errors(dims, dtype, content, floats):
    proto = make_tensor_proto(np.zeros(0, np.float32))
    proto.ClearField("tensor_shape")
    for d in dims:
        proto.tensor_shape.dim.add(size=d)
    proto.dtype = dtype
    proto.tensor_content = content
    proto.float_val.extend(floats)
    try:
        make_ndarray(proto)
    except TensorProtoError:
        pass
