"""`tf.estimator.inputs`: input_fns over in-memory numpy arrays and pandas DataFrames.

TF 1.x feeds these through queues; here a tf.data pipeline gives the same batches — in order
without shuffle, the last batch of the last epoch short — and the input_fn returns
(features, labels) tensors, as TF's does, so it also works when called by hand.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

__all__ = ["numpy_input_fn", "pandas_input_fn"]


def _length(name: str, array: Any) -> int:
    shape = np.shape(array)
    if not shape:
        raise ValueError(f"{name} must have a first (example) dimension, got a scalar")
    return shape[0]


def _input_fn(features: Any, labels: Any, batch_size: int, num_epochs: int | None, shuffle: bool,
              queue_capacity: int) -> Callable[[], Any]:
    def input_fn() -> Any:
        from tftk.data.dataset_ops import Dataset
        from tftk.data.iterator_ops import make_one_shot_iterator
        data = Dataset.from_tensor_slices(features if labels is None else (features, labels))
        data = data.repeat(num_epochs)
        if shuffle:
            data = data.shuffle(queue_capacity)
        return make_one_shot_iterator(data.batch(batch_size)).get_next()
    return input_fn


def _check_common(batch_size: int, num_epochs: int | None, shuffle: Any) -> None:
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided and explicitly set as boolean (True is recommended for "
                         f"training); got {shuffle!r}")
    if not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    if num_epochs is not None and num_epochs <= 0:
        raise ValueError(f"num_epochs must be None (repeat forever) or > 0, got {num_epochs!r}")


def numpy_input_fn(x: Any, y: Any = None, batch_size: int = 128, num_epochs: int | None = 1,
                   shuffle: bool | None = None, queue_capacity: int = 1000, num_threads: int = 1
                   ) -> Callable[[], Any]:
    """An input_fn giving batches of `x` (an array or a dict of arrays) and `y` (array, dict or None).

    Args:
      batch_size: examples per batch; num_epochs: passes over the data (None: forever).
      shuffle: required, True or False. queue_capacity: the shuffle buffer. num_threads: accepted (one
        pipeline here).
    """
    _check_common(batch_size, num_epochs, shuffle)
    features = {key: np.asarray(value) for key, value in x.items()} if isinstance(x, Mapping) else np.asarray(x)
    labels = None if y is None else ({key: np.asarray(v) for key, v in y.items()} if isinstance(y, Mapping)
                                     else np.asarray(y))
    if isinstance(features, dict) and isinstance(labels, dict):
        shared = sorted(set(features) & set(labels))
        if shared:
            raise ValueError(f"{len(shared)} duplicate keys are found in both x and y: {shared}")
    lengths = {f"x[{k!r}]": _length(f"x[{k!r}]", v) for k, v in features.items()} if isinstance(features, dict) \
        else {"x": _length("x", features)}
    if labels is not None:
        lengths.update({f"y[{k!r}]": _length(f"y[{k!r}]", v) for k, v in labels.items()} if isinstance(labels, dict)
                       else {"y": _length("y", labels)})
    if not lengths:
        raise ValueError("x must hold at least one array")
    if len(set(lengths.values())) > 1:
        raise ValueError("Length of tensors in x and y is mismatched: all must have the same number of examples; "
                         + ", ".join(f"{name} has {n}" for name, n in lengths.items()))
    return _input_fn(features, labels, batch_size, num_epochs, shuffle, queue_capacity)


def pandas_input_fn(x: Any, y: Any = None, batch_size: int = 128, num_epochs: int | None = 1,
                    shuffle: bool | None = None, queue_capacity: int = 1000, num_threads: int = 1,
                    target_column: str = "target") -> Callable[[], Any]:
    """An input_fn over a pandas DataFrame `x` (one feature per column) and a Series or DataFrame `y`
    whose index must equal x's. pandas is optional: `pip install pandas`."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("pandas_input_fn needs pandas: pip install pandas") from None
    _check_common(batch_size, num_epochs, shuffle)
    if not isinstance(x, pd.DataFrame):
        raise TypeError(f"pandas_input_fn: x must be a pandas DataFrame, given {type(x).__name__}")
    if y is not None:
        if target_column in x.columns:
            raise ValueError(f"Cannot use name {target_column!r} for target column: DataFrame already has a column "
                             f"with that name: {list(x.columns)}")
        if not np.array_equal(x.index, y.index):
            raise ValueError(f"Index for x and y are mismatched.\nIndex for x: {x.index}\nIndex for y: {y.index}")
    features = {str(column): x[column].to_numpy() for column in x.columns}
    labels = None if y is None else (
        {str(c): y[c].to_numpy() for c in y.columns} if isinstance(y, pd.DataFrame) else y.to_numpy())
    return _input_fn(features, labels, batch_size, num_epochs, shuffle, queue_capacity)
