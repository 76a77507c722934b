"""The REST API's JSON codec gives the same answers with orjson (in the serve extra) and with the json module."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tftk.serving import json_codec


@pytest.fixture(params=["json", "orjson"])
def codec(request, monkeypatch):
    """A fresh copy of tftk.serving.json_codec on the given backend."""
    if request.param == "orjson":
        pytest.importorskip("orjson", reason="orjson (the serve extra) is not installed")
    else:
        monkeypatch.setitem(sys.modules, "orjson", None)  # import orjson fails: the json fallback
    spec = importlib.util.spec_from_file_location("json_codec_under_test", json_codec.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.BACKEND == request.param
    return module


@pytest.mark.parametrize("body, value", [
    (b'{"instances": [[0.5, 1, -2e-3]], "signature_name": "s"}',
     {"instances": [[0.5, 1, -0.002]], "signature_name": "s"}),
    ('{"b": "\u00e9\u4e2d", "n": null, "t": true}'.encode(), {"b": "\u00e9\u4e2d", "n": None, "t": True}),
    (b" [1, 2] ", [1, 2]),
], ids=["numbers", "unicode", "whitespace"])
def test_loads(codec, body, value):
    assert codec.loads(body) == value


@pytest.mark.parametrize("body", [b'{"x": NaN}', b'{"x": -Infinity}', b"[" * 100_000 + b"]" * 100_000,
                                  b"\xff\xfe{}", b'{"x": 1', b""],
                         ids=["nan", "infinity", "deep", "not-utf8", "truncated", "empty"])
def test_what_is_not_json_is_refused(codec, body):
    with pytest.raises((ValueError, RecursionError)):
        codec.loads(body)


@pytest.mark.parametrize("value", [
    {"predictions": [{"classes": 3, "probabilities": [0.1, 0.25, 1e-08]}], "model_spec": {"version": "20"}},
    {"error": "b\u00e9d \"quote\"\n"},
    {"outputs": [[1, 2], [3, 4]], "empty": [], "flag": False},
], ids=["prediction", "escapes", "nested"])
def test_dumps_is_compact_and_round_trips(codec, value):
    text = codec.dumps(value)
    assert isinstance(text, bytes) and b", " not in text and b'": ' not in text  # compact
    assert codec.loads(text) == value
