"""`tf.estimator.WarmStartSettings` and `warm_start`: variables start from another run's checkpoint.

Warm-starting rewrites the chosen variables' initializers (`tf.train.init_from_checkpoint`), so it
matters only when model_dir has no checkpoint yet: a restore overrides any initializer, as in TF.
"""

from __future__ import annotations

import collections
import os
import re
from typing import Any, Mapping, Sequence

from tftk.framework.ops import GraphKeys, get_collection
from tftk.ops.variables import Variable
from tftk.train.checkpoint_utils import init_from_checkpoint

__all__ = ["WarmStartSettings", "warm_start", "warm_start_settings"]


class WarmStartSettings(collections.namedtuple("WarmStartSettings", [
        "ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info", "var_name_to_prev_var_name"])):
    """Args:
      ckpt_to_initialize_from: a checkpoint prefix or a folder holding checkpoints.
      vars_to_warm_start: a regex over TRAINABLE variable names (default '.*': all of them), a list of
        regexes over GLOBAL variable names, a list of Variables, or None (nothing).
      var_name_to_vocab_info: vocabulary remapping; not supported (must be empty).
      var_name_to_prev_var_name: variable name -> its name in the checkpoint, where they differ.
    """

    def __new__(cls, ckpt_to_initialize_from: str | os.PathLike, vars_to_warm_start: Any = ".*",
                var_name_to_vocab_info: Mapping[str, Any] | None = None,
                var_name_to_prev_var_name: Mapping[str, str] | None = None) -> "WarmStartSettings":
        if not ckpt_to_initialize_from:
            raise ValueError("WarmStartSettings: ckpt_to_initialize_from must name a checkpoint or a folder")
        if var_name_to_vocab_info:
            raise ValueError("WarmStartSettings: var_name_to_vocab_info (vocabulary remapping) is not supported "
                             "by tftk; warm-start those variables another way or leave them out")
        return super().__new__(cls, os.fspath(ckpt_to_initialize_from), vars_to_warm_start,
                               dict(var_name_to_vocab_info or {}), dict(var_name_to_prev_var_name or {}))


def warm_start_settings(warm_start_from: Any) -> WarmStartSettings | None:
    """Estimator's `warm_start_from` as settings: a SavedModel folder means its variables checkpoint."""
    if warm_start_from is None or isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        path = os.fsdecode(warm_start_from)
        variables = os.path.join(path, "variables", "variables")
        if os.path.exists(variables + ".index"):
            return WarmStartSettings(variables)
        return WarmStartSettings(path)
    raise ValueError(f"warm_start_from must be a path or a tf.estimator.WarmStartSettings, given {warm_start_from!r}")


def _chosen_variables(vars_to_warm_start: Any) -> list[Variable]:
    if vars_to_warm_start is None:
        return []
    if isinstance(vars_to_warm_start, str):
        pattern = re.compile(vars_to_warm_start)
        return [v for v in get_collection(GraphKeys.TRAINABLE_VARIABLES) if pattern.match(v.op.name)]
    if isinstance(vars_to_warm_start, Sequence) and all(isinstance(v, str) for v in vars_to_warm_start):
        chosen: dict[str, Variable] = {}
        for text in vars_to_warm_start:
            pattern = re.compile(text)
            chosen.update({v.op.name: v for v in get_collection(GraphKeys.GLOBAL_VARIABLES) if pattern.match(v.op.name)})
        return list(chosen.values())
    if isinstance(vars_to_warm_start, Sequence) and all(isinstance(v, Variable) for v in vars_to_warm_start):
        return list(vars_to_warm_start)
    raise ValueError(f"vars_to_warm_start must be a regex, a list of regexes, a list of Variables or None; "
                     f"given {vars_to_warm_start!r}")


def warm_start(ckpt_to_initialize_from: str | os.PathLike, vars_to_warm_start: Any = ".*",
               var_name_to_vocab_info: Mapping[str, Any] | None = None,
               var_name_to_prev_var_name: Mapping[str, str] | None = None) -> None:
    """Make the chosen variables of the default graph initialise from the checkpoint."""
    settings = WarmStartSettings(ckpt_to_initialize_from, vars_to_warm_start, var_name_to_vocab_info,
                                 var_name_to_prev_var_name)
    renames = settings.var_name_to_prev_var_name
    variables = _chosen_variables(settings.vars_to_warm_start)
    unused = sorted(set(renames) - {v.op.name for v in variables})
    if unused:
        raise ValueError(f"var_name_to_prev_var_name names variables that are not warm-started: {unused}")
    if variables:
        init_from_checkpoint(settings.ckpt_to_initialize_from,
                             {renames.get(v.op.name, v.op.name): v for v in variables})
