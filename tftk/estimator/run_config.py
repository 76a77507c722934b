"""`tf.estimator.RunConfig`: where an Estimator writes, how often it checkpoints, summarises and logs.

One process, one chief: a TF_CONFIG environment naming a cluster is refused with a clear error
rather than silently trained as a single worker.
"""

from __future__ import annotations

import json
import os
from typing import Any

__all__ = ["RunConfig"]

_USE_DEFAULT = object()
_REPLACEABLE = ("model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
                "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
                "keep_checkpoint_every_n_hours", "log_step_count_steps", "train_distribute", "device_fn",
                "protocol", "eval_distribute", "experimental_distribute", "experimental_max_worker_delay_secs",
                "session_creation_timeout_secs")


class RunConfig:
    """Args (as TF 1.15):
      model_dir: where checkpoints, summaries and evaluations go.
      tf_random_seed: the graph-level seed (`tf.set_random_seed`) of every graph the Estimator builds.
      save_summary_steps: write the merged summaries every N global steps (0 or None: never).
      save_checkpoints_steps / save_checkpoints_secs: checkpoint every N steps or seconds (default: 600
        seconds when neither is given; at most one of them; both None: only at the end of train).
      keep_checkpoint_max, keep_checkpoint_every_n_hours: the Saver's retention.
      log_step_count_steps: log loss and step (and write global_step/sec) every N steps.
      session_config: a ConfigProto for the sessions.
    """

    def __init__(self, model_dir: str | os.PathLike | None = None, tf_random_seed: int | None = None,
                 save_summary_steps: int | None = 100, save_checkpoints_steps: Any = _USE_DEFAULT,
                 save_checkpoints_secs: Any = _USE_DEFAULT, session_config: Any = None,
                 keep_checkpoint_max: int | None = 5, keep_checkpoint_every_n_hours: float = 10000,
                 log_step_count_steps: int | None = 100, train_distribute: Any = None, device_fn: Any = None,
                 protocol: str | None = None, eval_distribute: Any = None, experimental_distribute: Any = None,
                 experimental_max_worker_delay_secs: int | None = None,
                 session_creation_timeout_secs: int = 7200):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        if save_checkpoints_steps and save_checkpoints_secs:
            raise ValueError("RunConfig: can not provide both save_checkpoints_steps and save_checkpoints_secs")
        for name, value in (("save_summary_steps", save_summary_steps), ("save_checkpoints_steps", save_checkpoints_steps),
                            ("save_checkpoints_secs", save_checkpoints_secs), ("keep_checkpoint_max", keep_checkpoint_max),
                            ("log_step_count_steps", log_step_count_steps)):
            if value is not None and value < 0:
                raise ValueError(f"RunConfig: {name} must be >= 0 (or None), given {value}")
        for name, value in (("train_distribute", train_distribute), ("eval_distribute", eval_distribute),
                            ("experimental_distribute", experimental_distribute), ("device_fn", device_fn)):
            if value is not None:
                raise ValueError(f"RunConfig: {name} is not supported by tftk (one process, one device); leave it None")
        _check_tf_config()
        self._model_dir = None if model_dir is None else os.fspath(model_dir)
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._protocol = protocol
        self._experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self._session_creation_timeout_secs = session_creation_timeout_secs

    model_dir = property(lambda self: self._model_dir)
    tf_random_seed = property(lambda self: self._tf_random_seed)
    save_summary_steps = property(lambda self: self._save_summary_steps)
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
    session_config = property(lambda self: self._session_config)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_every_n_hours = property(lambda self: self._keep_checkpoint_every_n_hours)
    log_step_count_steps = property(lambda self: self._log_step_count_steps)
    protocol = property(lambda self: self._protocol)
    experimental_max_worker_delay_secs = property(lambda self: self._experimental_max_worker_delay_secs)
    session_creation_timeout_secs = property(lambda self: self._session_creation_timeout_secs)
    train_distribute = eval_distribute = experimental_distribute = device_fn = property(lambda self: None)
    # The one local process: chief worker 0 of a cluster of one.
    is_chief = property(lambda self: True)
    task_type = property(lambda self: "worker")
    task_id = property(lambda self: 0)
    global_id_in_cluster = property(lambda self: 0)
    num_ps_replicas = property(lambda self: 0)
    num_worker_replicas = property(lambda self: 1)
    master = property(lambda self: "")
    evaluation_master = property(lambda self: "")
    cluster_spec = property(lambda self: None)
    service = property(lambda self: None)

    def replace(self, **changes: Any) -> "RunConfig":
        """A new RunConfig with `changes` (only the constructor's arguments may change)."""
        unknown = sorted(set(changes) - set(_REPLACEABLE))
        if unknown:
            raise ValueError(f"RunConfig.replace: {', '.join(unknown)} cannot be replaced; "
                             f"allowed: {', '.join(_REPLACEABLE)}")
        current = {name: getattr(self, name) for name in _REPLACEABLE}
        if "save_checkpoints_steps" in changes and "save_checkpoints_secs" not in changes and changes["save_checkpoints_steps"]:
            current["save_checkpoints_secs"] = None
        if "save_checkpoints_secs" in changes and "save_checkpoints_steps" not in changes and changes["save_checkpoints_secs"]:
            current["save_checkpoints_steps"] = None
        return RunConfig(**{**current, **changes})

    def __repr__(self) -> str:
        return "RunConfig(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in _REPLACEABLE[:9]) + ")"


def _check_tf_config() -> None:
    """A TF_CONFIG naming a cluster of more than this process cannot be honoured here."""
    text = os.environ.get("TF_CONFIG", "")
    if not text.strip():
        return
    try:
        cluster = json.loads(text).get("cluster") or {}
    except (ValueError, AttributeError) as error:
        raise ValueError(f"RunConfig: TF_CONFIG is not a JSON object ({error})") from None
    if sum(len(tasks) for tasks in cluster.values()) > 1:
        raise ValueError("RunConfig: TF_CONFIG names a cluster; tftk's Estimator trains in one process "
                         "(unset TF_CONFIG)")
