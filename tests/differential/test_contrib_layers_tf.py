"""tf.contrib.layers against TF1's own code, which lives on as the `tf_slim` package (run on TF 2.21's
tf.compat.v1): conv2d, the poolings, batch_norm (2-D and 4-D, update ops or in-place updates, a
placeholder for is_training), layer_norm, the contrib initializers; and the core
tf.layers.batch_normalization they build on. Every variable is set from its
name (so both sides hold the same weights only if the names are contrib's), then the outputs, the
moving statistics after an update and the gradients agree to 1e-5."""

import numpy as np
import pytest

from tests.tf_oracle import assert_close_outputs, both_succeeded, require_tf, run_in_tf

SNIPPET = """
import zlib
x = tf.constant(inputs['{x}'])
training = tf.placeholder_with_default(True, []) if {placeholder} else True
y = {build}
variables = tf.global_variables()
updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
grads = tf.gradients(tf.reduce_sum(y * tf.sin(y)), tf.trainable_variables() + [x])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for v in variables:
        rng = np.random.default_rng(zlib.crc32(v.op.name.encode()))
        v.load(rng.uniform(0.2, 0.9, v.shape.as_list()).astype(np.float32), sess)
    y_v, grads_v, _ = sess.run([y, grads, updates])
    after = sess.run(variables)
outputs = {{'y': y_v, 'names': np.array([v.op.name for v in variables]),
           'model': np.array(sorted(v.op.name for v in tf.model_variables())),
           **{{'grad%d' % k: g for k, g in enumerate(grads_v)}}, **{{'var%d' % k: a for k, a in enumerate(after)}}}}
"""

IMAGE, MATRIX = "image", "matrix"
CASES = {  # name: (input, build, is_training a placeholder)
    "conv2d": (IMAGE, "layers.conv2d(x, 4, 3)", False),
    "conv2d_valid_stride_scope": (IMAGE, "layers.conv2d(layers.conv2d(x, 3, [3, 2], stride=2, padding='VALID', "
                                         "scope='a'), 2, 1, activation_fn=None)", False),
    "conv2d_rate": (IMAGE, "layers.conv2d(x, 2, 3, rate=2, activation_fn=tf.nn.tanh)", False),
    "conv2d_bn": (IMAGE, "layers.conv2d(x, 3, 3, normalizer_fn=layers.batch_norm, "
                         "normalizer_params={'scale': True, 'is_training': training})", False),
    "pools": (IMAGE, "layers.avg_pool2d(layers.max_pool2d(x, 2, padding='SAME'), [2, 1], stride=1)", False),
    "batch_norm_4d": (IMAGE, "layers.batch_norm(x, decay=0.9, scale=True)", False),
    "batch_norm_4d_placeholder": (IMAGE, "layers.batch_norm(x, decay=0.9, is_training=training)", True),
    "batch_norm_4d_in_place": (IMAGE, "layers.batch_norm(x, decay=0.8, updates_collections=None)", False),
    "batch_norm_2d": (MATRIX, "layers.batch_norm(x, decay=0.9, scale=True, activation_fn=tf.nn.relu)", False),
    "batch_norm_2d_in_place": (MATRIX, "layers.batch_norm(x, decay=0.5, updates_collections=None, "
                                       "is_training=training)", True),
    "batch_norm_inference": (IMAGE, "layers.batch_norm(x, is_training=False, center=False)", False),
    "layer_norm": (IMAGE, "layers.layer_norm(x)", False),
    "layer_norm_last_axis": (MATRIX, "layers.layer_norm(x, begin_norm_axis=-1, activation_fn=tf.nn.relu)", False),
    # the core layer contrib builds on: TF's fused kernel (4-D, channels last or first) gives the moving
    # average the unbiased variance, the plain path the biased one
    "core_batch_normalization_4d": (IMAGE, "tf.layers.batch_normalization(x, momentum=0.5, training=True)", False),
    "core_batch_normalization_axis1": (IMAGE, "tf.layers.batch_normalization(x, axis=1, training=training)", True),
    "core_batch_normalization_unfused": (IMAGE, "tf.layers.batch_normalization(x, training=True, fused=False)",
                                         False),
    "core_batch_normalization_2d": (MATRIX, "tf.layers.batch_normalization(x, momentum=0.3, training=True)", False),
}
INITIALIZERS = {
    "xavier_normal": "layers.xavier_initializer(uniform=False, seed=3)",
    "xavier_uniform": "layers.xavier_initializer(seed=3)",
    "variance_scaling": "layers.variance_scaling_initializer(seed=4)",
    "variance_scaling_fan_avg_uniform": "layers.variance_scaling_initializer(1.5, 'FAN_AVG', True, seed=4)",
}
INIT_SNIPPET = """
tf.set_random_seed(7)
w = tf.get_variable('w', [3, 3, 4, 5], initializer={init})
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    outputs = {{'w': sess.run(w)}}
"""

SOURCES = {name: SNIPPET.format(x=x, build=build, placeholder=placeholder)
           for name, (x, build, placeholder) in CASES.items()}
SOURCES.update({f"init_{name}": INIT_SNIPPET.format(init=init) for name, init in INITIALIZERS.items()})
TF_LAYERS = """
import importlib, sys, types
import tf_keras.src.legacy_tf_layers as _legacy  # TF 2.21 looks for it as tf_keras.legacy_tf_layers
sys.modules.setdefault('tf_keras.legacy_tf_layers', _legacy)
from tensorflow.python.framework import ops as _ops
from tensorflow.python.ops import control_flow_ops as _control_flow
if not hasattr(_ops, 'Tensor'):  # tf_slim's fused batch_norm checks isinstance(x, ops.Tensor), gone in TF 2.21
    _ops.Tensor = tf.Tensor
if not hasattr(_control_flow, 'cond'):  # and its smart_cond calls control_flow_ops.cond, moved in TF 2.21
    _control_flow.cond = tf.cond
_initializers = importlib.import_module('tf_slim.layers.initializers')
_layers = importlib.import_module('tf_slim.layers.layers')
layers = types.SimpleNamespace(**vars(_layers), xavier_initializer=_initializers.xavier_initializer,
                               variance_scaling_initializer=_initializers.variance_scaling_initializer)
"""
TFTK_LAYERS = "layers = tf.contrib.layers\n"


def _inputs():
    rng = np.random.default_rng(11)
    return {"image": rng.uniform(-1, 1, (3, 6, 5, 2)).astype(np.float32),
            "matrix": rng.uniform(-1, 1, (5, 4)).astype(np.float32)}


@pytest.fixture(scope="module")
def tf_results():
    require_tf()
    results = run_in_tf({name: (TF_LAYERS + source, _inputs()) for name, source in SOURCES.items()})
    if all(r.error == "ModuleNotFoundError" for r in results.values()):
        pytest.skip("tf_slim (TF1's contrib.layers) is not installed beside TensorFlow: pip install tf-slim")
    return results


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_contrib_layer_equals_tensorflow(tf_results, name):
    expected, got = both_succeeded(tf_results, {name: (TFTK_LAYERS + SOURCES[name], _inputs())}, name)
    assert_close_outputs(expected, got, context=name)
