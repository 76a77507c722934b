"""The `tf.manip` namespace (TF 1.x): tensor manipulation ops under their 1.13 path."""

from tftk.ops.array_ops import reshape  # noqa: F401
from tftk.ops.gather_ops import gather_nd  # noqa: F401
from tftk.ops.scatter_ops import scatter_nd  # noqa: F401
from tftk.ops.tile_pad_ops import reverse, tile  # noqa: F401
