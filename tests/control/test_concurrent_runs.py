"""Runs of one session from several threads at once, through kernels that hand values to later kernels
of the same run (`tftk.client.run_state`): a While loop's record of its iterations for its gradient,
the stacks and gradient TensorArrays of TF's own v1 gradient loops. Each thread's values must be its own
run's, exactly as the same run alone gives them."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

import tftk as tf

FIXTURES = Path(__file__).parent.parent / "fixtures" / "formats" / "control_flow"
RUNS = 40


def _side_by_side(sess, fetches, feeds: list[dict]) -> tuple[list, list]:
    """Run `fetches` with each feed on a thread of its own, RUNS times each, beside the others: (what
    differed from the feed's run alone, the errors raised)."""
    alone = [sess.run(fetches, feed) for feed in feeds]
    wrong, raised = [], []
    start = threading.Barrier(len(feeds))

    def work(k: int) -> None:
        start.wait()
        for _ in range(RUNS):
            try:
                got = sess.run(fetches, feeds[k])
            except Exception as exc:  # noqa: BLE001 - counted: the test reports them
                raised.append(f"{type(exc).__name__}: {exc}")
                continue
            if not all(np.array_equal(g, a) for g, a in zip(got, alone[k])):
                wrong.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(feeds))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return wrong, raised


def test_dynamic_rnn_gradients_of_two_threads_stay_their_own():
    """5 and 9 steps: a gradient loop reading the other run's iterations fails or mixes them."""
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, None, 3])
        out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(4), x, dtype=tf.float32)
        grads = tf.gradients(tf.reduce_sum(out[:, -1]), tf.trainable_variables())
        sess.run(tf.global_variables_initializer())
        rng = np.random.default_rng(0)
        feeds = [{x: rng.standard_normal((2, steps, 3)).astype(np.float32)} for steps in (5, 9)]
        wrong, raised = _side_by_side(sess, grads, feeds)
    assert raised == [] and wrong == []


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_tensorflows_own_gradient_loops_from_two_threads_stay_their_own(kind):
    """TF's gradient graph in a TF1 .meta: its loops push forward values on stacks that its gradient
    loops pop, and write gradients into TensorArrays, all within one run."""
    values = np.load(FIXTURES / kind / "values.npz")
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        saver = tf.train.import_meta_graph(str(FIXTURES / kind / "model.ckpt-3.meta"))
        saver.restore(sess, str(FIXTURES / kind / "model.ckpt-3"))
        adam = [op for op in graph.get_operations() if op.type == "ApplyAdam"]
        grads = [op.inputs[9] for op in adam]
        x, y = values["x_train"], values["y_train"]
        feeds = [{"x:0": x, "y:0": y}, {"x:0": x[::-1] * 0.5, "y:0": y[::-1]}]
        wrong, raised = _side_by_side(sess, grads, feeds)
    assert raised == [] and wrong == []
