"""`tf.Variable` and the initializer/collection helpers around it.

A variable is four nodes, as seed 001 describes: the `VariableV2` reference, `initial_value`,
the `Assign` that initialises it, and the `read` Identity that ops consume.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import (GraphKeys, Operation, Tensor, _run_with_default_session,
                                convert_to_tensor, get_default_graph, guard_scope,
                                register_tensor_conversion_function)
from tftk.framework.func_graph import root_graph
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.ops import state_ops
from tftk.ops.control_flow_ops import group, no_op
from tftk.ops.op_builder import make_op

__all__ = [
    "Variable", "global_variables", "all_variables", "trainable_variables", "local_variables",
    "model_variables", "moving_average_variables", "global_variables_initializer",
    "initialize_all_variables", "variables_initializer", "initialize_variables",
    "local_variables_initializer", "initialize_local_variables", "report_uninitialized_variables",
    "is_variable_initialized", "assert_variables_initialized", "VariableV1",
]


class Variable:
    """A tensor whose value persists across `Session.run` calls (one value per session)."""

    def __init__(self, initial_value: Any = None, trainable: bool = True,
                 collections: list[str] | None = None, validate_shape: bool = True,
                 caching_device: Any = None, name: str | None = None, variable_def: Any = None,
                 dtype: Any = None, expected_shape: Any = None, import_scope: Any = None,
                 constraint: Callable | None = None, use_resource: Any = None,
                 synchronization: Any = None, aggregation: Any = None, shape: Any = None):
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        graph = root_graph(initial_value.graph if isinstance(initial_value, Tensor) else get_default_graph())
        collections = list(collections) if collections is not None else [GraphKeys.GLOBAL_VARIABLES]
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        # Variables are created outside any control-dependency block or cond branch (TF1's init_scope).
        with graph.as_default(), graph.control_dependencies(None), guard_scope(graph, ()):
            with graph.name_scope(name if name is not None else "Variable") as scope:
                if callable(initial_value):
                    with graph.name_scope("Initializer"):
                        value = convert_to_tensor(initial_value(), dtype=dtype, name="initial_value")
                else:
                    value = convert_to_tensor(initial_value, dtype=dtype, name="initial_value")
                var_shape = value.shape if validate_shape else TensorShape(None)
                if shape is not None:
                    var_shape = as_shape(shape)
                if validate_shape and not var_shape.is_fully_defined():
                    raise ValueError(f"initial_value must have a shape specified: {value}")
                self._variable = state_ops.variable_op(var_shape, value.dtype, scope)
                self._initial_value = value
                self._initializer_op = state_ops.assign(self._variable, value,
                                                        validate_shape=validate_shape).op
                self._snapshot = make_op("Identity", [self._variable], value.dtype, var_shape, "read")
        self._trainable = trainable
        self._constraint = constraint
        self._save_slice_info = None
        graph.add_to_collections(collections, self)

    # ---- identity ------------------------------------------------------------------------------
    name = property(lambda self: self._variable.name)
    op = property(lambda self: self._variable.op)
    dtype = property(lambda self: self._variable.dtype)
    graph = property(lambda self: self._variable.graph)
    device = property(lambda self: self._variable.device)
    initializer = property(lambda self: self._initializer_op)
    initial_value = property(lambda self: self._initial_value)
    trainable = property(lambda self: self._trainable)
    constraint = property(lambda self: self._constraint)

    @property
    def shape(self) -> TensorShape:
        return self._variable.shape

    def get_shape(self) -> TensorShape:
        return self._variable.shape

    def _ref(self) -> Tensor:
        return self._variable

    def _as_graph_element(self) -> Tensor:
        return self._variable

    def value(self) -> Tensor:
        """The `read` snapshot ops consume."""
        return self._snapshot

    def read_value(self) -> Tensor:
        """A new read of the variable's current value."""
        return make_op("Identity", [self._variable], self.dtype, self.shape, "read")

    def eval(self, session: Any = None) -> Any:
        return _run_with_default_session(self._variable, None, session, "Variable.eval()")

    def load(self, value: Any, session: Any = None) -> None:
        """Assign `value` in `session` without adding ops (feeds the initial value)."""
        session = session or _default_session()
        session.run(self._initializer_op, {self._initial_value: value})

    def initialized_value(self) -> Tensor:
        from tftk.ops.control_flow_ops import cond
        return cond(is_variable_initialized(self), self.read_value, lambda: self._initial_value)

    # ---- updates -------------------------------------------------------------------------------
    def assign(self, value: Any, use_locking: bool = False, name: str | None = None,
               read_value: bool = True) -> Any:
        out = state_ops.assign(self, value, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def count_up_to(self, limit: int) -> Tensor:
        """Increment this integer variable until `limit` (then OutOfRangeError); returns the old value."""
        from tftk.ops.state_ops import count_up_to
        return count_up_to(self, limit)

    def assign_add(self, delta: Any, use_locking: bool = False, name: str | None = None,
                   read_value: bool = True) -> Any:
        out = state_ops.assign_add(self, delta, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def assign_sub(self, delta: Any, use_locking: bool = False, name: str | None = None,
                   read_value: bool = True) -> Any:
        out = state_ops.assign_sub(self, delta, use_locking=use_locking, name=name)
        return out if read_value else out.op

    def scatter_update(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
        return state_ops.scatter_update(self, sparse_delta.indices, sparse_delta.values, name=name)

    def __repr__(self) -> str:
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}_ref>"

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __bool__(self) -> bool:
        raise TypeError("Using a `tf.Variable` as a Python `bool` is not allowed.")


VariableV1 = Variable


def _default_session() -> Any:
    from tftk.framework.ops import get_default_session
    session = get_default_session()
    if session is None:
        raise ValueError("No default session: pass `session=` or use `with sess.as_default()`.")
    return session


register_tensor_conversion_function(Variable, lambda v, dtype=None, name=None: v.value())


def _forward_operator(name: str) -> None:
    def method(self: Variable, *args: Any) -> Any:
        return getattr(self.value(), name)(*args)
    method.__name__ = name
    setattr(Variable, name, method)


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
              "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
              "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__lt__", "__le__",
              "__gt__", "__ge__", "__and__", "__rand__", "__or__", "__ror__", "__invert__",
              "__getitem__", "__xor__"):
    _forward_operator(_name)


# ---- collections and initialisers --------------------------------------------------------------

def global_variables(scope: str | None = None) -> list[Variable]:
    return root_graph(get_default_graph()).get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def trainable_variables(scope: str | None = None) -> list[Variable]:
    return root_graph(get_default_graph()).get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope: str | None = None) -> list[Variable]:
    return root_graph(get_default_graph()).get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope: str | None = None) -> list[Variable]:
    return root_graph(get_default_graph()).get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope: str | None = None) -> list[Variable]:
    return root_graph(get_default_graph()).get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list: list[Variable], name: str = "init") -> Operation:
    """An op running the initializers of `var_list` (a no-op when it is empty)."""
    if var_list:
        return group(*[v.initializer for v in var_list], name=name)
    return no_op(name=name)


initialize_variables = variables_initializer


def global_variables_initializer() -> Operation:
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


def local_variables_initializer() -> Operation:
    return variables_initializer(local_variables(), name="init")


initialize_local_variables = local_variables_initializer


def is_variable_initialized(variable: Variable) -> Tensor:
    return state_ops.is_variable_initialized(variable)


def report_uninitialized_variables(var_list: list[Variable] | None = None,
                                   name: str = "report_uninitialized_variables") -> Tensor:
    """A string tensor with the names of the variables not yet initialised in the session."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    return state_ops.report_uninitialized([v.op for v in var_list], name=name)


def assert_variables_initialized(var_list: list[Variable] | None = None) -> Operation:
    """An op that fails with FailedPreconditionError if any of `var_list` is uninitialised."""
    var_list = var_list if var_list is not None else global_variables() + local_variables()
    return make_op("AssertVariablesInitialized", [], dtypes.bool, [], None,
                   {"variable_ops": [v.op for v in var_list]}).op if var_list else no_op()


def _bind_assert_initialized(op, ctx):
    boxes = [ctx.box(v) for v in op.get_attr("variable_ops")]

    def kernel():
        missing = [b.name for b in boxes if not b.initialized]
        if missing:
            raise errors.FailedPreconditionError(None, op, f"Attempting to use uninitialized value {missing[0]}")
        return np.asarray(True)
    return kernel


registry.register_op("AssertVariablesInitialized", _bind_assert_initialized)
registry.not_differentiable("AssertVariablesInitialized")
