"""`tf.train.Optimizer`: minimize = compute_gradients + apply_gradients, with slots (TF1 semantics).

Subclasses say which slots a variable needs (`_create_slots`), which hyperparameters they take
(`_prepare`) and which update op applies a dense or sparse gradient (`_apply_dense`,
`_apply_sparse`); this base class does the bookkeeping: argument checks, slot variables named as
TF1 names them (`<var>/<optimizer name>`, then `_1`, `_2`, ...), grouping the updates and
incrementing `global_step` once, after them.

Execution is deterministic: a plan runs its ops one at a time in a fixed topological order. Every
update op of one `apply_gradients` call also waits for *all* the gradients it is given (control
dependencies), so an in-place update never races a gradient that still reads the old value.
`gate_gradients` (GATE_NONE, GATE_OP, GATE_GRAPH) is therefore accepted for compatibility and
changes nothing observable; `use_locking` is accepted likewise (a session runs one step at a time).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from tftk.framework import dtypes
from tftk.framework.indexed_slices import IndexedSlices
from tftk.framework.ops import (GraphKeys, Operation, Tensor, control_dependencies, convert_to_tensor,
                                get_default_graph, name_scope)
from tftk.ops.variables import Variable
from tftk.ops.control_flow_ops import group, tuple as gate_tuple
from tftk.ops.gradients_impl import gradients
from tftk.ops.state_ops import assign_add
from tftk.ops.math_ops import cast
from tftk.ops.array_ops import zeros
from tftk.ops.constant_op import constant

__all__ = ["Optimizer"]

_FLOAT_TYPES = (dtypes.float16, dtypes.float32, dtypes.float64)


def _var_key(var: Any) -> tuple:
    """Slots are keyed by (graph, variable op name), as TF1's `_var_key`."""
    return (var.op.graph, var.op.name)


class Optimizer:
    """Base class of the TF1 optimizers. Not used directly: use GradientDescentOptimizer, AdamOptimizer, ..."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict[str, dict[tuple, Variable]] = {}
        self._non_slot_dict: dict[tuple, Variable] = {}
        self._hyper_tensors: dict[tuple, Tensor] = {}

    def get_name(self) -> str:
        return self._name

    # ---- the public API ----------------------------------------------------------------------
    def minimize(self, loss: Tensor, global_step: Any = None, var_list: Any = None,
                 gate_gradients: int = GATE_OP, aggregation_method: Any = None,
                 colocate_gradients_with_ops: bool = False, name: str | None = None,
                 grad_loss: Any = None) -> Operation:
        """Add ops that update `var_list` to decrease `loss` (and increment `global_step` once).

        Args:
          loss: a Tensor holding the value to minimize.
          global_step: optional integer Variable incremented by one after the variables are updated.
          var_list: the Variables to update; defaults to the TRAINABLE_VARIABLES collection.
          gate_gradients: GATE_NONE, GATE_OP or GATE_GRAPH (accepted; execution is deterministic).
          aggregation_method: passed to tf.gradients.
          name: name of the returned operation (default: the optimizer's name).
          grad_loss: optional gradient of `loss` to start backpropagation from.
        Returns:
          The Operation that applies the update.
        Raises:
          ValueError: when no variable gets a gradient from `loss`.
        """
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients, aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        if not any(g is not None for g, _ in grads_and_vars):
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not support "
                f"gradients, between variables {[str(v) for _, v in grads_and_vars]} and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss: Tensor, var_list: Any = None, gate_gradients: int = GATE_OP,
                          aggregation_method: Any = None, colocate_gradients_with_ops: bool = False,
                          grad_loss: Any = None) -> list[tuple[Any, Variable]]:
        """The (gradient, variable) pairs of `loss`; the gradient is None where the variable is unconnected.

        Args:
          loss: a Tensor holding the value to minimize.
          var_list: Variables to differentiate; defaults to the TRAINABLE_VARIABLES collection.
          gate_gradients: GATE_NONE, GATE_OP or GATE_GRAPH.
        Returns:
          A list of (gradient, variable) pairs; a gradient is a Tensor, an IndexedSlices or None.
        """
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                             f"Optimizer.GATE_GRAPH.  Not {gate_gradients}")
        if callable(loss) and not isinstance(loss, Tensor):
            loss = loss()
        loss = convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        if var_list is None:
            var_list = loss.graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        else:
            var_list = list(_flatten(var_list))
        if not var_list:
            raise ValueError("No variables to optimize.")
        for v in var_list:
            _check_variable(v)
        grads = gradients(loss, var_list, grad_ys=grad_loss, gate_gradients=gate_gradients == Optimizer.GATE_OP,
                          aggregation_method=aggregation_method,
                          colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = gate_tuple(grads)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars: Iterable[tuple[Any, Any]], global_step: Any = None,
                        name: str | None = None) -> Operation:
        """Apply the gradients: one in-place update op per variable, then `global_step += 1`.

        Args:
          grads_and_vars: (gradient, variable) pairs as compute_gradients returns them; None
            gradients are skipped; IndexedSlices gradients update only their rows.
          global_step: optional integer Variable incremented by one after all the updates.
          name: name of the returned operation (default: the optimizer's name).
        Returns:
          The Operation that applies the gradients (and increments global_step).
        Raises:
          TypeError: a gradient is not a Tensor, IndexedSlices or None, or a variable is not a Variable.
          ValueError: no pair is given, or every gradient is None.
        """
        pairs = tuple(grads_and_vars)  # a zip can be iterated once only
        if not pairs:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in pairs:
            _check_variable(v)
            if g is not None and not isinstance(g, IndexedSlices):
                try:
                    g = convert_to_tensor(g)
                except (TypeError, ValueError):
                    raise TypeError(f"Gradient must be convertible to a Tensor or IndexedSlices, or None: {g!r}") \
                        from None
            converted.append((g, v))
        with_grad = [(g, v) for g, v in converted if g is not None]
        if not with_grad:
            raise ValueError(f"No gradients provided for any variable: {[str(v) for _, v in converted]}.")
        seen: set[tuple] = set()
        for _, v in with_grad:
            if _var_key(v) in seen:
                raise ValueError(f"Variable {v.name} appears more than once in grads_and_vars")
            seen.add(_var_key(v))
        var_list = [v for _, v in with_grad]
        self._assert_valid_dtypes(var_list)
        self._create_slots(var_list)
        # Updates wait for every gradient computation (ops without inputs, e.g. fed placeholders, compute nothing).
        every_grad = [t.op for g, _ in with_grad
                      for t in ((g.values, g.indices) if isinstance(g, IndexedSlices) else (g,)) if t.op.inputs]
        graph = var_list[0].graph
        with graph.as_default(), name_scope(name, self._name) as scope:
            self._hyper_tensors = {}
            self._prepare()
            update_ops = []
            with control_dependencies(every_grad):
                for g, v in with_grad:
                    with name_scope("update_" + v.op.name):
                        if isinstance(g, IndexedSlices):
                            update_ops.append(self._apply_sparse(g, v))
                        else:
                            update_ops.append(self._apply_dense(g, v))
            if global_step is None:
                apply_updates = self._finish(update_ops, scope)
            else:
                with control_dependencies([self._finish(update_ops, "update")]):
                    apply_updates = assign_add(global_step, 1, name=scope).op
        train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
        if apply_updates not in train_ops:
            train_ops.append(apply_updates)
        return apply_updates

    def get_slot(self, var: Any, name: str) -> Variable | None:
        """The slot variable `name` created for `var`, or None."""
        named = self._slots.get(name)
        return None if not named else named.get(_var_key(var))

    def get_slot_names(self) -> list[str]:
        """The names of the slots this optimizer creates, sorted."""
        return sorted(self._slots)

    def variables(self) -> list[Variable]:
        """The optimizer's variables in the default graph (slots and e.g. Adam's beta powers), by name."""
        graph = get_default_graph()
        found = [v for (_, g), v in self._non_slot_dict.items() if g is graph]
        found += [v for named in self._slots.values() for (g, _), v in named.items() if g is graph]
        return sorted(found, key=lambda v: v.name)

    # ---- for subclasses -------------------------------------------------------------------------
    def _create_slots(self, var_list: list[Variable]) -> None:
        """Create the slot variables each variable needs (none by default)."""

    def _prepare(self) -> None:
        """Register the hyperparameters with `_set_hyper` (called inside the apply name scope)."""

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        raise NotImplementedError(f"{type(self).__name__} has no dense update")

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Operation:
        raise NotImplementedError(f"{type(self).__name__} has no sparse update")

    def _finish(self, update_ops: list[Operation], name_scope: str) -> Operation:
        """Group the updates (Adam also advances its beta powers here)."""
        return group(*update_ops, name=name_scope)

    def _set_hyper(self, name: str, value: Any) -> None:
        """Make hyperparameter `name` a scalar tensor (Python numbers stay exact until `_hyper`)."""
        if callable(value) and not isinstance(value, (Tensor, Variable)):
            value = value()
        if isinstance(value, (Tensor, Variable)):
            value = convert_to_tensor(value)
            if not value.dtype.is_floating and not value.dtype.is_integer:
                raise TypeError(f"{self._name}: hyperparameter {name} must be a number or a numeric tensor, "
                                f"got {value.dtype.name}")
        self._hyper_tensors[(name, None)] = value

    def _hyper(self, name: str, var: Any) -> Tensor:
        """Hyperparameter `name` as a scalar tensor of `var`'s dtype (built once per dtype and apply)."""
        dtype = var.dtype
        key = (name, dtype)
        if key not in self._hyper_tensors:
            value = self._hyper_tensors[(name, None)]
            if isinstance(value, Tensor):
                tensor = value if value.dtype is dtype else cast(value, dtype, name=name)
            else:
                tensor = convert_to_tensor(value, dtype=dtype, name=name)
            self._hyper_tensors[key] = tensor
        return self._hyper_tensors[key]

    def _slot(self, var: Variable, slot_name: str, initial: Callable[[], Any], op_name: str | None = None) -> Variable:
        """The slot `slot_name` of `var`, created on first use as `<var>/<op_name>` with value `initial()`."""
        named = self._slots.setdefault(slot_name, {})
        key = _var_key(var)
        if key not in named:
            named[key] = create_slot_variable(var, initial, op_name or self._name)
        return named[key]

    def _zeros_slot(self, var: Variable, slot_name: str, op_name: str | None = None) -> Variable:
        return self._slot(var, slot_name, lambda: zeros(var.shape.as_list(), var.dtype), op_name)

    def _filled_slot(self, var: Variable, slot_name: str, value: float, op_name: str | None = None) -> Variable:
        return self._slot(var, slot_name, lambda: constant(value, var.dtype, var.shape.as_list()), op_name)

    def _non_slot_variable(self, name: str, initial_value: Any, like: Variable) -> Variable:
        """A variable of the optimizer itself (one per graph), e.g. Adam's `beta1_power`.

        A Python number takes `like`'s dtype (TF1 made it float32, losing precision for float64 models).
        Created in the current name scope, as TF1 does (`adam_optimizer/beta1_power` in the deep-MNIST
        tutorial), so checkpoints name it as TF's do.
        """
        graph = like.graph
        key = (name, graph)
        if key not in self._non_slot_dict:
            dtype = None if isinstance(initial_value, (Tensor, Variable)) else like.dtype
            with graph.as_default(), graph.colocate_with(like.op):
                self._non_slot_dict[key] = Variable(initial_value, name=name, trainable=False, dtype=dtype)
        return self._non_slot_dict[key]

    def _assert_valid_dtypes(self, tensors: list[Any]) -> None:
        for t in tensors:
            if t.dtype not in _FLOAT_TYPES:
                raise ValueError(f"Invalid type {t.dtype!r} for {t.name}, expected: "
                                 f"{[d for d in _FLOAT_TYPES]}.")


def create_slot_variable(primary: Any, initial: Callable[[], Any], op_name: str) -> Variable:
    """A non-trainable variable named `<primary>/<op_name>` (uniquified `_1`, `_2`, ...), as TF1's slot_creator."""
    graph = primary.op.graph
    with graph.as_default(), graph.name_scope(None), graph.colocate_with(primary.op):  # on primary's task
        return Variable(initial, name=f"{primary.op.name}/{op_name}", trainable=False, dtype=primary.dtype)


def _check_variable(v: Any) -> None:
    if not isinstance(v, Variable):
        raise TypeError(f"Expected a tf.Variable to optimize, got {v!r}: optimizers update variables only")


def _flatten(items: Any) -> Iterable[Any]:
    if isinstance(items, (list, tuple)):
        for item in items:
            yield from _flatten(item)
    elif isinstance(items, dict):
        for key in sorted(items):
            yield from _flatten(items[key])
    else:
        yield items
