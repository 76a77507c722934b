"""The journal survives a torn last line; configs and seeds depend on (seed, bracket, index) only."""

import json

import numpy as np
import pytest

from hpsearch.journal import Journal, read_journal
from hpsearch.sampling import sample_config, to_json_config, trial_seed
from tftk.framework.errors import DataLossError
from tftk.user_input import UserInputError
from hpsearch_toys import sample_lr


def test_torn_last_line_is_dropped_and_cut(tmp_path):
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.append({"event": "a"})
    journal.close()
    with open(path, "a") as handle:
        handle.write('{"event": "b", "tr')  # killed mid-append
    assert read_journal(path) == [{"event": "a"}]
    journal = Journal(path)
    journal.append({"event": "c"})
    journal.close()
    assert read_journal(path) == [{"event": "a"}, {"event": "c"}]


def test_corrupt_middle_line_is_an_error(tmp_path):
    path = tmp_path / "journal.jsonl"
    path.write_text('{"event": "a"}\nnot json\n{"event": "b"}\n')
    with pytest.raises(DataLossError, match="journal.jsonl:2: corrupt journal line"):
        read_journal(path)


def test_same_seed_same_configs_in_any_order():
    forward = [sample_config(sample_lr, 7, 3, i, {}) for i in range(5)]
    backward = [sample_config(sample_lr, 7, 3, i, {}) for i in reversed(range(5))][::-1]
    assert forward == backward
    assert sample_config(sample_lr, 8, 3, 0, {}) != forward[0]
    assert sample_config(sample_lr, 7, 2, 0, {}) != forward[0]
    assert trial_seed(7, 3, 1) == trial_seed(7, 3, 1) != trial_seed(7, 3, 2)


def test_fixed_params_override_every_sample():
    config = sample_config(sample_lr, 1, 0, 0, {"lr": 0.5, "extra": "x"})
    assert config["lr"] == 0.5 and config["extra"] == "x" and 1 <= config["units"] <= 63


def test_numpy_values_become_json_and_others_are_refused():
    config = to_json_config({"a": np.float32(0.5), "b": np.int64(3), "c": np.arange(2)})
    assert json.dumps(config) == '{"a": 0.5, "b": 3, "c": [0, 1]}'
    with pytest.raises(UserInputError, match="config key 'f': value <built-in function len> cannot be stored as JSON"):
        to_json_config({"f": len})
