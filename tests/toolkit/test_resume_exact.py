"""A resumed run is the run it would have been (issue 14 item 3): every random stream (dropout masks, sampled
candidates, data shuffling) is in the checkpoint, for every shipped model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models import model_names, model_schema
from tftk.config import resolve_config
from tftk.train.checkpoint_io import load_arrays
from tftk.train.checkpoint_state import latest_checkpoint
from tftk.training_loop import train_run

ROOT = Path(__file__).resolve().parents[2]
# Each shipped model, small: (config file, overrides). ConvNet keeps its dropout (keep_prob 0.7).
SHIPPED = {
    "MnistMLP": ("digits_mlp.yaml", ["nb_units=16"]),
    "ConvNet": ("digits_convnet.yaml", ["nb_units=16", "model.conv1_filters=4", "model.conv2_filters=4",
                                        "batch_size=20"]),
    "Word2Vec": ("word2vec.yaml", ["model.sentences=200", "batch_size=32"]),
    "EstimatorMLP": ("digits_estimator_mlp.yaml", ["nb_units=16"]),
}


def test_every_shipped_model_is_covered():
    assert sorted(SHIPPED) == model_names()


def _train(tmp_path: Path, name: str, folder: str, max_iter: int):
    path, overrides = SHIPPED[name]
    config = resolve_config(ROOT / "configs" / path, [*overrides, "save_every=10", "log_every=10", "random_seed=123",
                                                      f"max_iter={max_iter}", f"result_dir={tmp_path / folder}",
                                                      f"results_root={tmp_path}"], model_schema)
    return train_run(config, update_best=False, log=lambda line: None)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_resumed_run_is_bit_identical(tmp_path, name):
    _train(tmp_path, name, "straight", 40)
    _train(tmp_path, name, "resumed", 25)  # stops between two checkpoints: saved at 25
    resumed = _train(tmp_path, name, "resumed", 40)
    assert resumed.start_step == 25
    straight, again = load_arrays(latest_checkpoint(tmp_path / "straight")), load_arrays(latest_checkpoint(resumed.run_dir))
    assert straight.keys() == again.keys()
    for key in straight:
        np.testing.assert_array_equal(again[key], straight[key], err_msg=key)
    # The same records, but for the first leg's own final evaluation at its max_iter (step 25).
    extended = [line for line in (resumed.run_dir / "metrics.jsonl").read_text().splitlines()
                if not line.startswith('{"step": 25,')]
    assert (tmp_path / "straight" / "metrics.jsonl").read_text().splitlines() == extended
