"""The run config: YAML file, then CLI flags, then `key=value` overrides, validated by pydantic.

Common hyperparameters live in `RunConfig`; the `model:` section is checked by the model
class's own schema (a `ModelParams` subclass) through `resolve_config`'s lookup hook. Every
mistake becomes one `UserInputError` line naming where it came from and the full key path:
`configs/x.yaml: model.hidden1: Input should be a valid integer (got 'abc')`.
"""

from __future__ import annotations

import difflib
import re
import secrets
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from tftk.run_fields import RUN_FIELDS, RunField
from tftk.user_input import UserInputError

__all__ = ["RunConfig", "ModelParams", "SchemaLookup", "resolve_config", "validate_config",
           "parse_override", "dump_config", "apply_best_config", "load_yaml", "RUN_IDENTITY_FIELDS",
           "flatten_dotted", "expand_dotted", "set_dotted"]


class ModelParams(BaseModel):
    """Base of a model's hyperparameter schema (the `model:` section): unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


def _pydantic_field(row: RunField) -> tuple[Any, Any]:
    """A RUN_FIELDS row as create_model's (annotation, FieldInfo)."""
    if isinstance(row.default, type):  # a mutable default: a fresh one per config
        return row.annotation, Field(default_factory=row.default, description=row.description, **row.constraints)
    return row.annotation, Field(row.default, description=row.description, **row.constraints)


class RunConfig(create_model("RunConfigFields", __config__=ConfigDict(extra="forbid", protected_namespaces=()),
                             **{row.name: _pydantic_field(row) for row in RUN_FIELDS})):
    """The hyperparameters and switches every run shares (the article's main.py flags).

    Its fields are the rows of `tftk.run_fields.RUN_FIELDS`, from which the CLI's run flags come too.
    """


# Fields that describe one particular run rather than the hyperparameters worth reusing.
RUN_IDENTITY_FIELDS = frozenset({"name", "result_dir", "results_root", "best", "debug"})

SchemaLookup = Callable[[str], "type[BaseModel] | None"]


class _Loader(yaml.SafeLoader):
    """SafeLoader that also reads `1e-3` as a float (YAML 1.1 wants `1.0e-3`)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"))


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping; UserInputError naming the file if it is missing, unreadable or not a mapping."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserInputError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UserInputError(f"{path}: cannot read config file ({error})") from None
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise UserInputError(f"{path}: invalid YAML: {where}{problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UserInputError(f"{path}: the config must be a mapping of keys to values, got {type(data).__name__}")
    return data


def parse_override(text: str) -> tuple[tuple[str, ...], Any]:
    """`model.hidden1=64` -> (("model", "hidden1"), 64); the value is read as YAML (raw string if not YAML)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or any(not part.strip() for part in key.split(".")):
        raise UserInputError(f"override {text!r}: expected key=value, e.g. lr=0.01 or model.hidden1=64")
    try:
        value = yaml.load(raw, Loader=_Loader)
    except yaml.YAMLError:
        value = raw
    return tuple(part.strip() for part in key.split(".")), value


def resolve_config(path: str | Path | None, overrides: Sequence[str] = (),
                   model_schema_lookup: SchemaLookup | None = None, *,
                   flags: Mapping[str, Any] | None = None, draw_seed: bool = True) -> RunConfig:
    """Load `path` (YAML), apply `flags` (field -> value, None = not given), then `overrides` (`k=v`).

    `model_schema_lookup(model_name)` returns the pydantic class that validates the `model:`
    section (None: leave it unchecked) and may raise UserInputError for an unknown model name.
    A missing `random_seed` is drawn here (unless `draw_seed=False`, for `runs.prepare_run_dir`
    to take a resumed run's saved seed), so the resolved and saved config reproduces the run.
    """
    data: dict[str, Any] = load_yaml(path) if path is not None else {}
    origin = str(path) if path is not None else "config"
    sources: dict[tuple[str, ...], str] = {}
    for field, value in (flags or {}).items():
        if value is not None:
            data[field] = value
            sources[(field,)] = "--" + field.replace("_", "-")
    for text in overrides:
        keys, value = parse_override(text)
        set_dotted(data, keys, value, f"override {text!r}")  # repr: one line even for a value with a newline
        sources[keys] = f"override {text!r}"
    config = validate_config(data, model_schema_lookup, origin, sources)
    if config.random_seed is None and draw_seed:
        config = config.model_copy(update={"random_seed": secrets.randbelow(2**31)})
    return config


def validate_config(data: Mapping[str, Any], model_schema_lookup: SchemaLookup | None = None,
                    origin: str = "config", sources: Mapping[tuple[str, ...], str] | None = None) -> RunConfig:
    """Validate a plain mapping into a RunConfig (model section included); errors as one UserInputError line."""
    sources = sources or {}
    try:
        config = RunConfig.model_validate(data)
    except ValidationError as error:
        raise _user_error(error, RunConfig, (), origin, sources) from None
    schema = None
    if model_schema_lookup is not None:
        try:
            schema = model_schema_lookup(config.model_name)
        except UserInputError as error:
            raise UserInputError(f"{sources.get(('model_name',), origin)}: model_name: {error}") from None
    if schema is None:
        return config
    try:
        params = schema.model_validate(config.model)
    except ValidationError as error:
        raise _user_error(error, schema, ("model",), origin, sources) from None
    return config.model_copy(update={"model": params.model_dump(mode="json")})


def dump_config(config: RunConfig) -> str:
    """The config as YAML, keys in field order; `resolve_config` reads it back identically."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)


def apply_best_config(config: RunConfig, best: Mapping[str, Any],
                      model_schema_lookup: SchemaLookup | None = None) -> RunConfig:
    """The article's `config.update(best)`: hyperparameters from `best` (nested or dotted keys), run identity from `config`."""
    merged = config.model_dump(mode="json")
    for key, value in flatten_dotted(best).items():
        if key not in RUN_IDENTITY_FIELDS:
            set_dotted(merged, tuple(key.split(".")), value, "best config")
    return validate_config(merged, model_schema_lookup, "best config")


def flatten_dotted(config: Mapping[str, Any]) -> dict[str, Any]:
    """{"lr": 1, "model": {"hidden2": 8}} -> {"lr": 1, "model.hidden2": 8}: the keys overrides and samplers use."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        if key == "model" and isinstance(value, Mapping):
            flat.update({f"model.{inner}": item for inner, item in value.items()})
        else:
            flat[key] = value
    return flat


def expand_dotted(flat: Mapping[str, Any], source: str = "config") -> dict[str, Any]:
    """{"lr": 0.1, "model.hidden1": 64} -> {"lr": 0.1, "model": {"hidden1": 64}} (sections merged)."""
    data: dict[str, Any] = {}
    for key, value in flat.items():
        keys = tuple(str(key).split("."))
        if isinstance(value, Mapping):
            for inner, item in value.items():
                set_dotted(data, keys + (str(inner),), item, f"{source} key {key!r}")
        else:
            set_dotted(data, keys, value, f"{source} key {key!r}")
    return data


def set_dotted(data: dict[str, Any], keys: tuple[str, ...], value: Any, source: str) -> None:
    """data[k1][k2]... = value, creating sections; a non-section on the way is an error naming `source`."""
    node = data
    for depth, key in enumerate(keys[:-1]):
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise UserInputError(f"{source}: {'.'.join(keys[:depth + 1])} is a value, not a section")
        node = child
    node[keys[-1]] = value


def _user_error(error: ValidationError, schema: type[BaseModel], prefix: tuple[str, ...], origin: str,
                sources: Mapping[tuple[str, ...], str]) -> UserInputError:
    """All of pydantic's complaints as one line: `<source>: <key.path>: <what is wrong>; ...`."""
    lines = []
    for item in error.errors(include_url=False):
        loc = prefix + tuple(str(part) for part in item["loc"])
        source = next((sources[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in sources), origin)
        lines.append(f"{source}: {_dotted(loc)}: {_describe(item, schema, prefix)}")
    return UserInputError("; ".join(lines))


def _describe(item: dict, schema: type[BaseModel], prefix: tuple[str, ...]) -> str:
    """pydantic's message, with a suggestion for unknown keys and the offending value."""
    if item["type"] == "extra_forbidden":
        known = list(schema.model_fields) if len(item["loc"]) == 1 else []
        close = difflib.get_close_matches(str(item["loc"][-1]), known, n=1)
        hint = f" (did you mean '{_dotted(prefix + (close[0],))}'?)" if close else ""
        return f"unknown key{hint}"
    if item["type"] == "missing":
        return "required key is missing"
    return f"{item['msg']} (got {item['input']!r})"


def _dotted(loc: tuple) -> str:
    """('model', 'layers', '0') -> 'model.layers[0]'."""
    text = ""
    for part in loc:
        text += f"[{part}]" if str(part).isdigit() else (f".{part}" if text else str(part))
    return text
