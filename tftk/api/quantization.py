"""The `tf.quantization` namespace: quantize and dequantize under their TF 1.13+ path."""

from tftk.ops.quantize_ops import dequantize, quantize  # noqa: F401

from tftk.ops.fake_quant_ops import (fake_quant_with_min_max_args, fake_quant_with_min_max_args_gradient,  # noqa: E402
                                     fake_quant_with_min_max_vars, fake_quant_with_min_max_vars_gradient,
                                     fake_quant_with_min_max_vars_per_channel,
                                     fake_quant_with_min_max_vars_per_channel_gradient)
