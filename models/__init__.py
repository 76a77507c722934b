"""The registered models: `make_model(config)` builds the class `config.model_name` names.

Register a model by adding its class to `_CLASSES` below; its name in configs is the class name.
"""

from __future__ import annotations

import difflib

from tftk.config import ModelParams, RunConfig
from tftk.user_input import UserInputError

from models.basic_model import BasicModel
from models.conv_net import ConvNet
from models.estimator_model import EstimatorMLP
from models.mnist_mlp import MnistMLP
from models.word2vec import Word2Vec

__all__ = ["BasicModel", "make_model", "get_model_class", "model_names", "model_schema"]

_CLASSES: tuple[type[BasicModel], ...] = (MnistMLP, ConvNet, Word2Vec, EstimatorMLP)
_MODELS: dict[str, type[BasicModel]] = {cls.__name__: cls for cls in _CLASSES}


def model_names() -> list[str]:
    """The names `model_name` accepts."""
    return sorted(_MODELS)


def get_model_class(name: str) -> type[BasicModel]:
    """The model class registered as `name`; UserInputError naming the registered ones and the closest."""
    if name in _MODELS:
        return _MODELS[name]
    by_lower = {key.lower(): key for key in _MODELS}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.5)
    hint = f" (did you mean '{by_lower[close[0]]}'?)" if close else ""
    raise UserInputError(f"unknown model {name!r}{hint}; registered models: {', '.join(model_names())}")


def model_schema(name: str) -> type[ModelParams]:
    """The schema of model `name`'s `model:` config section (the lookup `resolve_config` takes)."""
    return get_model_class(name).Params


def make_model(config: RunConfig, **options) -> BasicModel:
    """Build the model `config.model_name` names (options go to its constructor, e.g. for_inference)."""
    return get_model_class(config.model_name)(config, **options)
