"""Ops that print or check values as the graph runs: `tf.Print`, `tf.print`, `tf.Assert`.

TF1 programs debug with them inside the graph: `x = tf.Print(x, [x], "x: ")` prints whenever x
is computed; `tf.Assert(cond, data)` fails the run with InvalidArgumentError listing `data`.
Values are formatted as TF formats them (Print/Assert: `[1 2 3...]` after `summarize` entries;
tf.print: numpy-like rows with `...` past `summarize` items at each end).
"""

from __future__ import annotations

import sys
from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import Operation, Tensor, convert_to_tensor, name_scope
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["Print", "Assert", "print_v2", "summarize_value"]


def _item(v: Any) -> str:
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    return str(v)


def summarize_value(value: Any, summarize: int | None) -> str:
    """TF's Tensor::SummarizeValue: the first `summarize` entries, nested in brackets, `...` if cut."""
    array = np.asarray(value)
    flat = array.ravel()
    limit = flat.size if summarize is None or summarize < 0 else min(summarize, flat.size)
    if array.ndim == 0:
        return _item(flat[0])
    if array.ndim == 1:
        inner = " ".join(_item(v) for v in flat[:limit])
    else:
        parts: list[str] = []
        _print_dim(0, array.shape, limit, flat, [0], parts)
        inner = "".join(parts)
    return "[" + inner + ("..." if limit < flat.size else "") + "]"


def _bracketed(value: Any, summarize: int | None) -> str:
    """One data item of Print/Assert: arrays bracket themselves, scalars get brackets."""
    text = summarize_value(value, summarize)
    return text if np.ndim(value) else f"[{text}]"


def _print_dim(dim: int, shape: tuple, limit: int, flat: np.ndarray, index: list, out: list) -> None:
    """TF's PrintOneDim: one dimension's entries, recursing; stops (with `...`) at `limit`."""
    if index[0] >= limit:
        return
    if dim == len(shape) - 1:
        for i in range(shape[dim]):
            if index[0] >= limit:
                if dim != 0:
                    out.append("...")
                return
            if i > 0:
                out.append(" ")
            out.append(_item(flat[index[0]]))
            index[0] += 1
        return
    for _ in range(shape[dim]):
        opened = index[0] < limit
        if opened:
            out.append("[")
        _print_dim(dim + 1, shape, limit, flat, index, out)
        if opened:
            out.append("]")


def _bind_print(op: Any, ctx: Any):
    message, first_n, summarize = op.get_attr("message"), op.get_attr("first_n"), op.get_attr("summarize")
    counter = ctx.resource(op, "printed", lambda: [0])

    def kernel(value, *data):
        if first_n is None or first_n < 0 or counter[0] < first_n:
            counter[0] += 1
            text = message + "".join(_bracketed(d, summarize) for d in data)
            print(text, file=sys.stderr, flush=True)
        return value

    return kernel


registry.register_op("Print", _bind_print, stateful=True)


@registry.register_gradient("Print")
def _print_grad(op, grad):
    return [grad] + [None] * (len(op.inputs) - 1)


def Print(input_: Any, data: Sequence[Any], message: str | None = None, first_n: int | None = None,
          summarize: int | None = None, name: str | None = None) -> Tensor:
    """Identity on `input_` that prints `message` and the values of `data` to stderr when run.

    Args:
      first_n: print only the first n times (None/negative: always).
      summarize: entries printed per tensor (default 3).
    """
    value = convert_to_tensor(input_)
    tensors = [convert_to_tensor(d) for d in data]
    return make_op("Print", [value] + tensors, value.dtype, value.shape, name or "Print",
                   {"message": message or "", "first_n": first_n,
                    "summarize": 3 if summarize is None else summarize})


def _assert_text(data: list, summarize: int) -> str:
    return "assertion failed: " + " ".join(_bracketed(d, summarize) for d in data)


def _bind_assert(op: Any, ctx: Any):
    summarize = op.get_attr("summarize")

    def kernel(condition, *data):
        if not bool(np.all(condition)):
            raise errors.InvalidArgumentError(None, op, _assert_text(list(data), summarize))

    return kernel


registry.register_op("Assert", _bind_assert, stateful=True)
registry.not_differentiable("Assert", "PrintV2")


def Assert(condition: Any, data: Sequence[Any], summarize: int | None = None,
           name: str | None = None) -> Operation:
    """An op that fails the run with InvalidArgumentError (listing `data`) when `condition` is false.

    Use it as a control dependency: `with tf.control_dependencies([tf.Assert(c, [x])]): ...`.
    """
    with name_scope(name, "Assert"):
        cond = convert_to_tensor(condition, dtype=dtypes.bool)
        if cond.shape.ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {cond.shape.ndims} for 'Assert' "
                             f"(condition {cond.name})")
        tensors = [convert_to_tensor(d) for d in data]
        return make_multi_op("Assert", [cond] + tensors, [], "Assert",
                             {"summarize": 3 if summarize is None else summarize})


# ---- tf.print ----------------------------------------------------------------------------------

def _quoted(v: Any) -> str:
    return f'"{_item(v)}"' if isinstance(v, bytes) else _item(v)


def _format_v2(value: Any, summarize: int) -> str:
    """tf.print's numpy-like text: rows on lines, `...` where a dimension exceeds 2 * summarize."""
    array = np.asarray(value)
    if array.ndim == 0:
        return _item(array.item() if array.dtype != object else array[()])

    def fmt(a: np.ndarray, depth: int) -> str:
        n = a.shape[0]
        cut = summarize >= 0 and n > 2 * summarize
        idx = list(range(summarize)) + [None] + list(range(n - summarize, n)) if cut else list(range(n))
        if a.ndim == 1:  # strings inside arrays are quoted, as TF prints them
            return "[" + " ".join("..." if i is None else _quoted(a[i]) for i in idx) + "]"
        sep = "\n" * (a.ndim - 1) + " " * (depth + 1)
        return "[" + sep.join("..." if i is None else fmt(a[i], depth + 1) for i in idx) + "]"

    return fmt(array, 0)


class _Template:
    """What tf.print prints: literal Python values kept as text, tensors by input position."""

    def __init__(self, inputs: Sequence[Any]):
        self.tensors: list[Tensor] = []
        self.parts = [self._part(x) for x in inputs]

    def _part(self, x: Any) -> Any:
        if isinstance(x, Tensor):
            self.tensors.append(x)
            return ("tensor", len(self.tensors) - 1)
        if isinstance(x, dict):
            return ("dict", [(k, self._part(v)) for k, v in x.items()])
        if isinstance(x, (list, tuple)):
            return ("list", [self._part(v) for v in x], isinstance(x, tuple))
        return ("text", str(x))

    def render(self, part: Any, values: Sequence[Any], summarize: int) -> str:
        kind = part[0]
        if kind == "tensor":
            return _format_v2(values[part[1]], summarize)
        if kind == "dict":
            return "{" + ", ".join(f"{k!r}: {self.render(p, values, summarize)}" for k, p in part[1]) + "}"
        if kind == "list":
            inner = ", ".join(self.render(p, values, summarize) for p in part[1])
            return f"({inner})" if part[2] else f"[{inner}]"
        return part[1]


def _stream_writer(stream: Any):
    """Resolve where tf.print writes, when it runs (so redirected sys.stdout/stderr are honoured)."""
    if stream is None or stream is sys.stderr:
        return lambda text: print(text, end="", file=sys.stderr, flush=True)
    if stream is sys.stdout:
        return lambda text: print(text, end="", file=sys.stdout, flush=True)
    if isinstance(stream, str) and stream.startswith("file://"):
        path = stream[len("file://"):]

        def append(text: str) -> None:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(text)
        return append
    if callable(stream):  # tf.logging.info and friends
        return lambda text: stream(text.rstrip("\n"))
    if hasattr(stream, "write"):
        return stream.write
    raise ValueError(f"Unsupported output stream {stream!r}: use sys.stdout, sys.stderr, a "
                     "'file://path' or a logging function")


def _bind_print_v2(op: Any, ctx: Any):
    template, summarize = op.get_attr("template"), op.get_attr("summarize")
    sep, end, write = op.get_attr("sep"), op.get_attr("end"), op.get_attr("writer")

    def kernel(*values):
        write(sep.join(template.render(p, values, summarize) for p in template.parts) + end)

    return kernel


registry.register_op("PrintV2", _bind_print_v2, stateful=True)


def print_v2(*inputs: Any, output_stream: Any = None, summarize: int = 3, sep: str = " ", end: str = "\n",
             name: str | None = None) -> Operation:
    """`tf.print`: an op that prints its inputs (tensors and Python values) when run."""
    template = _Template(inputs)
    return make_multi_op("PrintV2", template.tensors, [], name or "PrintV2",
                         {"template": template, "summarize": summarize, "sep": sep, "end": end,
                          "writer": _stream_writer(output_stream)})
