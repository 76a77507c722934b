"""tf.resource_loader: data files found beside the calling module, resources read from the package tree."""

import os

import pytest

import tftk as tf

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("call, expected", [
    (lambda: tf.resource_loader.get_data_files_path(), HERE),
    (lambda: tf.resource_loader.get_root_dir_with_all_resources(), HERE),
    (lambda: tf.resource_loader.get_path_to_datafile("data/x.txt"), os.path.join(HERE, "data/x.txt")),
    (lambda: tf.resource_loader.readahead_file_path("/tmp/f"), "/tmp/f"),
])
def test_paths_are_relative_to_the_caller(call, expected):
    assert call() == expected


def test_load_resource_reads_package_files_and_fails_for_missing_ones():
    assert tf.resource_loader.load_resource("tftk/py.typed") == open(os.path.join(
        os.path.dirname(tf.__file__), "py.typed"), "rb").read()
    with pytest.raises(OSError):
        tf.resource_loader.load_resource("tftk/no-such-file")
