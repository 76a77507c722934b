"""tf.test against real TensorFlow: a TestCase's sessions and assertions (run in a thread of its own,
since a TestCase resets the default graph), compute_gradient(_error), and the small helpers."""

from tests.differential.op_tables import Row, table_tests

RUN_CASE = '''
import threading, unittest
class T(tf.test.TestCase):
    def test_session_and_close(self):
        with self.cached_session() as sess:
            self.assertAllClose(sess.run(tf.constant([1.0, 2.0]) * 2), [2.0, 4.0])
        with self.session() as sess:
            self.assertAllEqual(sess.run(tf.constant([[1, 2]])), [[1, 2]])
        self.assertAllClose(self.evaluate(tf.constant(3.0)), 3.0 + 1e-7)
    def test_all_close_fails(self):
        self.assertAllClose([1.0, 2.0], [1.0, 2.1])
    def test_all_equal_shape(self):
        self.assertAllEqual([1, 2], [[1, 2]])
    def test_near_and_ranges(self):
        self.assertNear(1.0, 1.05, 0.1)
        self.assertArrayNear([1.0, 2.0], [1.01, 1.99], 0.02)
        self.assertAllGreater([2, 3], 1)
        self.assertAllLessEqual(tf.constant([1, 2]), 2)
        self.assertAllInRange([0.0, 1.0], 0.0, 1.0)
        self.assertShapeEqual(np.zeros([2, 3]), tf.zeros([2, 3]))
        self.assertAllCloseAccordingToType(np.float32(1.0), np.float32(1.0000005))
        self.assertAllClose({'a': [1.0], 'b': 2.0}, {'a': [1.0], 'b': 2.0})
    def test_in_range_fails(self):
        self.assertAllInRange([0.0, 1.0], 0.0, 1.0, open_upper_bound=True)
    def test_graph_is_fresh(self):
        self.assertEqual(len(tf.get_default_graph().get_operations()), 0)
    def test_raises_op_error(self):
        with self.assertRaisesOpError('must be'):
            with self.cached_session() as sess:
                sess.run(tf.assert_equal(tf.constant(1), tf.constant(2), message='must be equal'))
    def test_temp_dir(self):
        self.assertTrue(os.path.isdir(self.get_temp_dir()))
import os
result = unittest.TestResult()
suite = unittest.defaultTestLoader.loadTestsFromTestCase(T)
thread = threading.Thread(target=suite.run, args=(result,))
thread.start()
thread.join()
bad = sorted([t.id().split('.')[-1] for t, _ in result.failures] + [t.id().split('.')[-1] + '!' for t, _ in result.errors])
fetch = {'run': tf.constant(result.testsRun), 'bad': tf.constant(bad)}
'''

ROWS = [
    Row("test_case", RUN_CASE),
    Row("compute_gradient", "x = tf.placeholder(tf.float64, [2, 3])\ny = tf.reduce_sum(x * x, 1) * tf.constant([1.0, 2.0], tf.float64)\n"
        "with tf.Session():\n    t, n = tf.test.compute_gradient(x, [2, 3], y, [2], x_init_value=np.arange(6.0).reshape(2, 3))\n"
        "    e = tf.test.compute_gradient_error(x, [2, 3], y, [2], x_init_value=np.arange(6.0).reshape(2, 3))\n"
        "fetch = {'t': tf.constant(t), 'n': tf.constant(n), 'small': tf.constant(e < 1e-6)}\n"),
    Row("compute_gradient_list", "a = tf.placeholder(tf.float64, [2])\nb = tf.placeholder(tf.float64, [2])\ny = a * b\n"
        "with tf.Session():\n    (ta, na), (tb, nb) = tf.test.compute_gradient([a, b], [[2], [2]], y, [2], "
        "x_init_value=[np.array([1.0, 2.0]), np.array([3.0, 4.0])], extra_feed_dict={})\n"
        "fetch = {'ta': tf.constant(ta), 'tb': tf.constant(tb), 'nb': tf.constant(nb)}\n"),
    Row("helpers", "fetch = {'gpu': tf.constant(tf.test.is_gpu_available()), "
        "'tmp': tf.constant(os.path.isdir(tf.test.get_temp_dir())), 'mock': tf.constant(tf.test.mock.MagicMock()(3) is not None), "
        "'cfg': tf.constant(type(tf.test.benchmark_config()).__name__)}\n".replace("fetch", "import os\nfetch", 1)),
    Row("stub_out", "import math\ns = tf.test.StubOutForTesting()\ns.Set(math, 'pi', 3)\nv = math.pi\ns.SmartSet(math, 'e', 2)\n"
        "w = math.e\ns.CleanUp()\nfetch = {'v': tf.constant([v, w, int(math.pi), int(math.e)])}\n"),
    Row("equal_graph_def", "g1, g2 = tf.Graph(), tf.Graph()\nwith g1.as_default():\n    tf.constant(1.0, name='a'); tf.constant(2.0, name='b')\n"
        "with g2.as_default():\n    tf.constant(2.0, name='b'); tf.constant(1.0, name='a')\n"
        "tf.test.assert_equal_graph_def(g1.as_graph_def(), g2.as_graph_def())\nfetch = {'ok': tf.constant(1)}\n"),
    Row("unequal_graph_def", "g1, g2 = tf.Graph(), tf.Graph()\nwith g1.as_default():\n    tf.constant(1.0, name='a')\n"
        "with g2.as_default():\n    tf.constant(3.0, name='a')\n"
        "tf.test.assert_equal_graph_def(g1.as_graph_def(), g2.as_graph_def())\nfetch = {}\n"),
    Row("benchmark", "class B(tf.test.Benchmark):\n    pass\nb = B()\nwith tf.Session() as sess:\n"
        "    r = b.run_op_benchmark(sess, tf.constant(1.0) + 1.0, burn_iters=1, min_iters=3, name='add')\n"
        "fetch = {'keys': tf.constant(sorted(k for k in ('name', 'iters', 'wall_time') if k in r)), "
        "'iters': tf.constant(r['iters']), 'name': tf.constant(r['name'])}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("tf_test", ROWS)
