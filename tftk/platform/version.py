"""`tf.version` / `tf.VERSION`: the TF API level tftk implements and how this build was made.

tftk implements TF 1.15's API (which TF 2.x's `tf.compat.v1` mirrors), so `VERSION` is "1.15.0"
for programs that branch on it; `GIT_VERSION` names tftk's own release and `COMPILER_VERSION`
the compiler of the Python running it (tftk has no native build of its own).
"""

from __future__ import annotations

import platform

__all__ = ["VERSION", "GIT_VERSION", "COMPILER_VERSION"]

VERSION = "1.15.0"
GIT_VERSION = "tftk-0.1.0"
COMPILER_VERSION = platform.python_compiler()
