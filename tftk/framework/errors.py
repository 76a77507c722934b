"""TF1's error classes (`tf.errors`)."""

from __future__ import annotations

__all__ = [
    "OpError", "CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError",
    "NotFoundError", "AlreadyExistsError", "PermissionDeniedError", "ResourceExhaustedError",
    "FailedPreconditionError", "AbortedError", "OutOfRangeError", "UnimplementedError",
    "InternalError", "UnavailableError", "DataLossError", "UnauthenticatedError",
]


class OpError(Exception):
    """An error raised while building or running an op; `op` names the culprit when known."""

    def __init__(self, node_def=None, op=None, message: str = "", error_code: int = 2):
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message
        self.error_code = error_code

    def __str__(self) -> str:
        return self.message


def _op_error(name: str, code: int) -> type[OpError]:
    def __init__(self, node_def=None, op=None, message: str = ""):
        OpError.__init__(self, node_def, op, message, code)
    return type(name, (OpError,), {"__init__": __init__, "__doc__": f"TF1's {name} (code {code})."})


CancelledError = _op_error("CancelledError", 1)
UnknownError = _op_error("UnknownError", 2)
InvalidArgumentError = _op_error("InvalidArgumentError", 3)
DeadlineExceededError = _op_error("DeadlineExceededError", 4)
NotFoundError = _op_error("NotFoundError", 5)
AlreadyExistsError = _op_error("AlreadyExistsError", 6)
PermissionDeniedError = _op_error("PermissionDeniedError", 7)
ResourceExhaustedError = _op_error("ResourceExhaustedError", 8)
FailedPreconditionError = _op_error("FailedPreconditionError", 9)
AbortedError = _op_error("AbortedError", 10)
OutOfRangeError = _op_error("OutOfRangeError", 11)
UnimplementedError = _op_error("UnimplementedError", 12)
InternalError = _op_error("InternalError", 13)
UnavailableError = _op_error("UnavailableError", 14)
DataLossError = _op_error("DataLossError", 15)
UnauthenticatedError = _op_error("UnauthenticatedError", 16)

