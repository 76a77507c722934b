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
    def skip(buf, pos, end, wire):  # pragma: no cover - compiled
        """The position after a field's value of wire type `wire`; -1 if malformed or a group."""
        if wire == 0:
            return varint(buf, pos, end)[1]
        if wire == 1:
            return pos + 8 if pos + 8 <= end else -1
        if wire == 5:
            return pos + 4 if pos + 4 <= end else -1
        if wire == 2:
            length, pos = varint(buf, pos, end)
            if pos < 0 or length < 0 or pos + length > end:
                return -1
            return pos + length
        return -1

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
        """Write a FloatList / Int64List's values at out[row, column:column + size]; the count, or -1."""
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
            if kind == 2 and wire == 5:  # one unpacked float
                if pos + 4 > end:
                    return -1
                if count < size:
                    out[row, column + count] = (np.int64(buf[pos]) | (np.int64(buf[pos + 1]) << 8)
                                                | (np.int64(buf[pos + 2]) << 16) | (np.int64(buf[pos + 3]) << 24))
                count += 1
                pos += 4
            elif kind == 2 and wire == 2:  # packed floats
                length, pos = varint(buf, pos, end)
                if pos < 0 or length < 0 or length % 4 or pos + length > end:
                    return -1
                stop = pos + length
                while pos < stop:
                    if count < size:
                        out[row, column + count] = (np.int64(buf[pos]) | (np.int64(buf[pos + 1]) << 8)
                                                    | (np.int64(buf[pos + 2]) << 16)
                                                    | (np.int64(buf[pos + 3]) << 24))
                    count += 1
                    pos += 4
            elif kind == 3 and wire == 0:  # one unpacked int64
                value, pos = varint(buf, pos, end)
                if pos < 0:
                    return -1
                if count < size:
                    out[row, column + count] = value
                count += 1
            elif kind == 3 and wire == 2:  # packed int64s
                length, pos = varint(buf, pos, end)
                if pos < 0 or length < 0 or pos + length > end:
                    return -1
                stop = pos + length
                while pos < stop:
                    value, pos = varint(buf, pos, stop)
                    if pos < 0:
                        return -1
                    if count < size:
                        out[row, column + count] = value
                    count += 1
            else:
                return -1
        return count

    @njit(cache=True, nogil=True)
    def parse(buf, starts, ends, keys, key_starts, key_ends, kinds, sizes, columns, floats, ints,
              status):  # pragma: no cover - compiled
        n_features = kinds.shape[0]
        for row in range(starts.shape[0]):
            pos, end = starts[row], ends[row]
            bad = False
            while pos < end and not bad:
                tag, pos = varint(buf, pos, end)
                if pos < 0:
                    bad = True
                    break
                if tag != 10:  # not Example.features (field 1, length-delimited)
                    pos = skip(buf, pos, end, tag & 7)
                    bad = pos < 0 or (tag >> 3) == 0
                    continue
                length, pos = varint(buf, pos, end)
                if pos < 0 or length < 0 or pos + length > end:
                    bad = True
                    break
                features_end = pos + length
                while pos < features_end and not bad:
                    tag, pos = varint(buf, pos, features_end)
                    if pos < 0:
                        bad = True
                        break
                    if tag != 10:  # not a map entry
                        pos = skip(buf, pos, features_end, tag & 7)
                        bad = pos < 0 or (tag >> 3) == 0
                        continue
                    length, pos = varint(buf, pos, features_end)
                    if pos < 0 or length < 0 or pos + length > features_end:
                        bad = True
                        break
                    entry_end = pos + length
                    key_start = key_end = value_start = value_end = -1
                    while pos < entry_end:
                        tag, pos = varint(buf, pos, entry_end)
                        if pos < 0:
                            break
                        if tag == 10 or tag == 18:
                            length, pos = varint(buf, pos, entry_end)
                            if pos < 0 or length < 0 or pos + length > entry_end:
                                pos = -1
                                break
                            if tag == 10:
                                key_start, key_end = pos, pos + length
                            else:
                                value_start, value_end = pos, pos + length
                            pos += length
                        else:
                            pos = skip(buf, pos, entry_end, tag & 7)
                            if pos < 0 or (tag >> 3) == 0:
                                pos = -1
                                break
                    if pos < 0:
                        bad = True
                        break
                    if key_start < 0:
                        key_start = key_end = 0  # the empty key
                    f = match(buf, key_start, key_end, keys, key_starts, key_ends)
                    if f < 0:
                        continue
                    if value_start < 0:
                        status[row, f] = OTHER  # an empty Feature: protobuf decides
                        continue
                    # the Feature's oneof: the last list present wins
                    kind, list_start, list_end = 0, 0, 0
                    p = value_start
                    while p < value_end:
                        tag, p = varint(buf, p, value_end)
                        if p < 0:
                            break
                        if (tag & 7) == 2 and 1 <= (tag >> 3) <= 3:
                            length, p = varint(buf, p, value_end)
                            if p < 0 or length < 0 or p + length > value_end:
                                p = -1
                                break
                            kind, list_start, list_end = tag >> 3, p, p + length
                            p += length
                        else:
                            p = skip(buf, p, value_end, tag & 7)
                            if p < 0 or (tag >> 3) == 0:
                                p = -1
                                break
                    if p < 0:
                        bad = True
                        break
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
