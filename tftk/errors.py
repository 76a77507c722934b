"""`tf.errors`: the TF1 error classes, their status codes, and the code <-> class mappings."""

from tftk.framework.errors import *  # noqa: F401,F403
from tftk.framework import errors as _errors
from tftk.framework.errors import __all__ as _classes

OK = 0
CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS = 1, 2, 3, 4, 5, 6
PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE = 7, 8, 9, 10, 11
UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED = 12, 13, 14, 15, 16

# Each OpError subclass by the status code it carries.
_CLASS_BY_CODE = {cls(None, None, "").error_code: cls for cls in
                  (getattr(_errors, n) for n in _classes) if isinstance(cls, type)
                  and issubclass(cls, _errors.OpError) and cls is not _errors.OpError}


def exception_type_from_error_code(error_code: int) -> type:
    """The OpError subclass TF raises for a status code (KeyError for an unknown code)."""
    return _CLASS_BY_CODE[error_code]


def error_code_from_exception_type(cls: type) -> int:
    """The status code of an OpError subclass (KeyError for other classes)."""
    for code, known in _CLASS_BY_CODE.items():
        if known is cls:
            return code
    raise KeyError(cls)


__all__ = list(_classes) + [
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
    "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
    "exception_type_from_error_code", "error_code_from_exception_type"]
