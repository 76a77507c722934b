"""Run config: YAML + flags + key=value overrides, model-section hook, one-line errors, YAML round trip."""

from __future__ import annotations

import pytest

from tftk.config import (ModelParams, RunConfig, apply_best_config, dump_config, parse_override,
                         resolve_config)
from tftk.user_input import UserInputError


class MLPParams(ModelParams):
    hidden1: int = 128
    hidden2: int = 32
    activation: str = "relu"


def lookup(name):
    if name == "MnistMLP":
        return MLPParams
    if name == "Free":
        return None
    raise UserInputError(f"unknown model '{name}' (did you mean 'MnistMLP'?)")


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("model_name: MnistMLP\nlr: 1e-3\nmax_iter: 50\nmodel:\n  hidden1: 64\n")
    return path


def test_file_then_flags_then_overrides(config_file):
    config = resolve_config(config_file, ["model.hidden2=16", "batch_size=10", "lr=0.5"], lookup,
                            flags={"lr": 0.25, "max_iter": 7, "debug": None, "random_seed": 3})
    assert (config.lr, config.max_iter, config.batch_size, config.random_seed) == (0.5, 7, 10, 3)
    assert config.debug is False  # None means the flag was not given
    assert config.model == {"hidden1": 64, "hidden2": 16, "activation": "relu"}  # schema defaults filled


def test_defaults_follow_the_article(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("model_name: Free\n")
    config = resolve_config(path, [], lookup)
    assert (config.lr, config.nb_units, config.max_iter, config.initial_mean, config.initial_stddev) == \
        (1e-3, 20, 2000, 0.0, 1e-2)
    assert config.best is False and config.debug is False and config.dataset == "digits"
    assert isinstance(config.random_seed, int)  # drawn, so the saved config reproduces the run
    assert resolve_config(path, [], lookup, draw_seed=False).random_seed is None


def test_override_values_are_yaml_scalars(config_file):
    config = resolve_config(config_file, ["model_name=Free", "model.layers=[64, 32]", "model.flag=true",
                                          "model.rate=2e-4", "model.tag=abc", "name=exp-1", "model.none=~"], lookup)
    assert config.model == {"hidden1": 64, "layers": [64, 32], "flag": True, "rate": 2e-4, "tag": "abc",
                            "none": None}
    assert config.name == "exp-1"


def test_dump_then_resolve_is_identical(config_file, tmp_path):
    config = resolve_config(config_file, ["model.activation=tanh", "initial_stddev=1e-05", "name=a.b"], lookup)
    again = tmp_path / "again.yaml"
    again.write_text(dump_config(config))
    assert resolve_config(again, [], lookup) == config
    assert dump_config(resolve_config(again, [], lookup)) == dump_config(config)


@pytest.mark.parametrize("overrides, message", [
    (["lrr=3"], "override 'lrr=3': lrr: unknown key (did you mean 'lr'?)"),
    (["model.hiden1=3"], "override 'model.hiden1=3': model.hiden1: unknown key (did you mean 'model.hidden1'?)"),
    (["model.hidden1=abc"], "override 'model.hidden1=abc': model.hidden1: Input should be a valid integer, "
                            "unable to parse string as an integer (got 'abc')"),
    (["lr=-1"], "override 'lr=-1': lr: Input should be greater than 0 (got -1)"),
    (["lr"], "override 'lr': expected key=value, e.g. lr=0.01 or model.hidden1=64"),
    (["model..x=1"], "override 'model..x=1': expected key=value, e.g. lr=0.01 or model.hidden1=64"),
    (["lr.x=1"], "override 'lr.x=1': lr is a value, not a section"),
    (["model_name=MnistMPL"], "override 'model_name=MnistMPL': model_name: unknown model 'MnistMPL' "
                              "(did you mean 'MnistMLP'?)"),
    (["name=a/b"], "override 'name=a/b': name: String should match pattern '^[A-Za-z0-9._-]+$' (got 'a/b')"),
])
def test_bad_overrides_name_the_override_and_key(config_file, overrides, message):
    with pytest.raises(UserInputError) as caught:
        resolve_config(config_file, overrides, lookup)
    assert str(caught.value) == message


def test_bad_flag_value_names_the_flag(config_file):
    with pytest.raises(UserInputError, match=r"^--batch-size: batch_size: Input should be greater than 0 \(got 0\)$"):
        resolve_config(config_file, [], lookup, flags={"batch_size": 0})


@pytest.mark.parametrize("text, message", [
    ("model_name: MnistMLP\nbatchsize: 3\n", "{f}: batchsize: unknown key (did you mean 'batch_size'?)"),
    ("model_name: MnistMLP\nmodel:\n  hidden1: [1]\n", "{f}: model.hidden1: Input should be a valid integer (got [1])"),
    ("lr: 0.1\n", "{f}: model_name: required key is missing"),
    ("model_name: MnistMLP\nlr: [1,\n", "{f}: invalid YAML: line 3, column 1: expected the node content, "
                                       "but found '<stream end>'"),
    ("- 1\n", "{f}: the config must be a mapping of keys to values, got list"),
    ("model_name: MnistMLP\nmodel: 3\n", "{f}: model: Input should be a valid dictionary (got 3)"),
    ("model_name: MnistMLP\nmax_iter: 1.5\nbest: maybe\n", "{f}: max_iter: Input should be a valid integer, got a "
     "number with a fractional part (got 1.5); {f}: best: Input should be a valid boolean, unable to interpret "
     "input (got 'maybe')"),
])
def test_bad_files_name_the_file_and_key(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(UserInputError) as caught:
        resolve_config(path, [], lookup)
    assert str(caught.value) == message.format(f=path)
    assert "\n" not in str(caught.value)


def test_missing_file(tmp_path):
    with pytest.raises(UserInputError, match=r"nope\.yaml: config file not found$"):
        resolve_config(tmp_path / "nope.yaml")


def test_parse_override():
    assert parse_override("model.hidden1=64") == (("model", "hidden1"), 64)
    assert parse_override("lr=1e-3") == (("lr",), 1e-3)
    assert parse_override("name=a: b") == (("name",), {"a": "b"})
    assert parse_override("name=[unclosed") == (("name",), "[unclosed")


def test_apply_best_config_keeps_the_run_identity(config_file, tmp_path):
    config = resolve_config(config_file, ["name=mine", "result_dir=somewhere", "best=true"], lookup)
    best = RunConfig(model_name="MnistMLP", lr=0.3, name="other", result_dir="elsewhere",
                     model={"hidden1": 7}).model_dump(mode="json")
    merged = apply_best_config(config, best, lookup)
    assert (merged.lr, merged.model["hidden1"], merged.name, merged.result_dir, merged.best) == \
        (0.3, 7, "mine", "somewhere", True)
