"""`tf.compat`: run TF 0.x/1.x programs unchanged.

Holds TF's `tf.compat` names (`as_bytes`, `as_text`, ..., `v1`: tftk itself, so
`tf.compat.v1.placeholder` and `import tensorflow.compat.v1 as tf` work), the legacy spellings
(`legacy`) and the `tensorflow` module mapping (`install_as_tensorflow`, `python -m tftk.compat`).
"""

from tftk.compat.tensorflow_alias import install_as_tensorflow
from tftk.compat.forward_compat import forward_compatible
from tftk.compat.text import (as_bytes, as_str, as_str_any, as_text, bytes_or_text_types,
                              complex_types, integral_types, path_to_str, real_types)
from tftk.framework.tensor_shape import dimension_at_index, dimension_value

__all__ = ["install_as_tensorflow", "v1", "as_bytes", "as_str", "as_str_any", "as_text",
           "bytes_or_text_types", "complex_types", "integral_types", "path_to_str", "real_types",
           "dimension_at_index", "dimension_value", "forward_compatible"]


def __getattr__(name: str):
    """`tf.compat.v1` is the whole TF1 API, i.e. tftk (imported on use: tftk imports this package)."""
    if name == "v1":
        import tftk
        return tftk
    raise AttributeError(f"module 'tftk.compat' has no attribute {name!r}")
