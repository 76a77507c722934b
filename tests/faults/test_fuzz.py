"""Fuzzing (issue 14 checks) with hypothesis: the config loader, the checkpoint readers and the cluster wire
answer any input with their documented one-line errors, never another exception.

CI runs a few hundred examples per target; `TFTK_FUZZ_EXAMPLES=20000 pytest tests/faults/test_fuzz.py`
runs a longer campaign.
"""

from __future__ import annotations

import os
import socket
import struct
import threading

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis", reason="the fuzz tests need hypothesis (pip install -e '.[test]')")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from tftk.config import parse_override, resolve_config  # noqa: E402
from tftk.distributed import wire  # noqa: E402
from tftk.framework.errors import DataLossError, OpError  # noqa: E402
from tftk.runs import read_metrics  # noqa: E402
from tftk.train.checkpoint_io import load_arrays, save_arrays  # noqa: E402
from tftk.train.checkpoint_state import get_checkpoint_state  # noqa: E402
from tftk.user_input import UserInputError  # noqa: E402
from models import model_schema  # noqa: E402
from hpsearch.journal import read_journal  # noqa: E402

FUZZ = settings(max_examples=int(os.environ.get("TFTK_FUZZ_EXAMPLES", "60")), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
YAMLISH = st.text(alphabet=st.sampled_from(list("abcdelmnort_:.-[]{}'\"#&*!|>%@ \n\t0123456789e+")), max_size=200)
CONFIG_KEYS = st.sampled_from(["model_name", "lr", "max_iter", "batch_size", "model", "model.hidden1", "model.hidden2",
                               "dataset", "name", "metric_mode", "random_seed", "threads", "nope", "model.nope"])
VALUES = st.one_of(st.integers(-10**20, 10**20), st.floats(allow_nan=True), st.text(max_size=20), st.booleans(),
                   st.none(), st.lists(st.integers(), max_size=3))


@FUZZ
@given(text=YAMLISH)
def test_config_loader_on_any_text(tmp_path, text):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    try:
        resolve_config(path, (), model_schema)
    except UserInputError as error:
        assert "\n" not in str(error).strip() and str(error).startswith(str(path))


@FUZZ
@given(pairs=st.lists(st.tuples(CONFIG_KEYS, VALUES), max_size=6))
def test_config_overrides_of_any_value(tmp_path, pairs):
    path = tmp_path / "config.yaml"
    path.write_text("model_name: MnistMLP\n")
    overrides = [f"{key}={value}" for key, value in pairs]
    try:
        config = resolve_config(path, overrides, model_schema)
    except UserInputError as error:
        assert "\n" not in str(error).strip()
    else:
        assert config.lr > 0 and np.isfinite(config.lr)


@FUZZ
@given(text=st.text(max_size=60))
def test_override_parser_on_any_text(text):
    try:
        keys, _ = parse_override(text)
    except UserInputError:
        return
    assert keys and all(keys)


def _valid_checkpoint(folder) -> bytes:
    save_arrays(folder / "model.ckpt-1", {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "step": np.int64(1)})
    return (folder / "model.ckpt-1.npz").read_bytes()


@FUZZ
@given(data=st.data())
def test_checkpoint_reader_on_mutated_files(tmp_path, data):
    blob = bytearray(_valid_checkpoint(tmp_path))
    for _ in range(data.draw(st.integers(1, 8))):
        position = data.draw(st.integers(0, len(blob) - 1))
        blob[position] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(blob)))
    (tmp_path / "model.ckpt-1.npz").write_bytes(bytes(blob[:cut]))
    try:
        arrays = load_arrays(tmp_path / "model.ckpt-1")
    except DataLossError:
        return
    assert set(arrays) <= {"w", "step"}  # what it returns is what was saved, never garbage shapes
    if "w" in arrays:
        assert arrays["w"].shape == (2, 3)


@FUZZ
@given(text=st.text(alphabet=st.sampled_from(list('model_chekpoint_ths:"\\/. 0123456789\n')), max_size=200))
def test_checkpoint_state_reader_on_any_text(tmp_path, text):
    (tmp_path / "checkpoint").write_text(text)
    try:
        get_checkpoint_state(tmp_path)
    except DataLossError:
        pass


@FUZZ
@given(blob=st.binary(max_size=300))
def test_metrics_and_journal_readers_on_any_bytes(tmp_path, blob):
    (tmp_path / "metrics.jsonl").write_bytes(blob)
    (tmp_path / "journal.jsonl").write_bytes(blob)
    for read in (lambda: read_metrics(tmp_path), lambda: read_journal(tmp_path / "journal.jsonl")):
        try:
            read()
        except (DataLossError, UnicodeDecodeError) as error:
            assert isinstance(error, OpError) or isinstance(error, UnicodeDecodeError)


HEADERS = st.one_of(
    st.binary(max_size=200),
    st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
                 lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner,
                                                                                       max_size=4)),
                 max_leaves=20).map(lambda value: __import__("json").dumps(value).encode()),
    st.builds(lambda dtype, shape: __import__("json").dumps({"arrays": [{"dtype": dtype, "shape": shape}]}).encode(),
              st.sampled_from(["<f4", "<i8", "|b1", "O", "<U3", "V8", "xx", "<c16"]),
              st.lists(st.integers(-2, 2**40), max_size=4)))


@FUZZ
@given(head=HEADERS, tail=st.binary(max_size=64), declared=st.one_of(st.none(), st.integers(0, 2**64 - 1)))
def test_wire_on_any_bytes(head, tail, declared):
    """recv_message returns a message or raises MalformedMessage / ConnectionError; nothing else, and it never
    waits for more than the bytes sent (the sender closes)."""
    ours, theirs = socket.socketpair()
    length = len(head) if declared is None else declared
    sender = threading.Thread(target=lambda: (theirs.sendall(struct.pack("<Q", length) + head + tail),
                                               theirs.shutdown(socket.SHUT_WR)))
    sender.start()
    try:
        header, arrays = wire.recv_message(ours)
        assert isinstance(header, dict) and all(a is None or isinstance(a, np.ndarray) for a in arrays)
    except (wire.MalformedMessage, ConnectionError):
        pass
    finally:
        sender.join()
        ours.close()
        theirs.close()
