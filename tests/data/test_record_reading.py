"""TFRecord reading in chunks (kernels/record_scan.py): records that span chunks, records larger
than a chunk, and damage anywhere named by file and byte offset."""

import pytest

import tftk as tf
from tftk.data.tfrecord import read_tfrecords

RECORDS = [b"r" * n for n in (0, 1, 5, 300, 17, 4096, 3)]
OFFSETS = [0]
for _r in RECORDS[:-1]:
    OFFSETS.append(OFFSETS[-1] + len(_r) + 16)


def _write(path, compression=""):
    with tf.python_io.TFRecordWriter(str(path), tf.python_io.TFRecordOptions(compression)) as w:
        for r in RECORDS:
            w.write(r)


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
@pytest.mark.parametrize("chunk", [4096, 4099, 1 << 22])
def test_records_and_offsets_whatever_the_chunk_size(tmp_path, chunk, compression):
    _write(tmp_path / "a.tfrecord", compression)
    got = list(read_tfrecords(tmp_path / "a.tfrecord", compression, chunk_bytes=chunk))
    assert [r for _, r in got] == RECORDS and [o for o, _ in got] == OFFSETS


@pytest.mark.parametrize("record, byte, message", [
    (3, 2, "corrupted record at byte {offset} of .*a.tfrecord: length checksum mismatch"),  # in the length
    (3, 9, "corrupted record at byte {offset} of .*a.tfrecord: length checksum mismatch"),  # in its CRC
    (5, 100, "corrupted record at byte {offset} of .*a.tfrecord: data checksum mismatch"),  # in the payload
    (5, 4096 + 13, "corrupted record at byte {offset} of .*a.tfrecord: data checksum mismatch"),  # in its CRC
])
def test_damage_is_named_by_file_and_offset(tmp_path, record, byte, message):
    path = tmp_path / "a.tfrecord"
    _write(path)
    data = bytearray(path.read_bytes())
    data[OFFSETS[record] + byte] ^= 0x40
    path.write_bytes(bytes(data))
    got = []
    with pytest.raises(tf.errors.DataLossError, match=message.format(offset=OFFSETS[record])):
        for _, payload in read_tfrecords(path, chunk_bytes=4096):
            got.append(payload)
    assert got == RECORDS[:record]  # every intact record before the damage was read


@pytest.mark.parametrize("cut", [1, 4, 13, 300])
def test_file_ending_mid_record_is_truncated_at_its_offset(tmp_path, cut):
    path = tmp_path / "a.tfrecord"
    _write(path)
    data = path.read_bytes()
    path.write_bytes(data[:len(data) - cut])
    last = len(RECORDS) - 1 if cut <= 19 else len(RECORDS) - 2
    with pytest.raises(tf.errors.DataLossError, match=f"truncated record at byte {OFFSETS[last]} of .*a.tfrecord"):
        list(read_tfrecords(path))


def test_dataset_error_names_the_file_and_the_records_before_it_arrive(tmp_path):
    path = tmp_path / "a.tfrecord"
    _write(path)
    data = bytearray(path.read_bytes())
    data[OFFSETS[4] + 14] ^= 1
    path.write_bytes(bytes(data))
    nxt = tf.data.TFRecordDataset(str(path)).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert [sess.run(nxt) for _ in range(4)] == RECORDS[:4]
        with pytest.raises(tf.errors.DataLossError, match=f"byte {OFFSETS[4]} of {path}"):
            sess.run(nxt)
