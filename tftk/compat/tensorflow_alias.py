"""`install_as_tensorflow()`: make `import tensorflow` (and its usual submodules) give tftk.

After it, an unmodified TF1 program's imports resolve to tftk:
  import tensorflow as tf                                         -> tftk
  import tensorflow.compat.v1 as tf                               -> tftk
  from tensorflow.examples.tutorials.mnist import input_data      -> tftk.examples.tutorials.mnist.input_data
  from tensorflow.python import debug as tf_debug                 -> tftk.debug_cli (tfdbg wrapper)
  from tensorflow.contrib.tensorboard.plugins import projector     -> tftk.compat.projector
  import tensorflow.contrib.rnn, tensorflow.python.platform.gfile, ... (see _MODULES)
Run a program that way with `python -m tftk.compat program.py [args]`.
"""

from __future__ import annotations

import importlib
import sys
import types

__all__ = ["install_as_tensorflow", "TENSORFLOW_MODULES"]

# tensorflow module name -> tftk module providing it (None: a package holding only submodules).
TENSORFLOW_MODULES: dict[str, str | None] = {
    "tensorflow": "tftk",
    "tensorflow.compat": "tftk.compat",
    "tensorflow.compat.v1": "tftk",
    "tensorflow.examples": "tftk.examples",
    "tensorflow.examples.tutorials": "tftk.examples.tutorials",
    "tensorflow.examples.tutorials.mnist": "tftk.examples.tutorials.mnist",
    "tensorflow.examples.tutorials.mnist.input_data": "tftk.examples.tutorials.mnist.input_data",
    "tensorflow.examples.tutorials.mnist.mnist": "tftk.examples.tutorials.mnist.mnist",
    "tensorflow.python": None,
    "tensorflow.python.debug": "tftk.debug_cli",
    "tensorflow.python.platform": "tftk.platform",
    "tensorflow.python.platform.flags": "tftk.platform.flags",
    "tensorflow.python.platform.gfile": "tftk.platform.gfile",
    "tensorflow.python.platform.tf_logging": "tftk.platform.tf_logging",
    "tensorflow.python.platform.app": "tftk.platform.app",
    "tensorflow.python.ops": None,
    "tensorflow.python.ops.variable_scope": "tftk.ops.variable_scope",
    "tensorflow.python.tools": None,
    "tensorflow.python.tools.inspect_checkpoint": "tftk.train.checkpoint_io",
    "tensorflow.contrib": "tftk.api.contrib",
    "tensorflow.contrib.rnn": "tftk.api.rnn",
    "tensorflow.contrib.tensorboard": None,
    "tensorflow.contrib.tensorboard.plugins": None,
    "tensorflow.contrib.tensorboard.plugins.projector": "tftk.compat.projector",
}


def install_as_tensorflow() -> types.ModuleType:
    """Register tftk as `tensorflow` (and the submodules above) in sys.modules; return it.

    The target modules are imported here (numpy and protobuf, no numba), so attribute paths such
    as `tf.examples.tutorials.mnist.input_data` exist as well as the import names.
    """
    for name, target in TENSORFLOW_MODULES.items():
        if name not in sys.modules:
            sys.modules[name] = types.ModuleType(name) if target is None else importlib.import_module(target)
    for name in list(TENSORFLOW_MODULES)[1:]:  # attribute paths too (`import a.b.c as x` walks them)
        *parents, child = name.split(".")[1:]
        owner = sys.modules["tensorflow"]
        for part in parents:
            owner = getattr(owner, part)
        if not hasattr(owner, child):
            setattr(owner, child, sys.modules[name])
    return sys.modules["tensorflow"]
