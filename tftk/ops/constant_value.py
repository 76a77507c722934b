"""`constant_value` for the ops layer (it lives in the framework: see tftk.framework.constant_value)."""

from tftk.framework.constant_value import constant_value

__all__ = ["constant_value"]
