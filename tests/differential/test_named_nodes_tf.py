"""Every object a TF1 tutorial program is handed has TF's name in tftk, and so does every variable.

The three MNIST tutorials (`named_nodes.PROGRAMS`) are run through a recording `tf` in real
TensorFlow (`tf_named_nodes.py`) and in tftk. Each API call's result, in call order, must carry the
same graph name (what a program prints, passes to `get_tensor_by_name` or fetches by string), and
the global variables (a checkpoint's keys) must be the same list. TF's internal nodes (shape
plumbing, constants tftk keeps as attrs) are not compared.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tftk

from tests.differential import named_nodes
from tests.tf_oracle import run_script_in_tf

# TensorFlow 2.x rewrote tf.nn.dropout (its result is a SelectV2); tftk follows TF 1.15's form,
# whose last op is a Mul. The oracle is TF 2.21, so that one name is a version difference.
VERSION_DIFFERENCES = {"tf.nn.dropout"}


@pytest.fixture(scope="module")
def tensorflow_names():
    return json.loads(run_script_in_tf(str(Path(__file__).with_name("tf_named_nodes.py"))))


@pytest.mark.slow  # builds three tutorial graphs in real TensorFlow
@pytest.mark.parametrize("program", sorted(named_nodes.PROGRAMS))
def test_tutorial_objects_have_tensorflow_names(tensorflow_names, program):
    theirs, ours = tensorflow_names[program], named_nodes.record(tftk, program)
    assert [api for api, _ in ours["calls"]] == [api for api, _ in theirs["calls"]]
    differences = [(api, expected, got) for (api, expected), (_, got) in zip(theirs["calls"], ours["calls"])
                   if expected != got and api not in VERSION_DIFFERENCES]
    assert differences == []
    assert ours["variables"] == theirs["variables"]
    assert {name for _, name in theirs["calls"] if name.partition(":")[0] not in ours["nodes"]} <= {
        name for api, name in theirs["calls"] if api in VERSION_DIFFERENCES}
