"""The `tf.contrib` namespace: `tf.contrib.layers`, `rnn`, `legacy_seq2seq`, `data`, `tensorboard`."""

from types import SimpleNamespace

from tftk.ops import contrib_layers, init_ops
from tftk.ops import layers as _layers
from tftk.ops import nn_loss_ops

from tftk.api import contrib_rnn as rnn

__all__ = ["data", "layers", "legacy_seq2seq", "rnn", "tensorboard"]

layers = SimpleNamespace(
    flatten=_layers.contrib_flatten,
    fully_connected=_layers.fully_connected,
    conv2d=contrib_layers.conv2d,
    convolution2d=contrib_layers.conv2d,
    max_pool2d=contrib_layers.max_pool2d,
    avg_pool2d=contrib_layers.avg_pool2d,
    batch_norm=contrib_layers.batch_norm,
    layer_norm=contrib_layers.layer_norm,
    dropout=contrib_layers.dropout,
    xavier_initializer=init_ops.xavier_initializer,
    xavier_initializer_conv2d=init_ops.xavier_initializer,
    variance_scaling_initializer=init_ops.contrib_variance_scaling_initializer,
    l1_regularizer=_layers.l1_regularizer,
    l2_regularizer=_layers.l2_regularizer,
    sum_regularizer=_layers.sum_regularizer,
)

legacy_seq2seq = SimpleNamespace(
    sequence_loss_by_example=nn_loss_ops.sequence_loss_by_example,
    sequence_loss=nn_loss_ops.sequence_loss,
)


def __getattr__(name: str):
    """`tf.contrib.tensorboard.plugins.projector` loads protobuf, so it is built on first use."""
    if name == "tensorboard":
        from tftk.compat import projector
        value = SimpleNamespace(plugins=SimpleNamespace(projector=projector))
        globals()[name] = value
        return value
    if name == "data":  # TF 1.x's tf.contrib.data: what later moved to tf.data.experimental
        from tftk.data import experimental
        value = SimpleNamespace(AUTOTUNE=experimental.AUTOTUNE, map_and_batch=experimental.map_and_batch,
                                parallel_interleave=experimental.parallel_interleave,
                                make_saveable_from_iterator=experimental.make_saveable_from_iterator)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tftk.api.contrib' has no attribute {name!r}")
