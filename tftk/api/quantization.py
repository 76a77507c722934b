"""The `tf.quantization` namespace: quantize and dequantize under their TF 1.13+ path."""

from tftk.ops.quantize_ops import dequantize, quantize  # noqa: F401
