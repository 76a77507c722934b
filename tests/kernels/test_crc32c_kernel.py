"""The compiled CRC32C against tensorboardX's pure-Python reference."""

import os

import pytest
from tensorboardX.crc32c import crc32c as reference

from tftk.kernels.crc32c import crc32c


@pytest.mark.parametrize("size", [0, 1, 3, 8, 255, 4096])
def test_crc32c_matches_the_reference(size):
    data = os.urandom(size)
    assert crc32c(data) == reference(data)


def test_crc32c_known_value():
    assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
