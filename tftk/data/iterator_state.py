"""A `tf.data` iterator's position in checkpoints: `make_saveable_from_iterator`.

TF serialises every iterator's internal buffers. tftk's datasets are Python generators, whose
state cannot be written down, so an iterator is checkpointed by what determines it instead:

- the op that started it (its `OneShotIterator`, or the `MakeIterator` initializer and so the
  dataset), the values its dataset's inputs had then (placeholders fed to the initializer,
  captured tensors), and the entropy its unseeded random transformations draw from;
- how many elements `get_next` has handed out.

Restoring starts the same pipeline again and replays it to that count, so the next element is
exactly the one an uninterrupted run gets next, whatever shuffle buffers, prefetch threads or
parallel maps are in between (their order is deterministic). The cost is re-reading the elements
handed out since the iterator was initialized (tens of thousands per second for record pipelines).
Pipelines whose order is not reproducible (`from_generator` over changing data, interleave with
`deterministic=False`) resume at the right count but not necessarily the same elements.

The state lives in a string variable of two items, [header, position]: the header (an op name,
the entropy and the input values, encoded as `cache.encode_element` does) is made once per
initialization, the position after every element. The variable is what `tf.train.Saver` saves.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from tftk.framework import dtypes, errors
from tftk.framework.ops import GraphKeys, Tensor, name_scope
from tftk.data.cache import decode_element, encode_element

__all__ = ["make_saveable_from_iterator", "STATE_COLLECTION"]

STATE_COLLECTION = "tftk_iterator_states"  # (handle key, state Variable) pairs
_MAGIC = b"TFTK-ITERATOR-STATE-1\n"


class IteratorSaveable:
    """What `make_saveable_from_iterator` returns: pass it to `tf.train.Saver(var_list=[...])` or
    add it to `tf.GraphKeys.SAVEABLE_OBJECTS`; the Saver stores the iterator's position with it."""

    def __init__(self, variable: Any, iterator: Any):
        self._variable = variable
        self.iterator = iterator

    name = property(lambda self: self._variable.op.name)
    op = property(lambda self: self._variable.op)

    def _ref(self) -> Tensor:
        return self._variable._ref()


def make_saveable_from_iterator(iterator: Any, external_state_policy: Any = None) -> IteratorSaveable:
    """A SaveableObject for `iterator`'s position (TF 1.12+'s `tf.data.experimental` name).

    Args:
      iterator: from `make_one_shot_iterator`, `make_initializable_iterator` or
        `Iterator.from_structure` (an iterator from `from_string_handle` has no state of its own).
      external_state_policy: accepted for TF compatibility; captured values are saved with the state.
    """
    from tftk.ops.variables import Variable
    handle_op = iterator._handle.op
    if handle_op.type not in ("OneShotIterator", "IteratorV2"):
        raise ValueError("make_saveable_from_iterator() takes an iterator made from a dataset or by "
                         "Iterator.from_structure; one from from_string_handle has no state of its own")
    key = handle_op.get_attr("handle")
    graph = handle_op.graph
    with graph.as_default(), name_scope(None):
        variable = Variable(np.array([b"", b""], dtype=object), trainable=False, dtype=dtypes.string,
                            collections=[GraphKeys.LOCAL_VARIABLES], name=f"{handle_op.name}_state")
    graph.add_to_collection(STATE_COLLECTION, (key, variable))
    return IteratorSaveable(variable, iterator)


def encode_state(state: Any) -> np.ndarray:
    """The [header, position] value of an iterator state (read-only: a restore must replace it)."""
    header = getattr(state, "header", None)
    if header is None:
        inputs = _inputs_of(state.source)
        meta = json.dumps({"source": state.source.name, "entropy": str(state.entropy),
                           "dtypes": [t.dtype.name for t in inputs]}).encode()
        values = [np.asarray(v, dtype=object if t.dtype is dtypes.string else t.dtype.as_numpy_dtype)
                  for v, t in zip(state.values, inputs)]
        header = state.header = _MAGIC + len(meta).to_bytes(4, "little") + meta + encode_element(values)
    value = np.empty(2, dtype=object)
    value[0], value[1] = header, str(state.consumed).encode()
    value.flags.writeable = False
    return value


def _inputs_of(source: Any) -> list[Tensor]:
    from tftk.data.iterator_ops import _dataset_of
    return _dataset_of(source)[1]


def restore_state(saved: np.ndarray, graph: Any, ctx: Any, variable: str) -> Any:
    """The iterator state `saved` describes, replayed to its position."""
    from tftk.data.iterator_ops import _IteratorState
    header, position = (bytes(v) for v in np.ravel(saved))
    try:
        if not header.startswith(_MAGIC):
            raise ValueError("not an iterator state")
        start = len(_MAGIC) + 4
        end = start + int.from_bytes(header[len(_MAGIC):start], "little")
        meta = json.loads(header[start:end])
        source = graph.get_operation_by_name(meta["source"])
        inputs = _inputs_of(source)
        if [t.dtype.name for t in inputs] != meta["dtypes"]:
            raise ValueError(f"its dataset's inputs were {meta['dtypes']}")
        values = decode_element(header[end:], [(t.dtype, None) for t in inputs])
        count = int(position)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise errors.DataLossError(None, None, f"The iterator state restored into {variable} does not describe "
                                   f"an iterator of this graph ({exc}); restore a checkpoint saved from the "
                                   "same input pipeline") from None
    state = _IteratorState(source, values, ctx, int(meta["entropy"]))
    state.skip(count, variable)
    return state
