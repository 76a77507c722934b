"""The dataflow graph: `Graph`, `Operation`, `Tensor`, name scopes, devices, control dependencies.

Building a graph is pure Python and cheap. Nothing here runs a kernel; `tftk.client` executes.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
import traceback
from typing import Any, Callable, Iterable, Iterator

from tftk.framework import dtypes as _dtypes
from tftk.framework.device import DeviceSpec, merge_device_strings
from tftk.framework.graph_keys import GraphKeys
from tftk.framework.tensor_shape import TensorShape, as_shape

__all__ = [
    "Graph", "Operation", "Tensor", "GraphKeys", "get_default_graph", "reset_default_graph",
    "name_scope", "control_dependencies", "device", "convert_to_tensor", "add_to_collection",
    "add_to_collections", "get_collection", "get_collection_ref", "get_default_session",
    "register_tensor_conversion_function", "newaxis", "colocate_with",
]

newaxis = None


class Tensor:
    """A symbolic handle to one output of an `Operation`; its value exists only inside a run."""

    __array_priority__ = 100  # numpy defers binary operators to ours

    def __init__(self, op: "Operation", value_index: int, dtype: _dtypes.DType, shape: TensorShape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = shape
        self._consumers: list[Operation] = []

    op = property(lambda self: self._op)
    value_index = property(lambda self: self._value_index)
    dtype = property(lambda self: self._dtype)
    graph = property(lambda self: self._op.graph)
    device = property(lambda self: self._op.device)

    @property
    def name(self) -> str:
        return f"{self._op.name}:{self._value_index}"

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape: Any) -> None:
        """Refine the static shape; an incompatible shape is a ValueError."""
        self._shape = self._shape.merge_with(as_shape(shape))

    def consumers(self) -> list["Operation"]:
        return list(self._consumers)

    def eval(self, feed_dict: dict | None = None, session: Any = None) -> Any:
        return _run_with_default_session(self, feed_dict, session, "Tensor.eval()")

    def __repr__(self) -> str:
        shape = self._shape
        shape_text = "<unknown>" if shape.ndims is None else str(shape)
        if shape.ndims is not None and shape.ndims == 1:
            shape_text = f"({'?' if shape.as_list()[0] is None else shape.as_list()[0]},)"
        return f"<tf.Tensor '{self.name}' shape={shape_text} dtype={self._dtype.name}>"

    __str__ = __repr__

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: Any) -> bool:  # identity, as TF1
        return self is other

    def __ne__(self, other: Any) -> bool:
        return self is not other

    def __bool__(self) -> bool:
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. "
                        "Use `if t is not None:` or tf.cond to branch on a tensor's value.")

    def __iter__(self):
        dims = self._shape.as_tuple()
        if dims is None or not dims or dims[0] is None:
            raise TypeError("Tensor objects are only iterable when the first dimension is known.")
        return (self[i] for i in range(dims[0]))

    def __len__(self) -> int:
        dims = self._shape.as_tuple()
        if dims is None or not dims or dims[0] is None:
            raise TypeError(f"len is not well defined for tensor {self.name} with shape {self._shape}")
        return dims[0]

    def _as_node_def_input(self) -> str:
        return self._op.name if self._value_index == 0 else self.name


def _run_with_default_session(fetch: Any, feed_dict: dict | None, session: Any, what: str) -> Any:
    session = session or get_default_session()
    if session is None:
        raise ValueError(f"Cannot evaluate with {what}: no default session is registered. Use "
                         "`with sess.as_default()` or pass an explicit session.")
    if session.graph is not _graph_of(fetch):
        raise ValueError(f"Cannot use the given session to evaluate {what}: the element's graph is "
                         "different from the session's graph.")
    return session.run(fetch, feed_dict)


def _graph_of(fetch: Any) -> "Graph":
    return fetch.graph


class Operation:
    """A node of the graph: a type, inputs, control inputs, outputs, attributes and a device."""

    def __init__(self, graph: "Graph", op_type: str, name: str, inputs: list[Tensor],
                 output_specs: list[tuple[_dtypes.DType, TensorShape]], attrs: dict,
                 control_inputs: list["Operation"], device: str, guard: tuple):
        self._graph = graph
        self._type = op_type
        self._name = name
        self._inputs = tuple(inputs)
        self._control_inputs = list(control_inputs)
        self._device = device
        self._attrs = attrs
        self._guard = guard  # cond branches this op lives in: ((pred_tensor, taken_when), ...)
        # where the op was made; source lines are read only when someone looks (TF's op.traceback)
        stack = traceback.StackSummary.extract(traceback.walk_stack(sys._getframe()), limit=12, lookup_lines=False)
        stack.reverse()
        self._traceback = stack[:-3]
        self._outputs = [Tensor(self, i, dt, sh) for i, (dt, sh) in enumerate(output_specs)]
        self._id = graph._next_id()
        for t in self._inputs:
            t._consumers.append(self)

    name = property(lambda self: self._name)
    type = property(lambda self: self._type)
    graph = property(lambda self: self._graph)
    inputs = property(lambda self: self._inputs)
    outputs = property(lambda self: list(self._outputs))
    control_inputs = property(lambda self: list(self._control_inputs))
    device = property(lambda self: self._device)
    traceback = property(lambda self: list(self._traceback))
    attrs = property(lambda self: self._attrs)
    id = property(lambda self: self._id, doc="Creation order within the graph (unique per graph).")
    guard = property(lambda self: self._guard,
                     doc="The cond branches this op runs in: ((pred_tensor, taken_when), ...).")

    def values(self) -> tuple[Tensor, ...]:
        return tuple(self._outputs)

    def get_attr(self, name: str) -> Any:
        try:
            return self._attrs[name]
        except KeyError:
            raise ValueError(f"Operation {self._name!r} ({self._type}) has no attr named {name!r}") from None

    def _set_device(self, device_name: str) -> None:
        self._device = device_name

    def _add_control_input(self, op: "Operation") -> None:
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            self._graph._version += 1

    def run(self, feed_dict: dict | None = None, session: Any = None) -> None:
        _run_with_default_session(self, feed_dict, session, "Operation.run()")

    def __repr__(self) -> str:
        return f"<tf.Operation '{self._name}' type={self._type}>"

    @property
    def node_def(self) -> Any:
        from tftk.summary.graph_def import node_def  # lazy: pulls in protobuf
        return node_def(self)


class Graph:
    """A TF1 dataflow graph: operations, names, scopes, collections and the graph-level seed."""

    def __init__(self):
        self._ops: list[Operation] = []
        self._ops_by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._name_stack = ""
        self._control_dependencies_stack: list[list[Operation]] = []
        self._device_stack: list[str | Callable | None] = []
        self._cond_stack: list[tuple[Tensor, bool]] = []
        self._collections: dict[str, list] = {}
        self._last_id = 0
        self._version = 0
        self._finalized = False
        self.seed: int | None = None
        self._variable_store: Any = None  # created by variable_scope on first use
        self._var_scope_counts: dict[str, int] = {}
        self._var_scope: Any = None  # current VariableScope (variable_scope module)
        self._gradient_scope_count = 0

    # ---- building -------------------------------------------------------------------------
    def _next_id(self) -> int:
        self._last_id += 1
        return self._last_id

    @property
    def version(self) -> int:
        return self._version

    @property
    def finalized(self) -> bool:
        return self._finalized

    def finalize(self) -> None:
        self._finalized = True

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    def create_op(self, op_type: str, inputs: Iterable[Tensor],
                  output_specs: list[tuple[_dtypes.DType, Any]], name: str | None = None,
                  attrs: dict | None = None, control_inputs: Iterable[Operation] = ()) -> Operation:
        """Add one operation. `name` is scoped by the name stack and made unique."""
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        inputs = list(inputs)
        for t in inputs:
            if t.graph is not self:
                raise ValueError(f"Tensor {t.name} must be from the same graph as the new op "
                                 f"{name or op_type}.")
        if name and name.endswith("/"):  # a scope name used as an op name, taken exactly (TF1)
            op_name = name[:-1]
        else:
            op_name = self.unique_name(name or op_type)
        controls = list(control_inputs)
        if self._control_dependencies_stack:
            input_ops = {t.op for t in inputs}
            for frame in self._control_dependencies_stack:
                for c in frame:
                    if c not in input_ops and c not in controls:
                        controls.append(c)
        specs = [(dt, as_shape(sh)) for dt, sh in output_specs]
        op = Operation(self, op_type, op_name, inputs, specs, dict(attrs or {}), controls, "",
                       tuple(self._cond_stack))
        if self._device_stack:
            self._apply_device_scopes(op)
        self._ops.append(op)
        self._ops_by_name[op_name] = op
        self._version += 1
        return op

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """Scope `name` by the name stack and append `_N` if it is taken (TF1's rule)."""
        if self._name_stack:
            name = self._name_stack + "/" + name
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    def get_name_scope(self) -> str:
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name: str | None) -> Iterator[str]:
        """Push a name scope; a name ending in '/' re-enters that exact scope."""
        old = self._name_stack
        if name:
            if name.endswith("/"):
                new = name[:-1]
            else:
                new = self.unique_name(name)
        else:
            new = ""
        self._name_stack = new
        try:
            yield new + "/" if new else ""
        finally:
            self._name_stack = old

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs: Iterable[Any] | None) -> Iterator[None]:
        """Ops created inside run after `control_inputs`; None clears the outer dependencies."""
        if control_inputs is None:
            saved = self._control_dependencies_stack
            self._control_dependencies_stack = []
            try:
                yield
            finally:
                self._control_dependencies_stack = saved
            return
        ops = []
        for c in control_inputs:
            op = _as_op(c)
            if op.graph is not self:
                raise ValueError(f"Control input {op.name} is from a different graph")
            ops.append(op)
        self._control_dependencies_stack.append(ops)
        try:
            yield
        finally:
            self._control_dependencies_stack.pop()

    @contextlib.contextmanager
    def device(self, device_name_or_function: str | Callable | None) -> Iterator[None]:
        """Place new ops on a device: a name (merged with outer scopes, inner fields win), a
        function `op -> device name` (e.g. `tf.train.replica_device_setter`), or None to clear."""
        if isinstance(device_name_or_function, str):
            DeviceSpec.from_string(device_name_or_function)  # a malformed name fails here, not later
        elif device_name_or_function is not None and not callable(device_name_or_function):
            raise TypeError(f"tf.device expects a device name, a function or None, got "
                            f"{device_name_or_function!r}")
        self._device_stack.append(device_name_or_function)
        try:
            yield
        finally:
            self._device_stack.pop()

    @contextlib.contextmanager
    def colocate_with(self, op: Any, ignore_existing: bool = False) -> Iterator[None]:
        """New ops go on `op`'s device: as in TF1, colocation is stronger than the device scopes
        (and functions such as replica_device_setter) around it, which are set aside inside.
        `ignore_existing` is accepted: enclosing colocations are always replaced by the newest."""
        target = op.op if hasattr(op, "op") and not isinstance(op, Operation) else op
        if target is None:
            yield
            return
        saved, self._device_stack = self._device_stack, [target.device]
        try:
            yield
        finally:
            self._device_stack = saved

    def _apply_device_scopes(self, op: "Operation") -> None:
        """TF1's order: the innermost scope first; outer names only fill fields still unset."""
        for scope in reversed(self._device_stack):
            if scope is None:
                break
            if callable(scope):
                op._set_device(_device_name(scope(op)))
            else:
                op._set_device(merge_device_strings(scope, op.device))

    @contextlib.contextmanager
    def _cond_branch(self, pred: Tensor, taken_when: bool) -> Iterator[None]:
        """Ops created inside run only when `pred` is `taken_when` (tf.cond's branches)."""
        self._cond_stack.append((pred, taken_when))
        try:
            yield
        finally:
            self._cond_stack.pop()

    @contextlib.contextmanager
    def as_default(self) -> Iterator["Graph"]:
        _default_graph_stack.push(self)
        try:
            yield self
        finally:
            _default_graph_stack.pop(self)

    # ---- lookup ---------------------------------------------------------------------------
    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"The name {name!r} refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name: str) -> Tensor:
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(f"The name {name!r} looks like an (invalid) Operation name, not a "
                             "Tensor. Tensor names must be of the form \"<op_name>:<output_index>\".")
        op = self.get_operation_by_name(op_name) if op_name in self._ops_by_name else None
        if op is None:
            raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. The "
                           f"operation, {op_name!r}, does not exist in the graph.")
        if int(index) >= len(op._outputs):
            raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. The "
                           f"operation, {op_name!r}, exists but only has {len(op._outputs)} outputs.")
        return op._outputs[int(index)]

    def as_graph_element(self, obj: Any, allow_tensor: bool = True,
                         allow_operation: bool = True) -> Tensor | Operation:
        """Resolve a Tensor, Operation, name string or tensor-like object to an element of this graph."""
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                return self.get_tensor_by_name(obj)
            if allow_operation:
                return self.get_operation_by_name(obj)
            raise ValueError(f"Name {obj!r} refers to an Operation, but a Tensor is required here.")
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, Tensor) and allow_tensor or isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"{obj!r} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a "
                        f"{'Tensor or Operation' if allow_operation else 'Tensor'}.")

    def is_feedable(self, tensor: Tensor) -> bool:
        return True

    # ---- collections ----------------------------------------------------------------------
    def add_to_collection(self, name: str, value: Any) -> None:
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names: Iterable[str] | str, value: Any) -> None:
        for name in [names] if isinstance(names, str) else set(names):
            self.add_to_collection(name, value)

    def get_collection_ref(self, name: str) -> list:
        return self._collections.setdefault(name, [])

    def get_collection(self, name: str, scope: str | None = None) -> list:
        """A copy of collection `name`, filtered to items whose name matches `scope` (re.match)."""
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        pattern = re.compile(scope)
        return [item for item in items if hasattr(item, "name") and pattern.match(item.name)]

    def get_all_collection_keys(self) -> list[str]:
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)

    def as_graph_def(self, add_shapes: bool = False) -> Any:
        from tftk.summary.graph_def import graph_to_graph_def  # lazy: pulls in protobuf
        return graph_to_graph_def(self, add_shapes)


def _as_op(value: Any) -> Operation:
    if isinstance(value, Operation):
        return value
    if isinstance(value, Tensor):
        return value.op
    if hasattr(value, "_as_graph_element"):
        return _as_op(value._as_graph_element())
    if hasattr(value, "op") and isinstance(value.op, Operation):
        return value.op
    raise TypeError(f"Can not convert a {type(value).__name__} into an Operation")


class _DefaultStack(threading.local):
    def __init__(self):
        self.stack: list[Any] = []

    def push(self, item: Any) -> None:
        self.stack.append(item)

    def pop(self, item: Any) -> None:
        if not self.stack or self.stack[-1] is not item:
            raise AssertionError("Nesting violated for a default graph/session stack.")
        self.stack.pop()


class _GraphStack(_DefaultStack):
    global_default: Graph | None = None


_default_graph_stack = _GraphStack()
_default_session_stack = _DefaultStack()


def get_default_graph() -> Graph:
    if _default_graph_stack.stack:
        return _default_graph_stack.stack[-1]
    if _GraphStack.global_default is None:
        _GraphStack.global_default = Graph()
    return _GraphStack.global_default


def reset_default_graph() -> None:
    """Clear the global default graph (not allowed inside a `with g.as_default()` block)."""
    if _default_graph_stack.stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs.")
    _GraphStack.global_default = Graph()


def get_default_session() -> Any:
    return _default_session_stack.stack[-1] if _default_session_stack.stack else None


@contextlib.contextmanager
def name_scope(name: str | None, default_name: str | None = None, values: Any = None) -> Iterator[str]:
    """TF1's `tf.name_scope(name, default_name=None, values=None)`; yields the scope string."""
    graph = _graph_from_values(values)
    with graph.name_scope(name if name is not None else default_name) as scope:
        yield scope


def _graph_from_values(values: Any) -> Graph:
    for v in values or ():
        if isinstance(v, (Tensor, Operation)):
            return v.graph
        if hasattr(v, "graph") and isinstance(getattr(v, "graph"), Graph):
            return v.graph
    return get_default_graph()


def control_dependencies(control_inputs: Iterable[Any] | None):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function: str | Callable | None):
    return get_default_graph().device(device_name_or_function)


def _device_name(device: Any) -> str:
    """A device function's result (a name, a DeviceSpec or None) as a name."""
    return device.to_string() if isinstance(device, DeviceSpec) else (device or "")


def colocate_with(op: Any, ignore_existing: bool = False):
    """Place the ops created inside on `op`'s device (a Tensor, Operation or Variable)."""
    return get_default_graph().colocate_with(op, ignore_existing)


def add_to_collection(name: str, value: Any) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names: Iterable[str] | str, value: Any) -> None:
    get_default_graph().add_to_collections(names, value)


def get_collection(key: str, scope: str | None = None) -> list:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: str) -> list:
    return get_default_graph().get_collection_ref(key)


# ---- conversion of Python values to tensors ---------------------------------------------------

_conversion_functions: list[tuple[type, Callable]] = []


def register_tensor_conversion_function(base_type: type, conversion_func: Callable,
                                        priority: int = 100) -> None:
    """`conversion_func(value, dtype=None, name=None, as_ref=False) -> Tensor` for `base_type`."""
    _conversion_functions.append((base_type, conversion_func))


def convert_to_tensor(value: Any, dtype: Any = None, name: str | None = None,
                      preferred_dtype: Any = None, dtype_hint: Any = None) -> Tensor:
    """Return `value` as a Tensor: tensors pass through, Python/numpy values become constants."""
    want = _dtypes.as_dtype(dtype) if dtype is not None else None
    if isinstance(value, Tensor):
        if want is not None and value.dtype is not want:
            raise ValueError(f"Tensor conversion requested dtype {want.name} for Tensor with dtype "
                             f"{value.dtype.name}: {value!r}")
        return value
    for base, fn in _conversion_functions:
        if isinstance(value, base):
            return convert_to_tensor(fn(value, dtype=want, name=name), dtype=want)
    if isinstance(value, (list, tuple)) and _contains_tensor(value):
        return _pack_nested(value, want, name)
    from tftk.framework.constant_op import constant  # imports this module: resolved at call time
    if want is None:
        hint = preferred_dtype if preferred_dtype is not None else dtype_hint
        if hint is not None:
            try:
                return constant(value, dtype=hint, name=name or "Const", _strict=True)
            except (TypeError, ValueError):
                pass
    return constant(value, dtype=want, name=name or "Const", _strict=True)


def _contains_tensor(value: Any) -> bool:
    if isinstance(value, Tensor) or any(isinstance(value, b) for b, _ in _conversion_functions):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v) for v in value)
    return False


_auto_packing: list[Callable] = []  # `stack(values, name=...)`, given by the ops layer (array_ops)


def register_auto_packing(stack: Callable) -> None:
    """How a nested list holding tensors becomes one tensor (`[t1, t2]` -> Pack); the ops layer
    registers its `stack` here, so the framework never imports it."""
    _auto_packing[:] = [stack]


def _pack_nested(value: Any, dtype: Any, name: str | None) -> Tensor:
    if not _auto_packing:
        raise TypeError("Converting a list holding tensors needs tftk's ops (import tftk first)")
    stack = _auto_packing[0]
    if isinstance(value, (list, tuple)):
        items = [_pack_nested(v, dtype, None) if isinstance(v, (list, tuple)) else v for v in value]
        return stack(items, name=name or "packed")
    return convert_to_tensor(value, dtype=dtype)


@contextlib.contextmanager
def guard_scope(graph: Graph, guard: tuple) -> Iterator[None]:
    """Create ops as if inside exactly the cond branches `guard` (used by gradients)."""
    saved = graph._cond_stack
    graph._cond_stack = list(guard)
    try:
        yield
    finally:
        graph._cond_stack = saved
