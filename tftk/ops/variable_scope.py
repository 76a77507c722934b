"""`variable_scope` and `get_variable`: named, shareable variables (TF1 semantics, seed 000).

Variable names come from the variable scopes only (name_scope does not prefix them); op names
come from the name scopes that variable_scope also opens. Sharing is explicit: an existing name
is an error unless the scope reuses.
"""

from __future__ import annotations

import os
import traceback
from typing import Any, Callable

import numpy as np

from tftk.framework import dtypes
from tftk.framework.func_graph import root_graph
from tftk.framework.ops import GraphKeys, Tensor, get_default_graph
from tftk.framework.tensor_shape import as_shape
from tftk.ops import init_ops
from tftk.ops.variables import Variable

__all__ = ["VariableScope", "variable_scope", "get_variable", "get_variable_scope", "AUTO_REUSE",
           "get_local_variable", "variable_op_scope"]


class _AutoReuse:
    def __repr__(self) -> str:
        return "tf.AUTO_REUSE"


AUTO_REUSE = _AutoReuse()
_TFTK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class VariableScope:
    """The defaults (reuse, initializer, dtype, regularizer) for get_variable in one scope."""

    def __init__(self, reuse: Any, name: str = "", initializer: Any = None, regularizer: Any = None,
                 dtype: Any = dtypes.float32, original_name_scope: str = "",
                 custom_getter: Callable | None = None, partitioner: Any = None,
                 caching_device: Any = None, constraint: Any = None, use_resource: Any = None):
        self._reuse = reuse
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._dtype = dtypes.as_dtype(dtype)
        self._name_scope = original_name_scope
        self._custom_getter = custom_getter
        self._partitioner = partitioner
        self._caching_device = caching_device
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    regularizer = property(lambda self: self._regularizer)
    dtype = property(lambda self: self._dtype)
    custom_getter = property(lambda self: self._custom_getter)
    partitioner = property(lambda self: self._partitioner)
    caching_device = property(lambda self: self._caching_device)
    constraint = property(lambda self: self._constraint)
    use_resource = property(lambda self: False)

    def reuse_variables(self) -> None:
        """Share the variables of this scope from now on."""
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        self._initializer = initializer

    def set_dtype(self, dtype: Any) -> None:
        self._dtype = dtypes.as_dtype(dtype)

    def set_regularizer(self, regularizer: Any) -> None:
        self._regularizer = regularizer

    def set_custom_getter(self, custom_getter: Callable | None) -> None:
        self._custom_getter = custom_getter

    def set_partitioner(self, partitioner: Any) -> None:
        self._partitioner = partitioner

    def set_caching_device(self, caching_device: Any) -> None:
        self._caching_device = caching_device

    def get_variable(self, name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                     regularizer: Any = None, trainable: bool = True, collections: Any = None,
                     caching_device: Any = None, partitioner: Any = None, validate_shape: bool = True,
                     use_resource: Any = None, custom_getter: Any = None, constraint: Any = None,
                     reuse: Any = None, **kwargs: Any) -> Variable:
        full_name = f"{self._name}/{name}" if self._name else name
        reuse = True if reuse is True else self._reuse
        getter = custom_getter or self._custom_getter
        if initializer is None:  # not `or`: a Tensor initializer has no truth value
            initializer = self._initializer
        args = dict(shape=shape, dtype=dtype or self._dtype, initializer=initializer,
                    regularizer=regularizer or self._regularizer, trainable=trainable,
                    collections=collections, validate_shape=validate_shape,
                    constraint=constraint or self._constraint, reuse=reuse)
        if partitioner is not None or self._partitioner is not None:
            args["partitioner"] = partitioner if partitioner is not None else self._partitioner
        if getter is not None:
            return getter(_true_getter, full_name, **args)
        return _true_getter(full_name, **args)

    def __repr__(self) -> str:
        return f"<tftk VariableScope name={self._name!r} reuse={self._reuse}>"


def _store(graph) -> dict[str, Variable]:
    graph = root_graph(graph)
    if graph._variable_store is None:
        graph._variable_store = {}
    return graph._variable_store


def _true_getter(name: str, shape: Any = None, dtype: Any = dtypes.float32, initializer: Any = None,
                 regularizer: Any = None, trainable: bool = True, collections: Any = None,
                 validate_shape: bool = True, constraint: Any = None, reuse: Any = None,
                 partitioner: Any = None, **kwargs: Any) -> Variable:
    if partitioner is not None:
        return _partitioned_getter(name, shape, dtype, initializer, partitioner, reuse,
                                   dict(regularizer=regularizer, trainable=trainable, collections=collections,
                                        validate_shape=validate_shape, constraint=constraint))
    graph = root_graph(get_default_graph())
    store = _store(graph)
    dtype = dtypes.as_dtype(dtype)
    if name in store:
        if reuse is not True and reuse is not AUTO_REUSE:
            where = "".join(traceback.format_list(_user_frames(store[name].op.traceback)))
            raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to set "
                             f"reuse=True or reuse=tf.AUTO_REUSE in VarScope? Originally defined at:\n\n{where}")
        found = store[name]
        if shape is not None and not as_shape(shape).is_compatible_with(found.shape):
            raise ValueError(f"Trying to share variable {name}, but specified shape {as_shape(shape)} "
                             f"and found shape {found.shape}.")
        if dtype is not found.dtype and not _initializer_sets_dtype(initializer):
            raise ValueError(f"Trying to share variable {name}, but specified dtype {dtype.name} and "
                             f"found dtype {found.dtype.name}.")
        return found
    if reuse is True:
        raise ValueError(f"Variable {name} does not exist, or was not created with tf.get_variable(). "
                         "Did you mean to set reuse=tf.AUTO_REUSE in VarScope?")
    initial_value, dtype = _initial_value(name, shape, dtype, initializer)
    with graph.as_default(), graph.name_scope(None):  # variable names ignore the name scope
        variable = Variable(initial_value, trainable=trainable, collections=collections, name=name,
                            dtype=dtype, validate_shape=validate_shape, constraint=constraint)
    store[name] = variable
    if regularizer is not None:
        with graph.as_default(), graph.name_scope(None), graph.name_scope(f"{name}/Regularizer"):
            loss = regularizer(variable)
        if loss is not None:
            graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return variable


def _partitioned_getter(name: str, shape: Any, dtype: Any, initializer: Any, partitioner: Any, reuse: Any,
                        options: dict) -> Any:
    """get_variable with a partitioner: the PartitionedVariable `name` of parts `name/part_<i>`
    (each with its SaveSliceInfo; a callable initializer gets each part's _PartitionInfo)."""
    from tftk.ops.partitioned_variables import PartitionedVariable, SaveSliceInfo, partitioned_parts
    store = _store(get_default_graph())
    dtype = dtypes.as_dtype(dtype)
    found = store.get(name)
    if found is not None:
        if not isinstance(found, PartitionedVariable):
            raise ValueError(f"Trying to reuse partitioned variable {name}, but it was created without a partitioner")
        if reuse is not True and reuse is not AUTO_REUSE:
            raise ValueError(f"Partitioned variable with name {name} already exists. Did you mean to set "
                             "reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
        if shape is not None and not as_shape(shape).is_compatible_with(found.shape):
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified shape "
                             f"{as_shape(shape)} and found shape {found.shape}.")
        return found
    if reuse is True:
        raise ValueError(f"PartitionedVariable {name} does not exist, or was not created with tf.get_variable(). "
                         "Did you mean to set reuse=tf.AUTO_REUSE in VarScope?")
    if initializer is not None and not callable(initializer):
        raise ValueError(f"Partitioned variable {name} needs an initializer callable taking partition_info "
                         f"(e.g. tf.constant_initializer), got {type(initializer).__name__}")
    parts = []
    full = as_shape(shape).as_list() if shape is not None else None
    for part_name, offset, part_shape, info in partitioned_parts(name, shape, dtype, partitioner):
        part_init = _part_initializer(initializer, info, dtype)
        part = _true_getter(part_name, part_shape, dtype, part_init, reuse=reuse, **options)
        part._save_slice_info = SaveSliceInfo(name, full, offset, part_shape)
        parts.append(part)
    counts = [1] * len(full)
    axis = next((i for i, (f, p) in enumerate(zip(full, parts[0].shape.as_list())) if f != p), 0)
    counts[axis] = len(parts)
    store[name] = PartitionedVariable(name, full, dtype, parts, counts)
    return store[name]


def _part_initializer(initializer: Any, info: Any, dtype: dtypes.DType) -> Callable:
    """The initializer of one part: the variable's initializer told which part it fills."""
    if initializer is None:
        initializer = init_ops.GlorotUniform() if dtype.is_floating else init_ops.Zeros()
    if isinstance(initializer, type):
        initializer = initializer(dtype=dtype)
    return lambda shape, dtype=None, partition_info=None: initializer(shape, dtype=dtype, partition_info=info)


def _user_frames(frames: list) -> list:
    """The last frames outside tftk itself: where the user asked for the variable (as TF1 does)."""
    outside = [f for f in frames if not f.filename.startswith(_TFTK_DIR)]
    return (outside or frames)[-3:]


def _initializer_sets_dtype(initializer: Any) -> bool:
    return initializer is not None and not callable(initializer)


def _initial_value(name: str, shape: Any, dtype: dtypes.DType, initializer: Any) -> tuple[Any, Any]:
    """What to pass to Variable: a tensor/array used as is, or a callable building one."""
    if initializer is not None and not callable(initializer) or isinstance(initializer, Tensor):
        if isinstance(initializer, Tensor):
            value_dtype = initializer.dtype
        else:
            value_dtype = dtypes.as_dtype(np.asarray(initializer).dtype) if isinstance(initializer, np.ndarray) \
                else None
        if shape is not None and isinstance(initializer, Tensor) and \
                not as_shape(shape).is_compatible_with(initializer.shape):
            raise ValueError(f"The initializer of variable {name} has shape {initializer.shape}, "
                             f"but shape {as_shape(shape)} was specified.")
        return initializer, value_dtype
    if shape is None or not as_shape(shape).is_fully_defined():
        raise ValueError(f"Shape of a new variable ({name}) must be fully defined, but instead was "
                         f"{as_shape(shape) if shape is not None else None}.")
    if initializer is None:
        if dtype.is_floating:
            initializer = init_ops.GlorotUniform()
        elif dtype.is_integer or dtype.is_bool or dtype is dtypes.string:
            initializer = init_ops.Zeros()
        else:
            raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")
    if isinstance(initializer, type):
        initializer = initializer(dtype=dtype)
    dims = as_shape(shape).as_list()
    return (lambda: initializer(dims, dtype=dtype, partition_info=None)), dtype


def get_variable_scope() -> VariableScope:
    graph = root_graph(get_default_graph())
    if graph._var_scope is None:
        graph._var_scope = VariableScope(False)
    return graph._var_scope


def get_variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                 regularizer: Any = None, trainable: bool = True, collections: Any = None,
                 caching_device: Any = None, partitioner: Any = None, validate_shape: bool = True,
                 use_resource: Any = None, custom_getter: Any = None, constraint: Any = None,
                 **kwargs: Any) -> Variable:
    """Create a variable named `<variable scope>/name`, or return it when the scope reuses."""
    if dtype is None and initializer is not None and not callable(initializer):
        if isinstance(initializer, Tensor):
            dtype = initializer.dtype
        else:
            from tftk.framework.constant_op import numpy_value
            dtype = dtypes.as_dtype(numpy_value(initializer, None).dtype)
    return get_variable_scope().get_variable(
        name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
        trainable=trainable, collections=collections, validate_shape=validate_shape,
        custom_getter=custom_getter, constraint=constraint, partitioner=partitioner)


def get_local_variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                       **kwargs: Any) -> Variable:
    """get_variable, put in LOCAL_VARIABLES and not trainable."""
    kwargs.pop("collections", None)
    kwargs.pop("trainable", None)
    return get_variable(name, shape, dtype, initializer, trainable=False,
                        collections=[GraphKeys.LOCAL_VARIABLES], **kwargs)


class variable_scope:  # noqa: N801 - TF's public name
    """Context manager opening a variable scope (and a name scope for ops)."""

    def __init__(self, name_or_scope: Any, default_name: str | None = None, values: Any = None,
                 initializer: Any = None, regularizer: Any = None, caching_device: Any = None,
                 partitioner: Any = None, custom_getter: Any = None, reuse: Any = None,
                 dtype: Any = None, use_resource: Any = None, constraint: Any = None,
                 auxiliary_name_scope: bool = True):
        if name_or_scope is None and default_name is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if not (reuse is None or reuse is True or reuse is False or reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None or tf.AUTO_REUSE.")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._values = values
        self._overrides = dict(initializer=initializer, regularizer=regularizer, dtype=dtype,
                               custom_getter=custom_getter, partitioner=partitioner,
                               caching_device=caching_device, constraint=constraint)
        self._reuse = reuse or None
        self._auxiliary_name_scope = auxiliary_name_scope
        self._name_scope_cm: Any = None

    def __enter__(self) -> VariableScope:
        from tftk.framework.ops import _graph_from_values
        graph = _graph_from_values(self._values)
        self._graph = graph
        self._graph_cm = graph.as_default()
        self._graph_cm.__enter__()
        parent = get_variable_scope()
        self._parent = parent
        if isinstance(self._name_or_scope, VariableScope):
            template = self._name_or_scope
            full_name = template.name
            ns_label = full_name.split("/")[-1]
            reuse = self._reuse if self._reuse else template.reuse
            inherited = template
        else:
            if self._name_or_scope is not None:
                label = str(self._name_or_scope)
            else:
                label = self._unique_default(graph, parent)
            full_name = f"{parent.name}/{label}" if parent.name else label
            ns_label = label if self._name_or_scope is not None else self._default_name
            reuse = True if (self._reuse is True or parent.reuse is True) else \
                (AUTO_REUSE if (self._reuse is AUTO_REUSE or parent.reuse is AUTO_REUSE) else False)
            inherited = parent
        if self._auxiliary_name_scope:
            self._name_scope_cm = graph.name_scope(ns_label)
            op_scope = self._name_scope_cm.__enter__()
        else:
            op_scope = graph.get_name_scope() + "/" if graph.get_name_scope() else ""
        original = template.original_name_scope if isinstance(self._name_or_scope, VariableScope) else op_scope
        o = self._overrides
        scope = VariableScope(
            reuse, full_name,
            initializer=o["initializer"] if o["initializer"] is not None else inherited.initializer,
            regularizer=o["regularizer"] if o["regularizer"] is not None else inherited.regularizer,
            dtype=o["dtype"] if o["dtype"] is not None else inherited.dtype,
            original_name_scope=original,
            custom_getter=o["custom_getter"] if o["custom_getter"] is not None else inherited.custom_getter,
            partitioner=o["partitioner"] if o["partitioner"] is not None else inherited.partitioner,
            caching_device=o["caching_device"] if o["caching_device"] is not None else inherited.caching_device,
            constraint=o["constraint"] if o["constraint"] is not None else inherited.constraint)
        home = root_graph(graph)
        home._var_scope_counts[full_name] = home._var_scope_counts.get(full_name, 0) + 1
        home._var_scope = scope
        return scope

    def _unique_default(self, graph, parent: VariableScope) -> str:
        prefix = self._default_name
        base = f"{parent.name}/{prefix}" if parent.name else prefix
        counts = root_graph(graph)._var_scope_counts
        if counts.get(base, 0) == 0:
            return prefix
        i = 1
        while counts.get(f"{base}_{i}", 0) > 0:
            i += 1
        return f"{prefix}_{i}"

    def __exit__(self, *exc: Any) -> None:
        root_graph(self._graph)._var_scope = self._parent
        if self._name_scope_cm is not None:
            self._name_scope_cm.__exit__(*exc)
        self._graph_cm.__exit__(*exc)


def variable_op_scope(values: Any, name_or_scope: Any, default_name: str | None = None, **kwargs: Any):
    """TF 0.x spelling of variable_scope with `values` first."""
    return variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs)
