"""`tf.train.Supervisor`: restore-or-init a session from a log directory and keep background
threads saving checkpoints and summaries until `stop()` (seed 000's managed_session example).

    sv = tf.train.Supervisor(logdir=d, init_op=init_op)
    with sv.managed_session() as sess:          # restored from d if it has a checkpoint, else init_op
        while not sv.should_stop(): sess.run(train_op)

The first summary and checkpoint are written before `managed_session` hands out the session (so a
run that stops at once still leaves a checkpoint); background threads then repeat them every
save_summaries_secs / save_model_secs with the same session, each call one `Session.run`
interleaving with the training loop. `stop()` wakes them at once (no waiting out a timer).
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any, Callable, Iterator

from tftk.framework.ops import Graph, GraphKeys, get_default_graph
from tftk.train.coordinator import Coordinator, LooperThread
from tftk.train.session_manager import SessionManager
from tftk.train.training_util import get_global_step
from tftk.ops.control_flow_ops import group
from tftk.ops.summary_ops import merge_all
from tftk.ops.variables import (
    global_variables, global_variables_initializer, local_variables_initializer,
    report_uninitialized_variables)
from tftk.train.saver import Saver
from tftk.formats.meta_graph import create_meta_graph_def
from tftk.summary.graph_def import graph_to_graph_def
from tftk.summary.writer import FileWriter, SessionLog
from tftk.summary.protos import scalar

__all__ = ["Supervisor", "basic_train_loop"]


class Supervisor:
    """Session management for training: restore-or-init, periodic checkpoints and summaries.

    Args:
      graph: the graph to supervise (default: the default graph); it is finalized here.
      ready_op: string tensor of uninitialised variable names (default report_uninitialized_variables()).
      is_chief: only the chief initialises/restores and runs the standard services. A non-chief
        waits for a checkpoint in logdir and restores it (tftk sessions share no state).
      init_op: run when no checkpoint exists (default global_variables_initializer(); None: none).
      init_feed_dict, init_fn: feeds for init_op; a function(sess) run after it.
      local_init_op: run in every new session (default: initialise local variables).
      logdir: where checkpoints (`<logdir>/model.ckpt-STEP`) and events go; None: neither.
      summary_op: run by the summary thread (default merge_all(); None: no summary thread).
      saver: default: the SAVERS collection's Saver, else a new Saver() of all variables; None: none.
      global_step: default: the graph's global step (GLOBAL_STEP collection or 'global_step:0').
      save_summaries_secs, save_model_secs: thread periods (0 or None: thread off).
      recovery_wait_secs: polling period of a non-chief waiting for a checkpoint.
      stop_grace_secs: how long stop() waits for the threads.
      checkpoint_basename: checkpoint file prefix inside logdir.
      summary_writer: default FileWriter(logdir); None: no events.
    """

    USE_DEFAULT = 0

    def __init__(self, graph: Graph | None = None, ready_op: Any = USE_DEFAULT,
                 ready_for_local_init_op: Any = USE_DEFAULT, is_chief: bool = True, init_op: Any = USE_DEFAULT,
                 init_feed_dict: dict | None = None, local_init_op: Any = USE_DEFAULT,
                 logdir: str | os.PathLike | None = None, summary_op: Any = USE_DEFAULT,
                 saver: Any = USE_DEFAULT, global_step: Any = USE_DEFAULT, save_summaries_secs: float = 120,
                 save_model_secs: float = 600, recovery_wait_secs: float = 30, stop_grace_secs: float = 120,
                 checkpoint_basename: str = "model.ckpt", session_manager: SessionManager | None = None,
                 summary_writer: Any = USE_DEFAULT, init_fn: Callable[[Any], None] | None = None,
                 local_init_run_options: Any = None):
        self._graph = graph if graph is not None else get_default_graph()
        with self._graph.as_default():
            self._init_ops(ready_op, ready_for_local_init_op, init_op, local_init_op, summary_op, saver, global_step)
        self._is_chief = is_chief
        self._coord = Coordinator()
        self._started_threads: list[LooperThread] = []
        self._logdir = None if logdir is None else os.fspath(logdir)
        self._save_path = None if logdir is None else os.path.join(self._logdir, checkpoint_basename)
        self._save_summaries_secs, self._save_model_secs = save_summaries_secs, save_model_secs
        self._recovery_wait_secs, self._stop_grace_secs = recovery_wait_secs, stop_grace_secs
        self._init_feed_dict, self._init_fn = init_feed_dict, init_fn
        if summary_writer is Supervisor.USE_DEFAULT:
            summary_writer = None
            if is_chief and self._logdir is not None:
                summary_writer = FileWriter(self._logdir)
        self._summary_writer = summary_writer
        self._graph_added_to_summary = False
        self._session_manager = session_manager or SessionManager(
            local_init_op=self._local_init_op, ready_op=self._ready_op,
            ready_for_local_init_op=self._ready_for_local_init_op, graph=self._graph,
            recovery_wait_secs=recovery_wait_secs)
        self._graph.finalize()

    def _init_ops(self, ready_op: Any, ready_for_local_init_op: Any, init_op: Any, local_init_op: Any,
                  summary_op: Any, saver: Any, global_step: Any) -> None:
        """Resolve USE_DEFAULT arguments to the graph's ops (creating them if needed)."""
        default = Supervisor.USE_DEFAULT
        self._ready_op = report_uninitialized_variables() if ready_op is default else ready_op
        # a worker may initialise its local variables once the shared (global) ones are ready
        self._ready_for_local_init_op = report_uninitialized_variables(global_variables()) \
            if ready_for_local_init_op is default else ready_for_local_init_op
        self._init_op = global_variables_initializer() if init_op is default else init_op
        self._local_init_op = group(local_variables_initializer()) if local_init_op is default else local_init_op
        self._summary_op = merge_all() if summary_op is default else summary_op
        if saver is default:
            savers = self._graph.get_collection(GraphKeys.SAVERS)
            saver = savers[0] if savers else (Saver() if global_variables() else None)
            if saver is not None and not savers:
                self._graph.add_to_collection(GraphKeys.SAVERS, saver)
        self._saver = saver
        self._global_step = get_global_step(self._graph) if global_step is default else global_step

    # ---- properties ------------------------------------------------------------------------------
    is_chief = property(lambda self: self._is_chief)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)
    session_manager = property(lambda self: self._session_manager)

    # ---- sessions --------------------------------------------------------------------------------
    def prepare_or_wait_for_session(self, master: str = "", config: Any = None,
                                    wait_for_checkpoint: bool = False, max_wait_secs: float = 7200,
                                    start_standard_services: bool = True) -> Any:
        """The chief restores from logdir or initialises and starts the services; a non-chief waits
        (up to max_wait_secs) until the chief has initialised the model on `master`."""
        if self._coord.joined:
            self._coord.clear_stop()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config,
                init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            if start_standard_services:
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config, max_wait_secs=max_wait_secs)
        if start_standard_services:
            self.start_queue_runners(sess)
        return sess

    def start_queue_runners(self, sess: Any, queue_runners: list | None = None) -> list:
        """Start `queue_runners` (default: the graph's QUEUE_RUNNERS) under this supervisor's
        coordinator, so `stop()` ends and joins their threads."""
        runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS) if queue_runners is None else queue_runners
        threads = []
        for runner in runners:
            threads.extend(runner.create_threads(sess, coord=self._coord, daemon=True, start=True))
        self._started_threads.extend(threads)
        return threads

    def _write_graph_events(self) -> None:
        """The graph event and the MetaGraphDef event (graph + SaverDef), as TF1's Supervisor writes."""
        graph_def = graph_to_graph_def(self._graph, add_shapes=True)
        self._summary_writer.add_graph(graph_def)
        saver_def = getattr(self._saver, "saver_def", None) if self._saver is not None else None
        self._summary_writer.add_meta_graph(create_meta_graph_def(graph_def=graph_def, saver_def=saver_def))
        self._graph_added_to_summary = True

    def start_standard_services(self, sess: Any) -> list[LooperThread]:
        """Write the graph and a START log, then start the summary, step-counter and checkpoint threads."""
        if not self._is_chief:
            raise RuntimeError("Only chief supervisor can start standard services. Because only chief "
                               "supervisors can write events.")
        threads: list[LooperThread] = []
        if self._summary_writer is not None:
            if not self._graph_added_to_summary:
                self._write_graph_events()
            step = None if self._global_step is None else int(sess.run(self._global_step))
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), step)
            if self._summary_op is not None and self._save_summaries_secs:
                self._write_summary(sess)
                threads.append(LooperThread(self._coord, self._save_summaries_secs, self._write_summary, (sess,),
                                            delay_first_call=True))
            if self._global_step is not None and self._save_summaries_secs:
                threads.append(_StepCounterThread(self, sess))
        if self._saver is not None and self._save_model_secs and self._save_path is not None:
            self._save_checkpoint(sess)
            threads.append(LooperThread(self._coord, self._save_model_secs, self._save_checkpoint, (sess,),
                                        delay_first_call=True))
        for thread in threads:
            thread.start()
        self._started_threads.extend(threads)
        return threads

    def _write_summary(self, sess: Any) -> None:
        if self._global_step is not None:
            summary, step = sess.run([self._summary_op, self._global_step])
        else:
            summary, step = sess.run(self._summary_op), None
        self._summary_writer.add_summary(summary, step)

    def _save_checkpoint(self, sess: Any) -> None:
        path = self._saver.save(sess, self._save_path, global_step=self._global_step)
        if self._summary_writer is not None and self._global_step is not None:
            self._summary_writer.add_session_log(
                SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=path), int(sess.run(self._global_step)))

    @contextlib.contextmanager
    def managed_session(self, master: str = "", config: Any = None, start_standard_services: bool = True,
                        close_summary_writer: bool = True) -> Iterator[Any]:
        """A session restored from logdir (else initialised) with the services running; on exit the
        threads stop, the writer closes and the session closes. An exception in the block (or in a
        service thread) is re-raised after the cleanup; OutOfRangeError counts as a normal end."""
        sess = self.prepare_or_wait_for_session(master, config, start_standard_services=start_standard_services)
        try:
            yield sess
        except BaseException as exc:  # noqa: BLE001 - handed to the coordinator, which re-raises it
            self.request_stop(exc)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                sess.close()

    # ---- stopping --------------------------------------------------------------------------------
    def request_stop(self, ex: BaseException | None = None) -> None:
        """Ask the loop and the service threads to stop (recording `ex` to be re-raised by stop())."""
        self._coord.request_stop(ex)

    def should_stop(self) -> bool:
        return self._coord.should_stop()

    def stop_on_exception(self) -> Any:
        return self._coord.stop_on_exception()

    def wait_for_stop(self) -> None:
        self._coord.wait_for_stop()

    def stop(self, threads: list | None = None, close_summary_writer: bool = True,
             ignore_live_threads: bool = False) -> None:
        """Stop the service threads (and `threads`), wait for them, close the summary writer."""
        self._coord.request_stop()
        try:
            self._coord.join(list(threads or []) + self._started_threads,
                             stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            self._started_threads = []
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.close()
                self._graph_added_to_summary = False

    # ---- user helpers ----------------------------------------------------------------------------
    def summary_computed(self, sess: Any, summary: Any, global_step: Any = None) -> None:
        """Write a summary the caller computed (default step: the current global step)."""
        if self._summary_writer is None:
            raise RuntimeError("Writing a summary requires a summary writer (give the Supervisor a logdir).")
        if global_step is None and self._global_step is not None:
            global_step = int(sess.run(self._global_step))
        self._summary_writer.add_summary(summary, global_step)

    def loop(self, timer_interval_secs: float | None, target: Callable, args: tuple = (),
             kwargs: dict | None = None) -> LooperThread:
        """Start a thread calling `target(*args, **kwargs)` every `timer_interval_secs` until stop."""
        thread = LooperThread(self._coord, timer_interval_secs, target, args, kwargs)
        thread.start()
        self._started_threads.append(thread)
        return thread


class _StepCounterThread(LooperThread):
    """Writes `global_step/sec` every save_summaries_secs."""

    def __init__(self, sv: Supervisor, sess: Any):
        super().__init__(sv.coord, sv.save_summaries_secs, delay_first_call=True)
        self._sv, self._sess = sv, sess

    def start_loop(self) -> None:
        self._last_time = time.time()
        self._last_step = int(self._sess.run(self._sv.global_step))

    def run_loop(self) -> None:
        step = int(self._sess.run(self._sv.global_step))
        now = time.time()
        elapsed = now - self._last_time
        if elapsed > 0 and step > self._last_step:
            tag = f"{self._sv.global_step.op.name}/sec"
            self._sv.summary_writer.add_summary(scalar(tag, (step - self._last_step) / elapsed), step)
        self._last_time, self._last_step = now, step


def basic_train_loop(supervisor: Supervisor, train_step_fn: Callable[..., Any], args: tuple | None = None,
                     kwargs: dict | None = None, master: str = "") -> None:
    """Call `train_step_fn(session, *args, **kwargs)` in a managed session until the supervisor stops."""
    with supervisor.managed_session(master) as sess:
        while not supervisor.should_stop():
            train_step_fn(sess, *(args or ()), **(kwargs or {}))
