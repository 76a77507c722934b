"""`tf.make_template`: a function whose variables are created on the first call and shared after."""

from __future__ import annotations

import functools
from typing import Any, Callable

from tftk.framework.ops import GraphKeys, get_default_graph
from tftk.ops.variable_scope import VariableScope, variable_scope

__all__ = ["make_template", "Template"]


class Template:
    """Calls `func` under one variable scope; the first call creates variables, later calls reuse them."""

    def __init__(self, name: str, func: Callable, create_scope_now: bool = False,
                 unique_name: str | None = None, custom_getter: Callable | None = None):
        if not name:
            raise ValueError("make_template: name_ cannot be empty")
        self._name = name
        self._func = func
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variable_scope: VariableScope | None = None
        self._variables_created = False
        if create_scope_now:
            with self._first_scope() as vs:
                self._variable_scope = vs

    def _first_scope(self) -> variable_scope:
        return variable_scope(self._unique_name, default_name=self._name, custom_getter=self._custom_getter)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._variables_created:
            with variable_scope(self._variable_scope, reuse=True):
                return self._func(*args, **kwargs)
        if self._variable_scope is not None:
            with variable_scope(self._variable_scope):
                result = self._func(*args, **kwargs)
        else:
            with self._first_scope() as vs:
                self._variable_scope = vs
                result = self._func(*args, **kwargs)
        self._variables_created = True
        return result

    @property
    def name(self) -> str:
        return self._name

    @property
    def func(self) -> Callable:
        return self._func

    @property
    def variable_scope(self) -> VariableScope | None:
        return self._variable_scope

    @property
    def variable_scope_name(self) -> str | None:
        return None if self._variable_scope is None else self._variable_scope.name

    def _collection(self, key: str) -> list:
        if self._variable_scope is None:
            return []
        prefix = self._variable_scope.name + "/"
        return [v for v in get_default_graph().get_collection(key) if v.name.startswith(prefix)]

    @property
    def variables(self) -> list:
        return self.global_variables + self.local_variables

    @property
    def global_variables(self) -> list:
        return self._collection(GraphKeys.GLOBAL_VARIABLES)

    @property
    def local_variables(self) -> list:
        return self._collection(GraphKeys.LOCAL_VARIABLES)

    @property
    def trainable_variables(self) -> list:
        return self._collection(GraphKeys.TRAINABLE_VARIABLES)


def make_template(name_: str, func_: Callable, create_scope_now_: bool = False,
                  unique_name_: str | None = None, custom_getter_: Callable | None = None,
                  **kwargs: Any) -> Template:
    """Wrap `func_` (with `kwargs` bound) so every call shares the variables of the first one."""
    func = functools.partial(func_, **kwargs) if kwargs else func_
    return Template(name_, func, create_scope_now_, unique_name_, custom_getter_)
