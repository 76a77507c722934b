"""`tf.train.SessionManager`: create a session whose model is ready — restored from the newest
checkpoint when one exists, initialised otherwise — and check that every variable has a value.

Supervisor and MonitoredTrainingSession both start sessions through it (restore-or-init).
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable

import numpy as np

from tftk.client.session import Session
from tftk.framework import errors
from tftk.framework.ops import Graph, get_default_graph
from tftk.train.checkpoint_state import get_checkpoint_state, latest_checkpoint

__all__ = ["SessionManager"]


class SessionManager:
    """Restore-or-initialise sessions for `graph`.

    Args:
      local_init_op: run after restore/init, every time (local variables).
      ready_op: a string tensor listing uninitialised variables (empty = ready), or None.
      ready_for_local_init_op: what must be initialised before a waiting worker's local_init_op
        runs (wait_for_session); prepare_session runs local_init_op right after restore or init.
      local_init_run_options: accepted for TF1 compatibility, unused.
      graph: default: the default graph.
      recovery_wait_secs: polling interval while waiting for a checkpoint.
    """

    def __init__(self, local_init_op: Any = None, ready_op: Any = None, ready_for_local_init_op: Any = None,
                 graph: Graph | None = None, recovery_wait_secs: float = 30, local_init_run_options: Any = None,
                 local_init_feed_dict: dict | None = None):
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_feed_dict = local_init_feed_dict

    def _restore_checkpoint(self, master: str, saver: Any, checkpoint_dir: str | None,
                            checkpoint_filename_with_path: str | None, wait_for_checkpoint: bool,
                            max_wait_secs: float, config: Any) -> tuple[Session, bool]:
        """A new session, and whether a checkpoint was restored into it."""
        sess = Session(master, graph=self._graph, config=config)
        if saver is None or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        deadline = time.monotonic() + max_wait_secs
        newest = latest_checkpoint(checkpoint_dir)
        while newest is None and wait_for_checkpoint and time.monotonic() < deadline:
            time.sleep(min(self._recovery_wait_secs, max(0.0, deadline - time.monotonic())))
            newest = latest_checkpoint(checkpoint_dir)
        if newest is None:
            return sess, False
        saver.restore(sess, newest)
        state = get_checkpoint_state(checkpoint_dir)
        if hasattr(saver, "recover_last_checkpoints") and state is not None:
            saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
        return sess, True

    def prepare_session(self, master: str = "", init_op: Any = None, saver: Any = None,
                        checkpoint_dir: str | os.PathLike | None = None, wait_for_checkpoint: bool = False,
                        max_wait_secs: float = 7200, config: Any = None, init_feed_dict: dict | None = None,
                        init_fn: Callable[[Session], None] | None = None,
                        checkpoint_filename_with_path: str | None = None) -> Session:
        """A session restored from `checkpoint_dir`'s newest checkpoint, else initialised with
        `init_op` / `init_fn`; then `local_init_op`; then the ready check.

        Raises:
          RuntimeError: nothing could initialise the model, or variables are still uninitialised
            afterwards (their names are listed).
        """
        checkpoint_dir = os.fspath(checkpoint_dir) if checkpoint_dir is not None else None
        sess, restored = self._restore_checkpoint(master, saver, checkpoint_dir, checkpoint_filename_with_path,
                                                  wait_for_checkpoint, max_wait_secs, config)
        if not restored:
            if init_op is None and init_fn is None and self._local_init_op is None:
                sess.close()
                raise RuntimeError("Model is not initialized and no init_op or init_fn or local_init_op "
                                   f"was given (no checkpoint found in {checkpoint_dir!r})")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn is not None:
                init_fn(sess)
        if self._local_init_op is not None:
            sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict)
        not_ready = self._not_ready(sess, self._ready_op)
        if not_ready:
            sess.close()
            how = "restored from a checkpoint" if restored else \
                f"init_op {getattr(init_op, 'name', init_op)!r}, init_fn {init_fn!r}"
            raise RuntimeError(f"Init operations did not make model ready ({how}): variables not "
                               f"initialized: {not_ready}")
        return sess

    def wait_for_session(self, master: str = "", config: Any = None, max_wait_secs: float = float("inf")) -> Session:
        """A session on `master` once the model is ready there (a non-chief worker waiting for the
        chief to initialise the shared variables); polls every recovery_wait_secs. As in TF1, this
        worker's local_init_op runs as soon as ready_for_local_init_op reports nothing missing.

        Raises:
          DeadlineExceededError: not ready within max_wait_secs (the names still missing are listed).
        """
        deadline = time.monotonic() + max_wait_secs
        while True:
            sess = Session(master, graph=self._graph, config=config)
            not_ready = self._not_ready(sess, self._ready_for_local_init_op)
            if not not_ready:
                if self._local_init_op is not None:
                    sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict)
                not_ready = self._not_ready(sess, self._ready_op)
                if not not_ready:
                    return sess
            sess.close()
            if time.monotonic() + self._recovery_wait_secs > deadline:
                raise errors.DeadlineExceededError(
                    None, None, f"Session was not ready after waiting {max_wait_secs} secs: variables not "
                    f"initialized: {not_ready}. Is the chief running and initialising them on {master!r}?")
            time.sleep(self._recovery_wait_secs)

    def _not_ready(self, sess: Session, ready_op: Any) -> str:
        """Comma-separated names `ready_op` reports; empty when ready or when there is no such op."""
        if ready_op is None:
            return ""
        names = np.asarray(sess.run(ready_op)).ravel()
        return ", ".join(n.decode() if isinstance(n, bytes) else str(n) for n in names)
