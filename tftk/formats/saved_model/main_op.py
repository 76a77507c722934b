"""`tf.saved_model.main_op`: the init op a SavedModel's loader runs after restoring variables.

`main_op()` (re)initialises global and local variables and lookup tables; `main_op_with_restore`
is one op depending on both that and a Saver's restore op. As in TF, the graph orders neither
before the other, so a variable both initialises and restores may end up with either value.
Pass either as `main_op=` to `SavedModelBuilder.add_meta_graph_and_variables`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["main_op", "main_op_with_restore"]


def main_op() -> Any:
    """One op that runs the global and local variable initialisers and `tables_initializer`."""
    from tftk.ops.categorical_ops import tables_initializer
    from tftk.ops.control_flow_ops import group
    from tftk.ops.variables import global_variables_initializer, local_variables_initializer
    return group(global_variables_initializer(), local_variables_initializer(), tables_initializer())


def main_op_with_restore(restore_op_name: Any) -> Any:
    """One op running `main_op()` and the restore op `restore_op_name` (an Operation, a Tensor, or an op's name in
    the default graph, e.g. `saver.saver_def.restore_op_name`)."""
    from tftk.framework.ops import control_dependencies, get_default_graph
    from tftk.ops.control_flow_ops import group
    restore = restore_op_name
    if isinstance(restore_op_name, str):
        try:
            restore = get_default_graph().get_operation_by_name(restore_op_name)
        except KeyError:
            raise ValueError(f"main_op_with_restore: the default graph has no op named {restore_op_name!r}; "
                             f"pass a Saver's restore op or its saver_def.restore_op_name") from None
    with control_dependencies([main_op()]):
        return group(restore)
