"""JSON answers from output arrays: TF Serving's row and columnar formats, non-finite values as its strings."""

from __future__ import annotations

import numpy as np
import pytest

from tftk.serving.tensors import json_outputs


@pytest.mark.parametrize("outputs, rows, expected", [
    ({"p": np.array([[0.5, 0.25]], np.float32)}, True, {"predictions": [[0.5, 0.25]]}),
    ({"p": np.array([[np.nan, np.inf, -np.inf, 1.0]], np.float32)}, True,
     {"predictions": [["NaN", "Infinity", "-Infinity", 1.0]]}),
    # finite values whose squares overflow take the careful path and stay numbers
    ({"p": np.array([1e200, -1e300, 0.0])}, False, {"outputs": [1e200, -1e300, 0.0]}),
    ({"p": np.array([3e38, np.nan], np.float32)}, False, {"outputs": [float(np.float32(3e38)), "NaN"]}),
    ({"p": np.zeros((0, 3), np.float32)}, False, {"outputs": []}),
    ({"c": np.array([3, 1]), "p": np.array([[0.5], [np.inf]])}, True,
     {"predictions": [{"c": 3, "p": [0.5]}, {"c": 1, "p": ["Infinity"]}]}),
    ({"c": np.array([3, 1]), "p": np.array([[0.5], [1.0]])}, False, {"outputs": {"c": [3, 1], "p": [[0.5], [1.0]]}}),
], ids=["row", "nonfinite", "huge-finite", "float32-huge-and-nan", "empty", "rows-of-outputs", "columnar"])
def test_json_outputs(outputs, rows, expected):
    assert json_outputs(outputs, rows) == expected
