"""Dump the public names of TensorFlow's ``tf.compat.v1``, two levels deep, with their scope.

Run with the TensorFlow venv's interpreter (TensorFlow needs its own numpy)::

    /work/tfvenv/bin/python tools/api_names_tf.py > tests/differential/tf_compat_v1_names.txt

Each line is ``<name> <scope>``: ``in`` for a name a graph-mode CPU TF1 program can use (tftk's
target), otherwise the reason it is left out: keras, lite, tpu, distribute, eager-only, TF2-only,
later (estimator / feature_column: a later issue), raw-ops, native-build, gpu-only.
Two levels deep means ``tf.X`` and, where ``tf.X`` is a module, ``tf.X.Y``.
"""

from __future__ import annotations

import re
import sys
import types

# Whole modules left out, with the reason (their names are listed, each with that reason).
EXCLUDED_MODULES = {
    "keras": "keras", "lite": "lite", "tpu": "tpu", "distribute": "distribute",
    "feature_column": "later", "estimator": "later",
    "raw_ops": "raw-ops",  # 1,462 generated low-level wrappers, not the API TF1 programs call
    "experimental": "TF2-only", "mixed_precision": "TF2-only", "mlir": "TF2-only",
    "types": "TF2-only", "autograph": "TF2-only", "xla": "TF2-only",
    "config": "eager-only",  # TF2's runtime context: physical/logical devices, eager switches
    "sysconfig": "native-build", "user_ops": "native-build",
}

# Single names left out (tf.X or tf.X.Y), with the reason.
EXCLUDED_NAMES = {
    "GradientTape": "eager-only", "enable_eager_execution": "eager-only",
    "executing_eagerly": "eager-only", "executing_eagerly_outside_functions": "eager-only",
    "wrap_function": "eager-only", "function": "TF2-only", "Module": "TF2-only",
    "enable_v2_behavior": "TF2-only", "enable_v2_tensorshape": "TF2-only",
    "enable_control_flow_v2": "TF2-only", "enable_tensor_equality": "TF2-only",
    "is_symbolic_tensor": "TF2-only", "type_spec_from_value": "TF2-only",
    "approx_top_k": "TF2-only", "random_index_shuffle": "TF2-only",
    "fftnd": "TF2-only", "ifftnd": "TF2-only", "rfftnd": "TF2-only", "irfftnd": "TF2-only",
    "ragged_fill_empty_rows": "TF2-only", "ragged_fill_empty_rows_grad": "TF2-only",
    "conv2d_backprop_filter_v2": "TF2-only", "conv2d_backprop_input_v2": "TF2-only",
    "check_pinned": "TF2-only",
    "load_library": "native-build", "load_op_library": "native-build",
    "load_file_system_library": "native-build", "CXX11_ABI_FLAG": "native-build",
    "CXX_VERSION": "native-build", "MONOLITHIC_BUILD": "native-build",
    "train.Checkpoint": "TF2-only", "train.CheckpointManager": "TF2-only",
    "train.CheckpointOptions": "TF2-only",
    "saved_model.load_v2": "TF2-only", "saved_model.save": "TF2-only",
    "saved_model.Asset": "TF2-only", "saved_model.SaveOptions": "TF2-only",
    "summary.all_v2_summary_ops": "TF2-only", "summary.initialize": "TF2-only",
    "compat.v2": "TF2-only", "compat.forward_compatibility_horizon": "TF2-only",
    "io.decode_jxl": "TF2-only", "io.decode_webp": "TF2-only", "io.RaggedFeature": "TF2-only",
    "image.decode_webp": "TF2-only",
    "test.with_eager_op_as_function": "TF2-only", "test.disable_with_predicate": "TF2-only",
    "test.is_built_with_cuda": "gpu-only", "test.is_built_with_rocm": "gpu-only",
    "test.is_built_with_gpu_support": "gpu-only", "test.gpu_device_name": "gpu-only",
    "test.is_built_with_xla": "TF2-only",
}

# Patterns on the last name component, applied after the tables above.
EXCLUDED_PATTERNS = [
    (re.compile(r"Spec$"), "TF2-only"),  # TensorSpec, TypeSpec, ...: TF2's type specs
    (re.compile(r"^experimental"), "TF2-only"),
    (re.compile(r"tpu", re.I), "tpu"),
    (re.compile(r"^float8_|^int4$|^uint4$|^int2$|^uint2$|^float4_"), "TF2-only"),
]


def scope_of(path: str) -> str:
    """``in`` or the reason a dotted name (without ``tf.``) is left out."""
    parts = path.split(".")
    if parts[0] in EXCLUDED_MODULES:
        return EXCLUDED_MODULES[parts[0]]
    if path in EXCLUDED_NAMES:
        return EXCLUDED_NAMES[path]
    if len(parts) == 1 and parts[0] in EXCLUDED_NAMES:
        return EXCLUDED_NAMES[parts[0]]
    for pattern, reason in EXCLUDED_PATTERNS:
        if pattern.search(parts[-1]):
            return reason
    return "in"


# tf.compat.v1.layers lists itself only when Keras 2 (tf_keras) is installed; these are its
# names as TensorFlow 1.15 (whose API tf.compat.v1 mirrors) defines them.
TF1_LAYERS = """AveragePooling1D AveragePooling2D AveragePooling3D BatchNormalization Conv1D Conv2D
Conv2DTranspose Conv3D Conv3DTranspose Dense Dropout Flatten InputSpec Layer MaxPooling1D
MaxPooling2D MaxPooling3D SeparableConv1D SeparableConv2D average_pooling1d average_pooling2d
average_pooling3d batch_normalization conv1d conv2d conv2d_transpose conv3d conv3d_transpose dense
dropout experimental flatten max_pooling1d max_pooling2d max_pooling3d separable_conv1d
separable_conv2d""".split()


def public_names(module: types.ModuleType, name: str = "") -> list[str]:
    """A module's public names (tf.layers from TF 1.15's list when this TensorFlow cannot list it)."""
    try:
        return sorted(n for n in dir(module) if not n.startswith("_"))
    except Exception:
        if name == "layers":
            return TF1_LAYERS
        raise


def main() -> int:
    import tensorflow.compat.v1 as tf

    print(f"# tf.compat.v1 public names, two levels deep, from TensorFlow {tf.VERSION}.")
    print("# Made by tools/api_names_tf.py; columns: name, scope (in, or why it is left out).")
    for name in public_names(tf):
        print(f"tf.{name} {scope_of(name)}")
        value = getattr(tf, name)
        if isinstance(value, types.ModuleType):
            for child in public_names(value, name):
                print(f"tf.{name}.{child} {scope_of(name + '.' + child)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
