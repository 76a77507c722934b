"""`tf.train.MonitoredTrainingSession`: a session that restores-or-initialises itself, runs hooks
around every `run` (stop at a step, checkpoints, summaries, logging) and closes them cleanly.

    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, hooks=[StopAtStepHook(last_step=100)]) as s:
        while not s.should_stop():
            s.run(train_op)

An OutOfRangeError from a run (an input ran out) ends the loop as a normal stop.
"""

from __future__ import annotations

import abc
import os
from typing import Any, Callable, Sequence

from tftk.framework import errors
from tftk.framework.ops import GraphKeys, get_default_graph
from tftk.train.basic_session_run_hooks import (CheckpointSaverHook, StepCounterHook, SummarySaverHook)
from tftk.train.coordinator import Coordinator
from tftk.train.session_manager import SessionManager
from tftk.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from tftk.ops.control_flow_ops import group
from tftk.ops.summary_ops import merge_all
from tftk.ops.variables import (
    global_variables, global_variables_initializer, local_variables_initializer,
    report_uninitialized_variables)
from tftk.train.saver import Saver

__all__ = ["Scaffold", "SessionCreator", "ChiefSessionCreator", "WorkerSessionCreator", "MonitoredSession", "SingularMonitoredSession",
           "MonitoredTrainingSession"]

USE_DEFAULT = object()


class Scaffold:
    """The ops a training session needs, created with defaults when not given: init_op
    (global_variables_initializer), ready_op (report_uninitialized_variables), local_init_op,
    summary_op (merge_all) and saver (the SAVERS collection's, else a new Saver)."""

    def __init__(self, init_op: Any = None, init_feed_dict: dict | None = None,
                 init_fn: Callable[[Any, Any], None] | None = None, ready_op: Any = None,
                 ready_for_local_init_op: Any = None, local_init_op: Any = None, summary_op: Any = None,
                 saver: Any = None, copy_from_scaffold: Any = None):
        self._init_op, self._init_feed_dict, self._user_init_fn = init_op, init_feed_dict, init_fn
        self._ready_op, self._local_init_op = ready_op, local_init_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._summary_op, self._saver = summary_op, saver

    def finalize(self) -> "Scaffold":
        """Create the missing ops, then finalize the graph (no op may be added afterwards)."""
        graph = get_default_graph()
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = report_uninitialized_variables(global_variables())
        if self._init_op is None:
            self._init_op = _first(graph, GraphKeys.INIT_OP) or global_variables_initializer()
        if self._ready_op is None:
            self._ready_op = _first(graph, GraphKeys.READY_OP) or report_uninitialized_variables()
        if self._local_init_op is None:
            self._local_init_op = _first(graph, GraphKeys.LOCAL_INIT_OP) or group(local_variables_initializer())
        if self._summary_op is None:
            self._summary_op = merge_all()
        if self._saver is None:
            self._saver = _first(graph, GraphKeys.SAVERS)
            if self._saver is None:
                self._saver = Saver(allow_empty=True)
                graph.add_to_collection(GraphKeys.SAVERS, self._saver)
        if isinstance(self._saver, Saver):
            self._saver.build()  # a Saver(defer_build=True), as Estimator makes, gets its ops before the graph closes
        graph.finalize()
        return self

    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    local_init_op = property(lambda self: self._local_init_op)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)

    @property
    def init_fn(self) -> Callable[[Any], None] | None:
        if self._user_init_fn is None:
            return None
        return lambda sess: self._user_init_fn(self, sess)


def _first(graph: Any, key: str) -> Any:
    items = graph.get_collection(key)
    if len(items) > 1:
        raise RuntimeError(f"More than one item in the collection {key!r}: pass one explicitly")
    return items[0] if items else None


class SessionCreator(abc.ABC):
    """What MonitoredSession asks for a session: subclasses build one in `create_session()`."""

    @abc.abstractmethod
    def create_session(self) -> Any:
        """A new, ready tf.Session."""


class ChiefSessionCreator(SessionCreator):
    """Creates sessions that restore from `checkpoint_dir` (or a given file) or initialise."""

    def __init__(self, scaffold: Scaffold | None = None, master: str = "", config: Any = None,
                 checkpoint_dir: str | os.PathLike | None = None,
                 checkpoint_filename_with_path: str | None = None):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self) -> Any:
        self._scaffold.finalize()
        manager = SessionManager(local_init_op=self._scaffold.local_init_op, ready_op=self._scaffold.ready_op,
                                 graph=get_default_graph())
        return manager.prepare_session(
            self._master, init_op=self._scaffold.init_op, saver=self._scaffold.saver,
            checkpoint_dir=self._checkpoint_dir, config=self._config,
            init_feed_dict=self._scaffold.init_feed_dict, init_fn=self._scaffold.init_fn,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path)


class WorkerSessionCreator(SessionCreator):
    """Creates sessions for a non-chief worker: wait until the chief has made the model ready."""

    def __init__(self, scaffold: Scaffold | None = None, master: str = "", config: Any = None,
                 max_wait_secs: float = 30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config, self._max_wait_secs = master, config, max_wait_secs

    def create_session(self) -> Any:
        self._scaffold.finalize()
        manager = SessionManager(local_init_op=self._scaffold.local_init_op, ready_op=self._scaffold.ready_op,
                                 ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                                 graph=get_default_graph(), recovery_wait_secs=1)
        return manager.wait_for_session(self._master, config=self._config, max_wait_secs=self._max_wait_secs)


class MonitoredSession:
    """A session wrapper that calls `hooks` around each run; use as a context manager."""

    def __init__(self, session_creator: SessionCreator | None = None,
                 hooks: Sequence[SessionRunHook] | None = None, stop_grace_period_secs: float = 120):
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._coord = Coordinator()
        self._sess = (session_creator or ChiefSessionCreator()).create_session()
        self._stop_grace_period_secs = stop_grace_period_secs
        self._closed = False
        for hook in self._hooks:
            hook.after_create_session(self._sess, self._coord)

    graph = property(lambda self: self._sess.graph)

    def raw_session(self) -> Any:
        """The underlying tf.Session (runs without hooks)."""
        return self._sess

    def should_stop(self) -> bool:
        return self._closed or self._coord.should_stop()

    def run(self, fetches: Any, feed_dict: dict | None = None, options: Any = None,
            run_metadata: Any = None) -> Any:
        """Run `fetches` plus what each hook asks for; hooks see their results after the run."""
        if self._closed:
            raise RuntimeError("Run called on a closed MonitoredSession")
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), self._sess)
        wanted = [hook.before_run(context) for hook in self._hooks]
        feeds = dict(feed_dict or {})
        for args in wanted:
            for key, value in ((args.feed_dict or {}) if args is not None else {}).items():
                if key in feeds:
                    raise RuntimeError(f"Same tensor is fed by a SessionRunHook and user: {key}")
                feeds[key] = value
        asking = [i for i, args in enumerate(wanted) if args is not None and args.fetches is not None]
        combined = {"caller": fetches, "hooks": [wanted[i].fetches for i in asking]}
        outputs = self._sess.run(combined, feed_dict=feeds or None, options=options, run_metadata=run_metadata)
        results = dict(zip(asking, outputs["hooks"]))
        for i, hook in enumerate(self._hooks):
            hook.after_run(context, SessionRunValues(results.get(i), options, run_metadata))
        if context.stop_requested:
            self._coord.request_stop()
        return outputs["caller"]

    def close(self) -> None:
        """Call the hooks' end() and close the session."""
        self._close(run_end_hooks=True)

    def _close(self, run_end_hooks: bool) -> None:
        if self._closed:
            return
        try:
            if run_end_hooks:
                for hook in self._hooks:
                    hook.end(self._sess)
        finally:
            self._closed = True
            self._coord.request_stop()
            self._sess.close()

    def __enter__(self) -> "MonitoredSession":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        clean = exc_type is None or issubclass(exc_type, (errors.OutOfRangeError, StopIteration))
        self._close(run_end_hooks=clean)
        return exc_type is not None and clean


class SingularMonitoredSession(MonitoredSession):
    """A MonitoredSession for one process: chief, restoring from `checkpoint_dir` if given."""

    def __init__(self, hooks: Sequence[SessionRunHook] | None = None, scaffold: Scaffold | None = None,
                 master: str = "", config: Any = None, checkpoint_dir: str | None = None,
                 stop_grace_period_secs: float = 120, checkpoint_filename_with_path: str | None = None):
        super().__init__(ChiefSessionCreator(scaffold, master, config, checkpoint_dir,
                                             checkpoint_filename_with_path), hooks, stop_grace_period_secs)


def MonitoredTrainingSession(master: str = "", is_chief: bool = True,  # noqa: N802 - TF1's name
                             checkpoint_dir: str | os.PathLike | None = None, scaffold: Scaffold | None = None,
                             hooks: Sequence[SessionRunHook] | None = None,
                             chief_only_hooks: Sequence[SessionRunHook] | None = None,
                             save_checkpoint_secs: Any = USE_DEFAULT, save_summaries_steps: Any = USE_DEFAULT,
                             save_summaries_secs: Any = USE_DEFAULT, config: Any = None,
                             stop_grace_period_secs: float = 120, log_step_count_steps: int | None = 100,
                             max_wait_secs: float = 7200, save_checkpoint_steps: Any = USE_DEFAULT,
                             summary_dir: str | os.PathLike | None = None) -> MonitoredSession:
    """A MonitoredSession for training, with TF1's default hooks when `checkpoint_dir` is given.

    Args:
      checkpoint_dir: restore from its newest checkpoint (else initialise); checkpoints and
        summaries are written there.
      hooks / chief_only_hooks: extra hooks (the latter only when is_chief).
      save_checkpoint_secs / save_checkpoint_steps: checkpoint every N seconds (default 600 when
        neither is given) or N global steps; None for both turns checkpoints off.
      save_summaries_steps / save_summaries_secs: summaries every N steps (default 100) or seconds.
      log_step_count_steps: write global_step/sec every N steps (None: off).
      summary_dir: where summaries go (default checkpoint_dir).

    A non-chief (is_chief=False) waits for the chief to initialise the model on `master` and runs
    only `hooks`: checkpoints and summaries are the chief's.
    """
    if not is_chief:
        creator = WorkerSessionCreator(scaffold, master, config, max_wait_secs)
        return MonitoredSession(creator, list(hooks or []), stop_grace_period_secs)
    if save_checkpoint_secs is USE_DEFAULT and save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_secs, save_checkpoint_steps = 600, None
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None

    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or []) + list(chief_only_hooks or [])
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir is not None:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(every_n_steps=log_step_count_steps, output_dir=summary_dir))
        if save_summaries_steps or save_summaries_secs:
            all_hooks.append(SummarySaverHook(save_steps=save_summaries_steps or None,
                                              save_secs=save_summaries_secs or None,
                                              output_dir=summary_dir, scaffold=scaffold))
    if checkpoint_dir is not None and (save_checkpoint_secs or save_checkpoint_steps):
        all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_secs=save_checkpoint_secs or None,
                                             save_steps=save_checkpoint_steps or None, scaffold=scaffold))
    creator = ChiefSessionCreator(scaffold, master, config, checkpoint_dir)
    return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
