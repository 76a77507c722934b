"""TF2's behaviour switches as a TF1 program sees them: tftk always behaves as TF 1.x.

`tf.disable_v2_behavior()` and its kin ask for what tftk always does (graph mode, TF1 shapes
with Dimension objects, TF1 control flow, reference variables, Tensors hashed by identity), so
calling them is correct and changes nothing; the `*_enabled` queries and `executing_eagerly`
report that state.
"""

from __future__ import annotations

__all__ = ["disable_v2_behavior", "disable_eager_execution", "disable_v2_tensorshape",
           "disable_control_flow_v2", "disable_resource_variables", "disable_tensor_equality",
           "control_flow_v2_enabled", "resource_variables_enabled", "executing_eagerly"]


def disable_v2_behavior() -> None:
    """Ask for TF 1.x behaviour; tftk has no other."""


def disable_eager_execution() -> None:
    """Ask for graph mode; tftk has no eager mode."""


def disable_v2_tensorshape() -> None:
    """Ask for TF1 shapes (`shape[i]` is a Dimension); tftk's are."""


def disable_control_flow_v2() -> None:
    """Ask for TF1 control flow (Switch/Merge, Enter/Exit frames); tftk's is."""


def disable_resource_variables() -> None:
    """Ask for reference variables; tftk's variables are."""


def disable_tensor_equality() -> None:
    """Ask for Tensors compared and hashed by identity; tftk's are."""


def control_flow_v2_enabled() -> bool:
    """False: tftk's control flow is TF1's."""
    return False


def resource_variables_enabled() -> bool:
    """False: tftk's variables are TF1 reference variables."""
    return False


def executing_eagerly() -> bool:
    """False: tftk builds graphs and runs them in sessions."""
    return False
