"""`tf.contrib.rnn`: the cells of `tf.nn.rnn_cell`, static/dynamic rnn, and the fused LSTM and GRU block cells."""

from tftk.api.rnn import *  # noqa: F401,F403 - the same cells, as in TF1
from tftk.api.rnn import __all__ as _cells
from tftk.ops.gru_ops import GRUBlockCell, GRUBlockCellV2
from tftk.ops.lstm_ops import LSTMBlockCell, LSTMBlockFusedCell

__all__ = list(_cells) + ["GRUBlockCell", "GRUBlockCellV2", "LSTMBlockCell", "LSTMBlockFusedCell"]
