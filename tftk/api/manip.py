"""The `tf.manip` namespace (TF 1.x's home of roll and friends)."""

from tftk.ops.array_ops import reshape
from tftk.ops.gather_ops import gather_nd
from tftk.ops.scatter_ops import scatter_nd
from tftk.ops.tile_pad_ops import reverse, roll, tile

__all__ = ["gather_nd", "reshape", "reverse", "roll", "scatter_nd", "tile"]

from tftk.ops.space_ops import batch_to_space_nd, space_to_batch_nd  # noqa: E402
