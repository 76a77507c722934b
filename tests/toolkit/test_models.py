"""The model registry, get_random_config, train_to (hpsearch's entry point), ConvNet and Word2Vec."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models import get_model_class, make_model, model_names, model_schema
from tftk.config import resolve_config, validate_config
from tftk.user_input import UserInputError
from tftk.runs import read_metrics
from tftk.config import expand_dotted as _expand_dotted
from tftk.training_loop import run_trial, train_to

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))


def test_registry_names_and_unknown_name_suggestion():
    assert model_names() == ["ConvNet", "EstimatorMLP", "MnistMLP", "Word2Vec"]
    assert get_model_class("Word2Vec").__name__ == "Word2Vec"
    with pytest.raises(UserInputError) as error:
        get_model_class("mnistmlp")
    assert str(error.value) == ("unknown model 'mnistmlp' (did you mean 'MnistMLP'?); "
                                "registered models: ConvNet, EstimatorMLP, MnistMLP, Word2Vec")
    with pytest.raises(UserInputError, match=r"^unknown model 'zzz'; registered models"):
        get_model_class("zzz")


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_every_shipped_config_validates_with_its_models_schema(path):
    config = resolve_config(path, (), model_schema)
    assert set(config.model) == set(model_schema(config.model_name).model_fields)


def test_configs_cover_every_model_and_the_default():
    names = {resolve_config(p, (), model_schema).model_name for p in CONFIGS}
    assert names == set(model_names())
    default = resolve_config(ROOT / "configs" / "digits_mlp.yaml", (), model_schema)
    assert (default.model_name, default.dataset) == ("MnistMLP", "digits")


@pytest.mark.parametrize("name", ["MnistMLP", "ConvNet", "Word2Vec"])
def test_random_configs_are_reproducible_valid_and_keep_fixed_params(name):
    cls = get_model_class(name)
    first = cls.get_random_config({"lr": 0.125}, np.random.default_rng(5))
    assert first == cls.get_random_config({"lr": 0.125}, np.random.default_rng(5))
    assert first["lr"] == 0.125
    draws = [cls.get_random_config({}, np.random.default_rng(seed)) for seed in range(8)]
    assert len({tuple(sorted(d.items())) for d in draws}) > 1
    for draw in draws:  # every key is a real field of the run config or of the model section
        validate_config({"model_name": name, **_expand_dotted(draw)}, model_schema)


def test_expand_dotted_merges_model_sections():
    assert _expand_dotted({"lr": 0.1, "model": {"hidden2": 8}, "model.hidden1": 16}) == \
        {"lr": 0.1, "model": {"hidden2": 8, "hidden1": 16}}


MLP_TRIAL = {"model_name": "MnistMLP", "dataset": "digits", "lr": 0.5, "batch_size": 50, "nb_units": 32,
             "initial_stddev": 0.1, "save_every": 0, "log_every": 50, "model.hidden2": 16}


def test_train_to_continues_a_trial_from_its_checkpoint(tmp_path):
    """hpsearch trains 50 then 150 iterations in one folder: the same as 150 at once."""
    assert run_trial(dict(MLP_TRIAL), 50, tmp_path / "rungs", 11) == read_metrics(tmp_path / "rungs")[-1][
        "validation_accuracy"]
    in_rungs = train_to(MLP_TRIAL, 150, tmp_path / "rungs", 11)
    at_once = train_to(MLP_TRIAL, 150, tmp_path / "once", 11)
    assert in_rungs == at_once > 0.5  # it trained (chance is 0.1; 150 steps at lr 0.5 reach 0.65-0.95 by seed)
    assert [r["step"] for r in read_metrics(tmp_path / "rungs")] == [50, 50, 100, 150, 150]


def test_train_to_negates_a_lower_is_better_metric(tmp_path):
    trial = {**MLP_TRIAL, "metric": "test_accuracy", "metric_mode": "min"}
    assert train_to(trial, 20, tmp_path, 1) == -read_metrics(tmp_path)[-1]["test_accuracy"]


def test_train_to_names_a_metric_the_model_does_not_report(tmp_path):
    with pytest.raises(UserInputError, match="MnistMLP reports no 'bleu' .*validation_accuracy"):
        train_to({**MLP_TRIAL, "metric": "bleu"}, 1, tmp_path, 1)


def test_convnet_trains_on_digits_and_infers(tmp_path):
    config = resolve_config(ROOT / "configs" / "digits_convnet.yaml",
                            ["max_iter=80", "save_every=0", "log_every=40", f"result_dir={tmp_path}", "lr=0.01",
                             "model.conv1_filters=8", "model.conv2_filters=8", "nb_units=32", "random_seed=2"],
                            model_schema)
    model = make_model(config)
    model.log = lambda line: None
    assert model.logits.shape.as_list() == [None, 10]
    assert [op.name for op in model.graph.get_operations() if op.type == "LRN"] == ["conv1/LRN", "conv2/LRN"]
    before = model.evaluate()["validation_accuracy"]
    outcome = model.train()
    assert outcome["metrics"]["validation_accuracy"] > max(before, 0.7)  # 0.80 when written
    images = model.data_sets.test.images[:7]
    predictions = model.infer(images)
    np.testing.assert_array_equal(predictions, np.argmax(model.sess.run(model.logits, {model.images_placeholder: images}), 1))
    model.close()


def test_word2vec_groups_words_by_category_and_fills_the_projector(tmp_path):
    config = resolve_config(ROOT / "configs" / "word2vec.yaml",
                            ["max_iter=800", "save_every=0", f"result_dir={tmp_path}", "random_seed=4"], model_schema)
    model = make_model(config)
    lines = []
    model.log = lines.append
    chance = model.evaluate()["neighbour_accuracy"]
    outcome = model.train()
    assert chance < 0.5 and outcome["metrics"]["neighbour_accuracy"] >= 0.9, (chance, outcome)
    assert any(line.startswith("Nearest to the:") for line in lines)
    assert "embeddings" in (tmp_path / "projector_config.pbtxt").read_text()
    metadata = (tmp_path / "00800" / "embeddings" / "metadata.tsv").read_text().split()
    assert metadata == model.vocabulary
    cat = model.word_ids["cat"]
    assert model.infer(np.array(["cat"]))[0] in {"dog", "horse", "cow", "sheep", "goat", "mouse", "rabbit"}
    assert model.infer(np.array([cat]))[0] == model.infer(np.array(["cat"]))[0]
    with pytest.raises(UserInputError, match="words not in the vocabulary: unicorn"):
        model.infer(np.array(["unicorn"]))
    model.close()


def test_word2vec_rejects_an_image_dataset(tmp_path):
    config = resolve_config(ROOT / "configs" / "word2vec.yaml", ["dataset=digits", f"result_dir={tmp_path}"],
                            model_schema)
    with pytest.raises(UserInputError, match="Word2Vec trains on 'synthetic_text' or an existing .txt file"):
        get_model_class("Word2Vec").check_config(config)
