"""Dense numeric features of serialized `tf.train.Example` records, decoded in one compiled pass.

The protobuf classes cost a few microseconds per record and feature (decoding the message, then
converting each repeated field to an array); input pipelines parse tens of thousands of records
per second, so `parse_dense` walks the wire format of a whole batch in Numba instead:
Example.features (field 1) -> Features.feature map entries (key = 1, value = 2) -> Feature's
oneof (bytes_list = 1, float_list = 2, int64_list = 3) -> the list's `value` (field 1, packed or
not). A later map entry for the same key wins, as protobuf's parser does.

Only what it can decide is decided here: per record and feature the status says found with the
expected count, not present, or "ask protobuf" (another kind, another count, a malformed or
unusual encoding); the caller parses those records with the protobuf classes, which produce the
values or TF's error message.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["parse_dense", "FOUND", "MISSING", "OTHER", "FLOAT_LIST", "INT64_LIST"]

MISSING, FOUND, OTHER = 0, 1, 2  # per (record, feature) status
FLOAT_LIST, INT64_LIST = 2, 3  # Feature's oneof field numbers


@functools.lru_cache(maxsize=1)
def _kernel():
    from numba import njit

    @njit(cache=True, nogil=True)
    def varint(buf, pos, end):  # pragma: no cover - compiled
        """(value, position after it); position -1 if malformed."""
        result = np.int64(0)
        shift = 0
        while pos < end and shift < 64:
            byte = np.int64(buf[pos])
            pos += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return result, pos
            shift += 7
        return result, -1

    @njit(cache=True, nogil=True)
    def delimited(buf, pos, end):  # pragma: no cover - compiled
        """(start, end) of the length-prefixed value at `pos`; start -1 if malformed."""
        length, pos = varint(buf, pos, end)
        if pos < 0 or length < 0 or pos + length > end:
            return -1, 0
        return pos, pos + length

    @njit(cache=True, nogil=True)
    def skip(buf, pos, end, wire):  # pragma: no cover - compiled
        """The position after a field's value of wire type `wire`; -1 if malformed or a group."""
        if wire == 0:
            return varint(buf, pos, end)[1]
        if wire == 1:
            return pos + 8 if pos + 8 <= end else -1
        if wire == 5:
            return pos + 4 if pos + 4 <= end else -1
        if wire == 2:
            start, stop = delimited(buf, pos, end)
            return stop if start >= 0 else -1
        return -1

    @njit(cache=True, nogil=True)
    def next_field_one(buf, pos, end):  # pragma: no cover - compiled
        """(start, end, position after) of the next length-delimited field 1 of a message from `pos`,
        skipping other fields; start -1 at the end of the message, -2 if malformed."""
        while pos < end:
            tag, pos = varint(buf, pos, end)
            if pos < 0:
                return -2, 0, pos
            if tag == 10:
                start, stop = delimited(buf, pos, end)
                return (start, stop, stop) if start >= 0 else (-2, 0, pos)
            pos = skip(buf, pos, end, tag & 7)
            if pos < 0 or (tag >> 3) == 0:
                return -2, 0, pos
        return -1, 0, pos

    @njit(cache=True, nogil=True)
    def last_fields(buf, pos, end, starts, ends):  # pragma: no cover - compiled
        """Walk a message; for its length-delimited fields 1..3 note where the last of each lies
        (starts[n], ends[n]; -1 if absent) and in starts[0] the number of the last one seen.
        False if malformed."""
        for n in range(4):
            starts[n] = -1
            ends[n] = -1
        starts[0] = 0
        while pos < end:
            tag, pos = varint(buf, pos, end)
            if pos < 0:
                return False
            number = tag >> 3
            if (tag & 7) == 2 and 1 <= number <= 3:
                start, stop = delimited(buf, pos, end)
                if start < 0:
                    return False
                starts[number], ends[number], starts[0] = start, stop, number
                pos = stop
            else:
                pos = skip(buf, pos, end, tag & 7)
                if pos < 0 or number == 0:
                    return False
        return True

    @njit(cache=True, nogil=True)
    def match(buf, start, end, keys, key_starts, key_ends):  # pragma: no cover - compiled
        for f in range(key_starts.shape[0]):
            a, b = key_starts[f], key_ends[f]
            if b - a != end - start:
                continue
            same = True
            for i in range(b - a):
                if keys[a + i] != buf[start + i]:
                    same = False
                    break
            if same:
                return f
        return -1

    @njit(cache=True, nogil=True)
    def read_list(buf, start, end, kind, out, row, column, size):  # pragma: no cover - compiled
        """Write a FloatList / Int64List's values at out[row, column:column + size]; the count, or -1.

        Values come one per field (fixed32 floats, varint int64s) or packed into one length-prefixed
        field; protobuf accepts both, and several packed runs."""
        count = 0
        pos = start
        while pos < end:
            tag, pos = varint(buf, pos, end)
            if pos < 0:
                return -1
            field, wire = tag >> 3, tag & 7
            if field != 1:
                pos = skip(buf, pos, end, wire)
                if pos < 0:
                    return -1
                continue
            if not ((kind == 2 and (wire == 5 or wire == 2)) or (kind == 3 and (wire == 0 or wire == 2))):
                return -1
            limit, stop = end, -1  # reads stay within `limit`; a packed run goes on to `stop`
            if wire == 2:
                pos, limit = delimited(buf, pos, end)
                if pos < 0 or (kind == 2 and (limit - pos) % 4):
                    return -1
                stop = limit
            single = wire != 2
            while single or pos < stop:
                single = False
                if kind == 2:
                    if pos + 4 > limit:
                        return -1
                    value = (np.int64(buf[pos]) | (np.int64(buf[pos + 1]) << 8) | (np.int64(buf[pos + 2]) << 16)
                             | (np.int64(buf[pos + 3]) << 24))  # the float's bits
                    pos += 4
                else:
                    value, pos = varint(buf, pos, limit)
                    if pos < 0:
                        return -1
                if count < size:
                    out[row, column + count] = value
                count += 1
        return count

    @njit(cache=True, nogil=True)
    def parse(buf, record_starts, record_ends, keys, key_starts, key_ends, kinds, sizes, columns, floats, ints,
              status):  # pragma: no cover - compiled
        n_features = kinds.shape[0]
        starts, ends = np.empty(4, np.int64), np.empty(4, np.int64)  # last_fields' scratch
        for row in range(record_starts.shape[0]):
            pos, end = record_starts[row], record_ends[row]
            bad = False
            while not bad:  # Example.features (field 1), possibly several: they merge
                features_start, features_end, pos = next_field_one(buf, pos, end)
                if features_start < 0:
                    bad = features_start == -2
                    break
                entry = features_start
                while not bad:  # Features.feature map entries (field 1)
                    entry_start, entry_end, entry = next_field_one(buf, entry, features_end)
                    if entry_start < 0:
                        bad = entry_start == -2
                        break
                    if not last_fields(buf, entry_start, entry_end, starts, ends):  # key = 1, value = 2
                        bad = True
                        break
                    f = match(buf, max(starts[1], 0), max(ends[1], 0), keys, key_starts, key_ends)  # no key: ""
                    if f < 0:
                        continue
                    value_start, value_end = starts[2], ends[2]
                    if value_start < 0:
                        status[row, f] = OTHER  # an empty Feature: protobuf decides
                        continue
                    # the Feature's oneof (bytes_list = 1, float_list = 2, int64_list = 3): the last one present wins
                    if not last_fields(buf, value_start, value_end, starts, ends):
                        bad = True
                        break
                    kind = starts[0]
                    list_start, list_end = (starts[kind], ends[kind]) if kind > 0 else (0, 0)
                    if kind != kinds[f]:
                        status[row, f] = OTHER
                        continue
                    if kind == 2:
                        count = read_list(buf, list_start, list_end, kind, floats, row, columns[f], sizes[f])
                    else:
                        count = read_list(buf, list_start, list_end, kind, ints, row, columns[f], sizes[f])
                    status[row, f] = FOUND if count == sizes[f] else OTHER
            if bad:
                for f in range(n_features):
                    status[row, f] = OTHER

    return parse


def parse_dense(records: list, keys: list[bytes], kinds: list[int], sizes: list[int]) -> tuple:
    """Decode dense FLOAT_LIST / INT64_LIST features of serialized Examples.

    Returns (floats [n, sum of float sizes] float32, ints [n, sum of int sizes] int64, columns:
    each feature's first column in its array, status [n, features]). Rows whose status is not
    FOUND hold unspecified values for that feature.
    """
    n = len(records)
    lengths = np.fromiter(map(len, records), np.int64, n)
    ends = np.cumsum(lengths)
    buf = np.frombuffer(b"".join(records), np.uint8)
    key_lengths = np.array([len(k) for k in keys], np.int64)
    key_ends = np.cumsum(key_lengths)
    key_buf = np.frombuffer(b"".join(keys) or b"\0", np.uint8)
    columns, widths = [], {FLOAT_LIST: 0, INT64_LIST: 0}
    for kind, size in zip(kinds, sizes):
        columns.append(widths[kind])
        widths[kind] += size
    floats = np.zeros((n, widths[FLOAT_LIST]), np.float32)
    ints = np.zeros((n, widths[INT64_LIST]), np.int64)
    status = np.zeros((n, len(keys)), np.int64)
    _kernel()(buf, ends - lengths, ends, key_buf, key_ends - key_lengths, key_ends,
              np.array(kinds, np.int64), np.array(sizes, np.int64), np.array(columns, np.int64),
              floats.view(np.uint32), ints, status)
    return floats, ints, columns, status
