"""The run config's fields as one plain table: `tftk.config.RunConfig` is built from it, and the CLI
generates its run flags (`--lr`, `--max-iter`, ...) from the rows marked `flag`.

A plain table rather than the pydantic class itself, so that `tftk --help` and shell completion
read the flags without importing pydantic (a tenth of a second). Add a field here once; the config
model, its validation and (with `flag=True`) the command-line option follow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union, get_args, get_origin

__all__ = ["RunField", "RUN_FIELDS", "REQUIRED"]

REQUIRED = ...  # the default of a field the config must give


@dataclass(frozen=True)
class RunField:
    """One field of RunConfig: its type, default, help text, pydantic constraints, and whether it is a flag."""

    name: str
    annotation: Any
    default: Any
    description: str
    constraints: dict[str, Any] = field(default_factory=dict)
    flag: bool = False

    @property
    def option_type(self) -> Any:
        """The type a command-line option parses: `X` for `Optional[X]` (an absent flag is None anyway)."""
        args = [arg for arg in get_args(self.annotation) if arg is not type(None)]
        return args[0] if get_origin(self.annotation) is Union and len(args) == 1 else self.annotation

    @property
    def option(self) -> str:
        """The command-line spelling: `max_iter` -> `--max-iter`."""
        return "--" + self.name.replace("_", "-")


RUN_FIELDS: tuple[RunField, ...] = (
    RunField("model_name", str, REQUIRED, "registered model class to train", flag=True),
    RunField("name", Optional[str], None, "suffix of the new run folder's name",
             {"pattern": r"^[A-Za-z0-9._-]+$"}, flag=True),
    RunField("dataset", str, "digits", "dataset name (tftk download-data lists them)", flag=True),
    RunField("data_dir", str, "data", "where downloaded datasets live"),
    RunField("results_root", str, "results", "runs go to <results_root>/<model_name>/"),
    RunField("result_dir", Optional[str], None, "run folder (an existing one is resumed); "
             "default <results_root>/<model>/<time>[-name]", flag=True),
    RunField("lr", float, 1e-3, "learning rate", {"gt": 0, "allow_inf_nan": False}, flag=True),
    RunField("max_iter", int, 2000, "number of training steps", {"ge": 0}, flag=True),
    RunField("batch_size", int, 100, "examples per step", {"gt": 0}, flag=True),
    RunField("nb_units", int, 20, "hidden units (models may refine this in model:)", {"gt": 0}, flag=True),
    RunField("initial_mean", float, 0.0, "mean of the initial weights", {"allow_inf_nan": False}, flag=True),
    RunField("initial_stddev", float, 1e-2, "standard deviation of the initial weights",
             {"ge": 0, "allow_inf_nan": False}, flag=True),
    RunField("random_seed", Optional[int], None, "seed for graph, numpy and Numba; drawn if absent",
             {"ge": 0}, flag=True),
    RunField("best", bool, False, "take the searched hyperparameters from the stored best config "
             "(explicit flags and overrides win)", flag=True),
    RunField("debug", bool, False, "print the resolved config and show tracebacks", flag=True),
    RunField("save_every", int, 1000, "checkpoint every N steps (<= 0: only at the end)"),
    RunField("log_every", int, 100, "status line and metrics every N steps", {"gt": 0}),
    RunField("max_to_keep", int, 5, "checkpoints kept (0: all)", {"ge": 0}),
    RunField("threads", int, 0, "intra/inter-op threads (0: library default)", {"ge": 0}),
    RunField("metric", str, "validation_accuracy", "metrics key that ranks runs for the best config"),
    RunField("metric_mode", Literal["max", "min"], "max", "whether a higher metric is better"),
    RunField("model", dict[str, Any], dict, "the model's own hyperparameters"),
)
