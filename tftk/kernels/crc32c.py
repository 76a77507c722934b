"""CRC-32C (Castagnoli), the checksum of TensorFlow's checkpoints, tables and records.

Two implementations: a Numba slicing-by-8 loop for large buffers (~1.5 GB/s, so a 100 MB
checkpoint costs well under 0.1 s) and a plain table loop for small ones (index blocks, string
lengths), which needs no compilation.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["crc32c", "extend", "mask", "unmask", "range_kernel", "tables"]

_POLY = 0x82F63B78
_MASK_DELTA = 0xA282EAD8
_NUMBA_THRESHOLD = 1 << 16


@functools.lru_cache(maxsize=1)
def _tables() -> np.ndarray:
    """The 8 x 256 slicing-by-8 tables (row 0 is the classic byte-at-a-time table)."""
    table = np.zeros((8, 256), np.uint32)
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ (_POLY if crc & 1 else 0)
        table[0, i] = crc
    for k in range(1, 8):
        previous = table[k - 1]
        table[k] = (previous >> 8) ^ table[0][previous & 0xFF]
    return table


@functools.lru_cache(maxsize=1)
def range_kernel():
    """The compiled `crc_range(crc, data, start, end, table)`: the CRC of `crc`'s bytes followed by
    data[start:end] (a uint8 array; `table` is `tables()` as int64). Other kernels call it too
    (kernels/record_scan.py checks a whole buffer of TFRecords in one call)."""
    from numba import njit

    @njit(cache=True, nogil=True)
    def crc_range(crc, data, start, end, table):  # pragma: no cover - compiled; int64 throughout (numba's uint mixing is float)
        crc = (~crc) & 0xFFFFFFFF
        i = start
        while end - i >= 8:
            lo = crc ^ (np.int64(data[i]) | (np.int64(data[i + 1]) << 8) | (np.int64(data[i + 2]) << 16)
                        | (np.int64(data[i + 3]) << 24))
            crc = (table[7, lo & 0xFF] ^ table[6, (lo >> 8) & 0xFF] ^ table[5, (lo >> 16) & 0xFF]
                   ^ table[4, (lo >> 24) & 0xFF] ^ table[3, data[i + 4]] ^ table[2, data[i + 5]]
                   ^ table[1, data[i + 6]] ^ table[0, data[i + 7]])
            i += 8
        while i < end:
            crc = table[0, (crc ^ np.int64(data[i])) & 0xFF] ^ (crc >> 8)
            i += 1
        return (~crc) & 0xFFFFFFFF
    return crc_range


@functools.lru_cache(maxsize=1)
def tables() -> np.ndarray:
    """The slicing-by-8 tables as int64, the form the compiled kernels take."""
    return _tables().astype(np.int64)


def extend(crc: int, data) -> int:
    """The CRC-32C of the bytes hashed into `crc` followed by `data` (bytes-like or uint8 array)."""
    view = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
    if view.size >= _NUMBA_THRESHOLD:
        return int(range_kernel()(np.int64(crc), view, 0, view.size, tables()))
    table = _tables()[0].tolist()
    crc ^= 0xFFFFFFFF
    for byte in view.tobytes():
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def crc32c(data) -> int:
    """The CRC-32C of `data`."""
    return extend(0, data)


def mask(crc: int) -> int:
    """LevelDB's masked CRC (rotate right by 15, add a constant), as stored in TF's files."""
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    """The CRC a `mask`ed value was made from."""
    rot = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF
