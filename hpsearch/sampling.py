"""Deterministic configs and seeds: both derive from (search seed, bracket, index) alone, so a resumed
or repeated search samples exactly the same trials whatever order they ran in."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable

from tftk.user_input import UserInputError

__all__ = ["Sampler", "trial_seed", "sample_config", "to_json_config"]

if TYPE_CHECKING:  # numpy loads when a trial is sampled, not when hpsearch is imported
    import numpy as np

Sampler = Callable[["np.random.Generator", dict], dict]


def trial_seed(search_seed: int, bracket: int, index: int) -> int:
    """The seed a trial trains with (a 31-bit int, usable by any library)."""
    import numpy as np

    return int(np.random.SeedSequence([search_seed, bracket, index, 0]).generate_state(1)[0] >> 1)


def _plain(value: Any) -> Any:
    """numpy scalars/arrays to JSON types (a sampler built on numpy returns them)."""
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def to_json_config(config: dict) -> dict:
    """`config` with plain JSON values, or a UserInputError naming the bad key."""
    if not isinstance(config, dict):
        raise UserInputError(f"a config must be a dict, got {type(config).__name__}")
    plain = {}
    for key, value in config.items():
        try:
            plain[str(key)] = json.loads(json.dumps(value, default=_plain))
        except (TypeError, ValueError) as err:
            raise UserInputError(f"config key {key!r}: value {value!r} cannot be stored as JSON ({err})") from None
    return plain


def sample_config(sampler: Sampler, search_seed: int, bracket: int, index: int, fixed_params: dict) -> dict:
    """The config of trial (bracket, index): sampler(rng, fixed_params) with fixed_params forced on top."""
    import numpy as np

    rng = np.random.default_rng(np.random.SeedSequence([search_seed, bracket, index, 1]))
    config = dict(sampler(rng, dict(fixed_params)))
    config.update(fixed_params)
    return to_json_config(config)
