"""BasicModel: the article's model life cycle — config in, graph built, restore-or-init, train, save, infer.

A model subclass declares its hyperparameter schema (`Params`, the config's `model:` section) and
fills in `set_model_props`, `build_graph`, `learn_from_epoch`, `evaluate` and `infer`; everything a
run needs around them (seeding, Saver, Session, FileWriter, checkpoints with the batch-stream
position, metrics, Ctrl-C) lives here once.
"""

from __future__ import annotations

import io
import json
import math
import signal
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator

import numpy as np

import tftk as tf
from tftk.config import ModelParams, RunConfig, dump_config, flatten_dotted
from tftk.runs import MetricsLog, remove_leftovers, run_checkpoints, truncate_metrics
from tftk.seeding import seed_everything
from tftk.user_input import UserInputError

from models.checks import DivergedError, check_batch_size, check_finite_loss, check_parameter_memory

__all__ = ["BasicModel", "CHECKPOINT_NAME", "DATA_STATE_KEYS"]

CHECKPOINT_NAME = "model.ckpt"
# A DataSet's state() as the int64 vector saved in every checkpoint (-1 everywhere: never drawn from).
DATA_STATE_KEYS = ("seed", "epochs_completed", "index_in_epoch", "shuffled")

StepCallback = Callable[[int, dict[str, float]], None]


class BasicModel:
    """One model, one run folder: `BasicModel(config)` builds the graph and restores or initialises it.

    Subclasses set `Params` and implement:
      set_model_props(): read what the graph needs (dataset shapes, ...) from self.config/self.params.
      build_graph(graph): add the model's ops (self.global_step exists already).
      train_data: the DataSet `learn_from_epoch` draws batches from (its position is checkpointed).
      learn_from_epoch(step): run one training step; return {"loss": ...}.
      evaluate(): metrics on held-out data, e.g. {"validation_accuracy": ...}.
      infer(inputs): predictions for a batch of inputs.
    """

    Params: ClassVar[type[ModelParams]] = ModelParams
    # The keys evaluate() reports (and `metric:` may name); a model reporting others lists them here.
    METRICS: ClassVar[tuple[str, ...]] = ()

    def __init__(self, config: RunConfig, *, for_inference: bool = False):
        """Args:
          config: the resolved run config (`config.result_dir` must name the run folder).
          for_inference: restore the latest checkpoint (required) and write no events or metrics.
        """
        self.config = config.model_copy(deep=True)
        if self.config.debug:
            print(dump_config(self.config), end="")
        if self.config.result_dir is None:
            raise UserInputError(f"{type(self).__name__} needs config.result_dir (tftk train creates one)")
        if self.config.random_seed is None:
            raise UserInputError("config.random_seed is not set (tftk.config.resolve_config draws one)")
        self.for_inference = for_inference
        self.log: Callable[[str], None] = print  # status lines; the CLI routes them above its progress bar
        self.result_dir = Path(self.config.result_dir)
        self.random_seed = self.config.random_seed
        for name in ("max_iter", "lr", "batch_size", "nb_units", "initial_mean", "initial_stddev", "save_every",
                     "log_every", "max_to_keep", "threads"):
            setattr(self, name, getattr(self.config, name))
        self.params = self.Params.model_validate(self.config.model)
        self.set_model_props()
        if not for_inference:
            check_batch_size(self.batch_size, self.train_data.num_examples, self.config.dataset)

        self.graph = tf.Graph()
        with self.graph.as_default():
            seed_everything(self.random_seed, self.graph)
            self.global_step = tf.train.get_or_create_global_step()
            self.build_graph(self.graph)
            with tf.name_scope("data_state"):
                self._data_state = tf.Variable(np.full(len(DATA_STATE_KEYS), -1, np.int64), trainable=False,
                                               name="position")
                self._data_state_value = tf.placeholder(tf.int64, [len(DATA_STATE_KEYS)], name="value")
                self._data_state_assign = tf.assign(self._data_state, self._data_state_value)
            self._random_streams = _RandomStreams(self.graph)
            self.saver = tf.train.Saver(max_to_keep=self.max_to_keep)
            self.init_op = tf.global_variables_initializer()
        check_parameter_memory(self._variables(), type(self).__name__)
        threads = self.threads
        self.sess = tf.Session(graph=self.graph, config=tf.ConfigProto(
            intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads))
        self.sw = None  # the FileWriter, opened when training starts (a failed start leaves no event file)
        if not for_inference:
            self.check_run()
        self.init()

    # ---- the subclass's part -------------------------------------------------------------------
    @classmethod
    def check_config(cls, config: RunConfig) -> None:
        """Reject a config this model cannot run (unknown dataset, missing files) before a run folder exists.

        Subclasses extend it (calling super()); here: `metric` must be one of the METRICS evaluate() reports.
        """
        if cls.METRICS and config.metric not in cls.METRICS:
            raise UserInputError(f"metric: {cls.__name__} reports no {config.metric!r} (it reports: "
                                 f"{', '.join(cls.METRICS)}); set `metric:` in the config")

    def set_model_props(self) -> None:
        """Read the properties the graph depends on (e.g. the dataset's image shape)."""

    def build_graph(self, graph: tf.Graph) -> None:
        raise NotImplementedError(f"{type(self).__name__}.build_graph")

    @property
    def train_data(self):
        raise NotImplementedError(f"{type(self).__name__}.train_data")

    def learn_from_epoch(self, step: int) -> dict[str, float]:
        raise NotImplementedError(f"{type(self).__name__}.learn_from_epoch")

    def evaluate(self) -> dict[str, float]:
        raise NotImplementedError(f"{type(self).__name__}.evaluate")

    def infer(self, inputs: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__}.infer")

    @classmethod
    def random_params(cls, rng: np.random.Generator) -> dict[str, Any]:
        """One random draw of the hyperparameters a search varies (`model.<key>` for the model section)."""
        return {"lr": float(10 ** rng.uniform(-3, 0)), "nb_units": int(rng.choice([16, 32, 64, 128])),
                "initial_stddev": float(10 ** rng.uniform(-2, -0.5))}

    # ---- the life cycle ----------------------------------------------------------------------------
    @classmethod
    def get_random_config(cls, fixed_params: dict[str, Any] | None = None,
                          rng: np.random.Generator | None = None) -> dict[str, Any]:
        """A random hyperparameter set (the article's static method), `fixed_params` forced on top.

        Keys are run-config fields (`lr`) or dotted model keys (`model.hidden1`), as `tftk train`'s
        `key=value` overrides take them. Pass `rng` for a reproducible draw.
        """
        params = cls.random_params(rng if rng is not None else np.random.default_rng())
        params.update(fixed_params or {})
        return params

    @classmethod
    def searched_hyperparameters(cls, config: RunConfig) -> dict[str, Any]:
        """The values in `config` of what a search varies (`get_random_config`'s keys): what --best applies."""
        drawn = cls.random_params(np.random.default_rng(0))
        flat = flatten_dotted(config.model_dump(mode="json"))
        return {key: flat[key] for key in drawn if key in flat}

    def check_run(self) -> None:
        """Checks of a training run beyond the config (the model's data is loaded); UserInputError to refuse."""

    def init(self) -> None:
        """Restore the latest checkpoint of result_dir if there is one, else run the initialiser.

        The checkpoint paths of the state file are resolved inside the run folder; one outside is an
        error (the latest) or ignored (older ones), so retention never deletes a file outside the run.
        """
        latest, kept = run_checkpoints(self.result_dir)
        if latest is not None:
            self.saver.restore(self.sess, latest)
            self.saver.recover_last_checkpoints(kept)
        elif self.for_inference:
            raise UserInputError(f"{self.result_dir}: no checkpoint to restore; train this run first")
        else:
            self.sess.run(self.init_op)

    @property
    def step(self) -> int:
        """The global step: how many training steps the variables have seen."""
        return int(self.sess.run(self.global_step))

    def is_log_step(self, step: int) -> bool:
        """Whether `step` gets a status line, a metrics record and summaries."""
        return step % self.log_every == 0 or step == self.max_iter

    def train(self, save_every: int | None = None, on_step: StepCallback | None = None) -> dict[str, Any]:
        """Train from the global step to max_iter; checkpoint every `save_every` steps and at the end.

        Ctrl-C or SIGTERM stops after the current step and saves. Returns {"step", "interrupted", "signal",
        "checkpoint", "metrics"} where metrics is the final `evaluate()` (empty when interrupted). Records are
        written before the checkpoint they belong to, so a resumed run, which drops the records
        after its checkpoint's step, rewrites exactly the file an uninterrupted run writes.
        """
        save_every = self.save_every if save_every is None else save_every
        step = start = self.step
        self._restore_data_state()
        remove_leftovers(self.result_dir, CHECKPOINT_NAME, self.saver.last_checkpoints)
        truncate_metrics(self.result_dir, step)
        self._open_events(start)
        restored = self.saver.last_checkpoints
        checkpoint, metrics = (restored[-1] if restored else None), {}
        saved_at = start if checkpoint else None
        # numpy's overflow warnings would only precede the one line check_finite_loss reports
        with MetricsLog(self.result_dir) as log, _deferred_interrupt() as interrupted, np.errstate(all="ignore"):
            while step < self.max_iter and interrupted() is None:
                started = time.perf_counter()
                before = self._step_state() if self.config.debug else None
                values = self.learn_from_epoch(step + 1)
                step += 1
                try:
                    check_finite_loss(values, step, checkpoint)
                except DivergedError as error:
                    if before is None:
                        raise
                    raise DivergedError(f"{error}\n{self._nan_report(step, before)}") from None
                if self.is_log_step(step):
                    log.append(step, values)
                    self.log(f"Step {step}: loss = {values.get('loss', math.nan):.2f} "
                             f"({time.perf_counter() - started:.3f} sec)")
                if on_step is not None:
                    on_step(step, values)
                if save_every > 0 and step % save_every == 0 and step < self.max_iter:
                    log.append(step, self._evaluate_and_record(step))
                    checkpoint, saved_at = self.save(), step
            stopped = interrupted()
            if stopped is None and step > start:
                metrics = self._evaluate_and_record(step)
                log.append(step, metrics)
            elif stopped is None:  # nothing left to train: report the restored model
                metrics = self._evaluate()
            if saved_at != step:
                checkpoint = self.save()
        if self.sw is not None:
            self.sw.flush()
        return {"step": step, "interrupted": stopped is not None, "signal": stopped, "checkpoint": checkpoint,
                "metrics": metrics}

    def save(self) -> str:
        """Checkpoint the variables and the batch-stream position as `model.ckpt-<global step>`."""
        state = self.train_data.state()
        self.sess.run(self._data_state_assign,
                      {self._data_state_value: np.array([state[k] for k in DATA_STATE_KEYS], np.int64)})
        self._random_streams.store(self.sess)
        if self.sw is not None:  # what TensorBoard shows up to this checkpoint is on disk before it
            self.sw.flush()
        return self.saver.save(self.sess, str(self.result_dir / CHECKPOINT_NAME), global_step=self.global_step)

    def close(self) -> None:
        """Release the session and flush the event file."""
        if self.sw is not None:
            self.sw.close()
        self.sess.close()

    # ---- internals ---------------------------------------------------------------------------------
    def _step_state(self) -> tuple:
        """What a step starts from (variables, batch position, random streams): --debug keeps it for a replay."""
        variables = self._variables()
        return (variables, self.sess.run(variables), self.train_data.state(), self._random_streams.snapshot(self.sess))

    def _nan_report(self, step: int, before: tuple) -> str:
        """Replay the diverging step from `before` under the NaN finder (tfdbg's has_inf_or_nan): which tensor
        first held a NaN or Inf, its op and inputs."""
        from tftk.debug import LocalCLIDebugWrapperSession, has_inf_or_nan

        variables, values, data_state, streams = before
        for variable, value in zip(variables, values):
            variable.load(value, self.sess)
        self.train_data.restore(data_state)
        self._random_streams.put_back(self.sess, streams)
        session, self.sess = self.sess, LocalCLIDebugWrapperSession(self.sess, stream=io.StringIO())
        try:
            self.sess.add_tensor_filter("has_inf_or_nan", has_inf_or_nan)
            self.learn_from_epoch(step)
            return self.sess.last_report or "the NaN finder saw no NaN or Inf when replaying the step"
        finally:
            self.sess = session

    def _variables(self) -> list:
        with self.graph.as_default():
            return tf.global_variables()

    def _open_events(self, start: int) -> None:
        """Open the FileWriter and tell TensorBoard to drop what a killed run wrote after `start` (TensorBoard
        purges events of earlier files with a step >= the START's; a killed run may have flushed some)."""
        from tftk.summary.writer import FileWriter, SessionLog

        self.sw = FileWriter(str(self.result_dir), self.graph)
        self.sw.add_session_log(SessionLog(status=SessionLog.START), start + 1)

    def _restore_data_state(self) -> None:
        """Continue the batch stream where the restored checkpoint left it (nothing after a fresh init)."""
        values = self.sess.run(self._data_state)
        if values[0] >= 0:
            self.train_data.restore(dict(zip(DATA_STATE_KEYS, (int(v) for v in values))))
        self._random_streams.load(self.sess)

    def _evaluate(self) -> dict[str, float]:
        """`evaluate()` without touching the training's random streams: where a run evaluates (its schedule,
        its last step) never changes the dropout masks it trains with, so a resumed run draws what it would have."""
        states = self._random_streams.snapshot(self.sess)
        try:
            return self.evaluate()
        finally:
            self._random_streams.put_back(self.sess, states)

    def _evaluate_and_record(self, step: int) -> dict[str, float]:
        """`evaluate()`, with its values also written to TensorBoard as scalars."""
        metrics = self._evaluate()
        if self.sw is not None:
            from tftk.summary.writer import Summary

            self.sw.add_summary(Summary(value=[Summary.Value(tag=f"eval/{key}", simple_value=float(value))
                                               for key, value in metrics.items()]), step)
        return metrics


class _RandomStreams:
    """The generator states of the random ops a run draws from while training (dropout, sampled losses) as one
    checkpointed variable; random ops that only initialise variables are left out (they never run again).

    The states are JSON in a zero-padded uint8 vector (a checkpoint holds arrays only); all zeros means
    "never saved" (a fresh run), so restoring it changes nothing. No variable when there is no such op.
    """

    BYTES_PER_OP = 1024

    def __init__(self, graph: tf.Graph):
        from tftk.ops.random_ops import restore_stream_states, stream_states

        self._graph, self._read, self._write = graph, stream_states, restore_stream_states
        initialising = _ancestors(v.initial_value.op for v in tf.global_variables())
        self.ops = [op for op in graph.get_operations() if op.attrs.get("seed2") is not None and op not in initialising]
        self.variable = None
        if self.ops:
            size = self.BYTES_PER_OP * len(self.ops)
            with tf.name_scope("random_streams"):
                self.variable = tf.Variable(np.zeros(size, np.uint8), trainable=False, name="state")
                self._value = tf.placeholder(tf.uint8, [size], name="value")
                self._assign = tf.assign(self.variable, self._value)

    def store(self, sess: tf.Session) -> None:
        """Copy the session's generator states into the variable (before a save)."""
        if self.variable is None:
            return
        encoded = json.dumps(self._read(sess, self.ops), default=_plain_state).encode()
        size = int(self.variable.shape[0])
        if len(encoded) > size:
            raise ValueError(f"random stream states take {len(encoded)} bytes, more than the {size} reserved")
        sess.run(self._assign, {self._value: np.frombuffer(encoded.ljust(size, b"\0"), np.uint8)})

    def snapshot(self, sess: tf.Session) -> dict[str, dict]:
        return self._read(sess, self.ops)

    def put_back(self, sess: tf.Session, states: dict[str, dict]) -> None:
        self._write(sess, self._graph, states)

    def load(self, sess: tf.Session) -> None:
        """Put the restored variable's states back into the session's generators (after a restore)."""
        encoded = b"" if self.variable is None else sess.run(self.variable).tobytes().rstrip(b"\0")
        if encoded:
            self._write(sess, self._graph, json.loads(encoded, object_hook=_array_state))


def _ancestors(ops) -> set:
    """`ops` and every op they depend on (data inputs and control inputs)."""
    seen, stack = set(), list(ops)
    while stack:
        op = stack.pop()
        if op not in seen:
            seen.add(op)
            stack.extend(t.op for t in op.inputs)
            stack.extend(op.control_inputs)
    return seen


def _plain_state(value: Any) -> Any:
    """numpy arrays in a bit generator's state (Philox's counter and key) as tagged JSON."""
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} in a random generator's state")


def _array_state(value: dict) -> Any:
    return np.asarray(value["__ndarray__"], value["dtype"]) if "__ndarray__" in value else value


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _deferred_interrupt() -> Iterator[Callable[[], int | None]]:
    """Turn Ctrl-C and SIGTERM (kill, docker stop, schedulers) into a flag the training loop checks between
    steps (a step is never cut in half); the flag is the signal's number, None while none came.

    A second signal raises KeyboardInterrupt at once. A signal the process ignores (a search worker
    ignores Ctrl-C, its search stops it) stays ignored. Off the main thread, signals cannot be
    caught; the flag then stays None.
    """
    received: list[int] = []

    def handler(signum, frame):
        if received:
            raise KeyboardInterrupt
        received.append(signum)

    previous = {}
    try:
        for number in STOP_SIGNALS:
            if signal.getsignal(number) is not signal.SIG_IGN:
                previous[number] = signal.signal(number, handler)
    except ValueError:  # not the main thread
        yield lambda: None
        return
    try:
        yield lambda: received[0] if received else None
    finally:
        for number, old in previous.items():
            signal.signal(number, old)
