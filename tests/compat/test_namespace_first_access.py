"""The first attribute read on a fresh `import tftk` works for every kind of TF1 name.

`tftk` loads its TF1 names on first access; names that are subpackages (`tf.compat`, `tf.data`) or
lazily loaded modules must resolve on that very first read too, not only on later ones.
"""

import subprocess
import sys

import pytest


@pytest.mark.parametrize("expression", [
    "tf.compat.v1.data.Dataset", "tf.data.Dataset", "tf.compat.v1.placeholder", "tf.placeholder",
    "tf.metrics.accuracy", "tf.saved_model.loader.load", "tf.contrib.rnn.LSTMBlockCell",
])
def test_first_read_of_a_name_in_a_fresh_process(expression):
    proc = subprocess.run([sys.executable, "-c", f"import tftk as tf; print({expression})"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-500:]
