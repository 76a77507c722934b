"""Run in real TensorFlow: print the names the tutorial programs' objects get (see named_nodes)."""

import json
import sys
from pathlib import Path

import tensorflow.compat.v1 as tf

sys.path.insert(0, str(Path(__file__).resolve().parent))
import named_nodes  # noqa: E402

tf.disable_v2_behavior()
tf.get_logger().setLevel("ERROR")
print(json.dumps({name: named_nodes.record(tf, name) for name in named_nodes.PROGRAMS}))
