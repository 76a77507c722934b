"""The `tf.dtypes` namespace: the DTypes and `as_dtype`, plus the casts TF lists there."""

from tftk.framework.dtypes import *  # noqa: F401,F403
from tftk.framework.dtypes import (DType, as_dtype, qint8, qint16, qint32, quint8,  # noqa: F401
                                   quint16)
from tftk.ops.math_ops import cast, saturate_cast  # noqa: F401
from tftk.ops.spectral_ops import complex  # noqa: F401,A004
from tftk.ops.string_ops import as_string  # noqa: F401

QUANTIZED_DTYPES = frozenset({qint8, quint8, qint16, quint16, qint32})
