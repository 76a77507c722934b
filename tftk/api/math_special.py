"""The `tf.math.special` namespace: the special functions tftk implements under their TF 2 path."""

from tftk.ops.bessel_erfinv_ops import bessel_i0, bessel_i0e, bessel_i1, bessel_i1e

__all__ = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e"]
