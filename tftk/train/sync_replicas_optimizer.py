"""`tf.train.SyncReplicasOptimizer`: synchronous data-parallel training across worker replicas.

Each replica puts its gradients into one ConditionalAccumulator per variable (on the variable's
task) and then waits for a token. The chief's queue runner takes the mean of
`replicas_to_aggregate` gradients per variable, applies it with the wrapped optimizer
(incrementing the global step) and hands out the next step's tokens. Gradients computed from
parameters older than the accumulator's step are dropped, as in TF1.
"""

from __future__ import annotations

from typing import Any, Iterable

from tftk.framework.indexed_slices import IndexedSlices
from tftk.ops.indexed_slices_ops import densify
from tftk.framework.ops import GraphKeys, Operation, colocate_with, control_dependencies, device, name_scope
from tftk.train.optimizer import Optimizer
from tftk.train.queue_runner import QueueRunner
from tftk.train.session_run_hook import SessionRunHook
from tftk.ops import array_ops, state_ops
from tftk.ops.control_flow_ops import group, no_op
from tftk.ops.data_flow_ops import ConditionalAccumulator, FIFOQueue
from tftk.ops.variables import Variable, global_variables, report_uninitialized_variables

__all__ = ["SyncReplicasOptimizer"]


class SyncReplicasOptimizer(Optimizer):
    """Wraps `opt` so every update averages `replicas_to_aggregate` replicas' gradients.

    Args:
      opt: the optimizer applying the averaged gradients.
      replicas_to_aggregate: gradients averaged per update.
      total_num_replicas: number of workers (default: replicas_to_aggregate); tokens per step are
        max(total_num_replicas, replicas_to_aggregate).
    """

    def __init__(self, opt: Optimizer, replicas_to_aggregate: int, total_num_replicas: int | None = None,
                 variable_averages: Any = None, variables_to_average: Any = None, use_locking: bool = False,
                 name: str = "sync_replicas"):
        if variable_averages is not None or variables_to_average is not None:
            raise NotImplementedError("SyncReplicasOptimizer(variable_averages=...) is not supported; apply "
                                      "tf.train.ExponentialMovingAverage after the train op instead")
        super().__init__(use_locking, name)
        self._opt = opt
        self._replicas_to_aggregate = int(replicas_to_aggregate)
        self._total_num_replicas = int(total_num_replicas if total_num_replicas is not None else replicas_to_aggregate)
        self._tokens_per_step = max(self._total_num_replicas, self._replicas_to_aggregate)
        self._gradients_applied = False
        self._global_step: Any = None
        self._sync_token_queue: Any = None
        self._chief_queue_runner: QueueRunner | None = None
        self._local_step: Any = None
        self.local_step_init_op: Operation | None = None
        self.chief_init_op: Operation | None = None
        self.ready_for_local_init_op: Any = None

    def compute_gradients(self, *args: Any, **kwargs: Any) -> list:
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars: Iterable[tuple[Any, Any]], global_step: Any = None,
                        name: str | None = None) -> Operation:
        """The train op of a replica: accumulate its gradients, then wait for the next token."""
        pairs = list(grads_and_vars)
        if not pairs:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        step_dtype = global_step.dtype.base_dtype
        local_anchor = no_op()  # placed on this worker by the device scopes around the call
        with colocate_with(local_anchor):  # the local step is this replica's own, not the ps's
            self._local_step = Variable(0, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                                        dtype=step_dtype, name="sync_rep_local_step")
        self.local_step_init_op = state_ops.assign(self._local_step, global_step).op
        chief_init_ops = [self.local_step_init_op]
        self.ready_for_local_init_op = report_uninitialized_variables(global_variables())
        train_ops, aggregated, accumulators = [], [], []
        with name_scope(None, self._name):
            for grad, var in pairs:
                with device(var.device):
                    if grad is None:
                        aggregated.append(None)
                        continue
                    if isinstance(grad, IndexedSlices):  # accumulated densely: correct, not frugal
                        grad = densify(grad)
                    accumulator = ConditionalAccumulator(grad.dtype, shape=var.get_shape(),
                                                         shared_name=var.name + "/grad_accum")
                    train_ops.append(accumulator.apply_grad(grad, local_step=self._local_step.value()))
                    aggregated.append(accumulator.take_grad(self._replicas_to_aggregate))
                    accumulators.append((accumulator, var.device))
            with device(global_step.device), name_scope(""):
                update_op = self._opt.apply_gradients(list(zip(aggregated, [v for _, v in pairs])), global_step)
                self._sync_token_queue = FIFOQueue(-1, step_dtype, shapes=[[]], name="sync_token_q",
                                                   shared_name="sync_token_q")
                dummy_queue = FIFOQueue(1, "int32", shapes=[[]], name="dummy_queue", shared_name="dummy_queue")
                with control_dependencies(train_ops):
                    token = self._sync_token_queue.dequeue()
                train_op = state_ops.assign(self._local_step, token, name=name).op
                with control_dependencies([update_op]):
                    tokens = array_ops.fill([self._tokens_per_step], global_step.value())
                    sync_op = self._sync_token_queue.enqueue_many((tokens,))
                self._chief_queue_runner = QueueRunner(dummy_queue, [sync_op])
            for accumulator, var_device in accumulators:
                with device(var_device):
                    chief_init_ops.append(accumulator.set_global_step(global_step.value(), name="SetGlobalStep"))
            self.chief_init_op = group(*chief_init_ops)
        self._gradients_applied = True
        return train_op

    def get_chief_queue_runner(self) -> QueueRunner:
        """The queue runner the chief starts: it applies the averaged gradients and hands out tokens."""
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens: int = -1) -> Operation:
        """Tokens letting the replicas start the first step (default: replicas_to_aggregate of them)."""
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) vs {tokens_needed} "
                             "(needed)")
        if num_tokens <= 0:
            return no_op(name="no_init_tokens")
        with device(self._global_step.device), name_scope(""):
            tokens = array_ops.fill([num_tokens], self._global_step.value())
            return self._sync_token_queue.enqueue_many((tokens,))

    def make_session_run_hook(self, is_chief: bool, num_tokens: int = -1) -> SessionRunHook:
        """A hook for MonitoredTrainingSession doing the chief's and replicas' start-up work."""
        return _SyncReplicasHook(self, is_chief, num_tokens)

    def get_slot(self, *args: Any, **kwargs: Any) -> Any:
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args: Any, **kwargs: Any) -> list[str]:
        return self._opt.get_slot_names(*args, **kwargs)


class _SyncReplicasHook(SessionRunHook):
    """Sets the local step; on the chief also the accumulators' steps, the init tokens and the
    chief queue runner (whose threads the session's coordinator stops)."""

    def __init__(self, optimizer: SyncReplicasOptimizer, is_chief: bool, num_tokens: int):
        self._optimizer, self._is_chief, self._num_tokens = optimizer, is_chief, num_tokens

    def begin(self) -> None:
        if not self._optimizer._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradients should be called before using the hook.")
        self._init_tokens = self._optimizer.get_init_tokens_op(self._num_tokens) if self._is_chief else None

    def after_create_session(self, session: Any, coord: Any) -> None:
        session.run(self._optimizer.local_step_init_op)
        if self._is_chief:
            session.run(self._optimizer.chief_init_op)
            session.run(self._init_tokens)
            self._optimizer.get_chief_queue_runner().create_threads(session, coord=coord, daemon=True, start=True)
