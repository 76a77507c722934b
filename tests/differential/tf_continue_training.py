"""Run in real TensorFlow: import a tftk-written `.meta`, restore its checkpoint, keep training.

    python tf_continue_training.py DIR [DIR ...]

Each DIR holds `spec.json` ({"prefix", "train_op", "loss", "feeds": [tensor names], "steps"}) and
`feeds.npz` (key `s{step}_{i}` is the value fed to feeds[i] at that step). Prints one JSON object:
DIR -> {"losses": [loss after each step]} or {"error": "<class>: <message>"}. The test comparing
these with tftk's own losses is tests/differential/test_training_meta_tf.py.
"""

import json
import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
tf.get_logger().setLevel("ERROR")


def continue_training(directory: str) -> dict:
    with open(os.path.join(directory, "spec.json")) as handle:
        spec = json.load(handle)
    feeds = np.load(os.path.join(directory, "feeds.npz"))
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        saver = tf.train.import_meta_graph(spec["prefix"] + ".meta")
        saver.restore(sess, spec["prefix"])
        train_op = graph.get_operation_by_name(spec["train_op"])
        loss = graph.get_tensor_by_name(spec["loss"])
        names = [graph.get_tensor_by_name(n) for n in spec["feeds"]]
        losses = []
        for step in range(spec["steps"]):
            feed = {t: feeds[f"s{step}_{i}"] for i, t in enumerate(names)}
            sess.run(train_op, feed)
            losses.append(float(sess.run(loss, feed)))
    return {"losses": losses}


results = {}
for directory in sys.argv[1:]:
    try:
        results[directory] = continue_training(directory)
    except Exception as exc:  # each model's failure is its own result
        results[directory] = {"error": f"{type(exc).__name__}: {str(exc)[:1500]}"}
print(json.dumps(results))
