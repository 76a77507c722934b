"""Seed 000 ("TensorFlow—相关"): every TF snippet, run as printed with `import tftk as tf`.

Only the import line changes, plus Python 3 (print(), range). Fragments are completed with the
smallest plausible definitions, each marked "fragment:"; the seed's own typos (which TF1 rejects
too) are fixed and marked "seed typo:". Snippets tested in depth elsewhere are kept short here.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tftk as tf
from tests.distributed.conftest import free_port
from tests.seeds.printed import assert_printed
from tftk.ops import variable_scope  # the seed's `variable_scope.variable_scope(...)` (TF's python.ops module)
from tftk.train.checkpoint_io import print_tensors_in_checkpoint_file  # tensorflow.python.tools.inspect_checkpoint


def test_placeholder_with_any_batch_size():
    x = tf.placeholder(tf.float32, [None, 784])
    assert x.get_shape().as_list() == [None, 784]
    with tf.Session() as sess:
        assert sess.run(tf.shape(x), {x: np.zeros((3, 784))}).tolist() == [3, 784]


def test_config_proto_options(capsys):
    with tf.device('/cpu:0'):
        c = tf.constant(2.0) * 3
    sess = tf.Session(config=tf.ConfigProto(log_device_placement=True))
    assert sess.run(c) == 6.0
    assert "/device:CPU:0" in capsys.readouterr().err  # "prints which device each op runs on" (stderr, as TF)
    sess.close()
    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True
    gpu_options = tf.GPUOptions(per_process_gpu_memory_fraction=0.7)
    config = tf.ConfigProto(gpu_options=gpu_options)
    assert config.gpu_options.per_process_gpu_memory_fraction == 0.7
    config = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1,
                            log_device_placement=False, allow_soft_placement=True)
    with tf.Session(config=config) as session:
        assert session.run(c) == 6.0


def test_random_uniform_initializer_min_max_seed_dtype():
    v = tf.get_variable("v", [100], initializer=tf.random_uniform_initializer(-2.0, 3.0, 7, tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run(v)
    assert values.min() >= -2.0 and values.max() < 3.0 and values.dtype == np.float32


def test_reshape_minus_one_is_inferred():
    t = tf.constant([[[1, 1, 1], [2, 2, 2]], [[3, 3, 3], [4, 4, 4]], [[5, 5, 5], [6, 6, 6]]])
    with tf.Session() as sess:
        assert sess.run(tf.reshape(t, [-1, 9])).tolist() == [[1, 1, 1, 2, 2, 2, 3, 3, 3],
                                                             [4, 4, 4, 5, 5, 5, 6, 6, 6]]


def test_restore_trained_rnn_then_eval_prediction_with_feed(tmp_path):
    # fragment: self.graph / ckpt_file / sample_output, w, b: a one-layer graph saved beforehand.
    graph = tf.Graph()
    with graph.as_default():
        sample_input = tf.placeholder(tf.float32, [None, 2])
        keep_prob = tf.placeholder(tf.float32)
        w = tf.Variable([[1.0, 0.0], [0.0, 1.0]])
        b = tf.Variable([0.0, 0.0])
        sample_output = tf.nn.dropout(sample_input, keep_prob)
        sample_prediction = tf.nn.softmax(tf.nn.xw_plus_b(sample_output, w, b))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ckpt_file = tf.train.Saver().save(sess, str(tmp_path / "rnn.ckpt"))
    with tf.Session(graph=graph) as session:
        saver = tf.train.Saver()
        saver.restore(session, ckpt_file)
        prediction = sample_prediction.eval({sample_input: [[0.0, np.log(3.0)]], keep_prob: 1.0})
    np.testing.assert_allclose(prediction, [[0.25, 0.75]], rtol=1e-6)


def test_flags_program_parses_the_command_line(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""\
        import tftk as tf
        flags = tf.flags
        flags.DEFINE_string("para_name_1", "default_val", "description")
        flags.DEFINE_bool("para_name_2", "default_val", "description")
        FLAGS = flags.FLAGS

        def main(_):
            print(FLAGS.para_name_1, FLAGS.para_name_2)

        if __name__ == "__main__":
            tf.app.run()
        """))
    # seed typo: `if __name__ = "__main__":` (one '='). "default_val" is the seed's placeholder: as
    # printed, a bool flag with that default is refused at definition (as absl-based TF1 does).
    done = subprocess.run([sys.executable, str(script), "--para_name_1=name", "--para_name_2=name2"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "flag --para_name_2: default 'default_val': 'default_val' is not a boolean" in done.stderr
    script.write_text(script.read_text().replace('"para_name_2","default_val"', '"para_name_2", False')
                      .replace('"para_name_2", "default_val"', '"para_name_2", False'))
    done = subprocess.run([sys.executable, str(script), "--para_name_1=name", "--para_name_2"],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "name True\n")


def test_legacy_concat_squeeze_split_expand_dims():
    t1 = [[1, 2, 3], [4, 5, 6]]
    t2 = [[7, 8, 9], [10, 11, 12]]
    t = tf.zeros([1, 2, 1, 3, 1, 1])
    value = tf.zeros([5, 30])
    split0, split1, split2 = tf.split(1, 3, value)
    t_2, t2_ = tf.zeros([2]), tf.zeros([2, 3, 5])
    with tf.Session() as sess:
        assert sess.run(tf.concat(0, [t1, t2])).tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]
        assert sess.run(tf.concat(1, [t1, t2])).tolist() == [[1, 2, 3, 7, 8, 9], [4, 5, 6, 10, 11, 12]]
        assert sess.run(tf.shape(tf.squeeze(t))).tolist() == [2, 3]
        assert sess.run(tf.shape(tf.squeeze(t, [2, 4]))).tolist() == [1, 2, 3, 1]
        assert sess.run(tf.shape(split0)).tolist() == [5, 10]
        shapes = [sess.run(tf.shape(tf.expand_dims(t_2, d))).tolist() for d in (0, 1, -1)]
        assert shapes == [[1, 2], [2, 1], [2, 1]]
        shapes = [sess.run(tf.shape(tf.expand_dims(t2_, d))).tolist() for d in (0, 2, 3)]
        assert shapes == [[1, 2, 3, 5], [2, 3, 1, 5], [2, 3, 5, 1]]


def test_embedding_lookup_eval_prints_the_seed_array():
    sess = tf.InteractiveSession()  # fragment: `res.eval()` needs a default session
    mat = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9]).reshape((3, -1))
    ids = [[1, 2], [0, 1]]
    res = tf.nn.embedding_lookup(mat, ids)
    assert_printed(repr(res.eval()), """array([[[4, 5, 6],
        [7, 8, 9]],


       [[1, 2, 3],
        [4, 5, 6]]])""")
    sess.close()


def test_slice_stack_gather_results():
    x = [[1, 2, 3], [4, 5, 6]]
    y = np.arange(24).reshape([2, 3, 4])
    a = np.array([[1, 2, 3, 4, 5], [4, 5, 6, 7, 8], [9, 10, 11, 12, 13]])
    temp = tf.range(0, 10) * 10 + tf.constant(1, shape=[10])
    temp2 = tf.gather(temp, [1, 5, 9])
    with tf.Session() as sess:
        assert str(sess.run(tf.slice(x, [1, 0], [1, 2]))) == "[[4 5]]"
        assert_printed(str(sess.run(tf.slice(y, [1, 0, 0], [1, 2, 3]))), "[[[12 13 14] [16 17 18]]]")
        assert repr(tf.slice(a, [1, 2], [-1, 2]).eval()) == "array([[ 6,  7],\n       [11, 12]])"
        xs, ys, zs = [1, 4], [2, 5], [3, 6]
        assert sess.run(tf.stack([xs, ys, zs])).tolist() == [[1, 4], [2, 5], [3, 6]]
        assert sess.run(tf.stack([xs, ys, zs], axis=1)).tolist() == [[1, 2, 3], [4, 5, 6]]
        assert str(sess.run(temp)) == "[ 1 11 21 31 41 51 61 71 81 91]"
        assert str(sess.run(temp2)) == "[11 51 91]"


def test_softmax_cross_entropy_example_prints_the_seed_output(capsys, numpy_1_13_print):
    logits = tf.constant([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    y = tf.nn.softmax(logits)
    y_ = tf.constant([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    cross_entropy = -tf.reduce_sum(y_ * tf.log(y))
    cross_entropy2 = tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits(logits, y_))
    with tf.Session() as sess:
        softmax = sess.run(y)
        c_e = sess.run(cross_entropy)
        c_e2 = sess.run(cross_entropy2)
        print("step1:softmax result=")
        print(softmax)
        print("step2:cross_entropy result=")
        print(c_e)
        print("Function(softmax_cross_entropy_with_logits) result=")
        print(c_e2)
    printed = capsys.readouterr().out.split()
    # The seed's last value, 1.2228, is TF's fused kernel rounding 3*log(1+e^-1+e^-2) = 1.2228179 to
    # 1.2227999 in float32; both are 1.2228 to the 5 digits shown, and c_e prints 1.22282 exactly.
    assert float(printed.pop()) == pytest.approx(1.2228, abs=5e-5)
    assert_printed(" ".join(printed), """step1:softmax result=
        [[ 0.09003057  0.24472848  0.66524094]
         [ 0.09003057  0.24472848  0.66524094]
         [ 0.09003057  0.24472848  0.66524094]]
        step2:cross_entropy result=  1.22282
        Function(softmax_cross_entropy_with_logits) result=""")


def test_activation_functions_keep_the_input_shape():
    x = tf.constant([[-2.0, 0.5], [1.0, 7.0]])
    weights, biases = tf.constant([[1.0], [1.0]]), tf.constant([-1.0])
    ops = [tf.nn.relu(x), tf.nn.sigmoid(x), tf.nn.tanh(x), tf.nn.elu(x), tf.nn.bias_add(x, [1.0, 2.0]),
           tf.nn.relu6(x), tf.nn.softplus(x), tf.nn.softsign(x), tf.nn.dropout(x, 1.0)]
    with tf.Session() as sess:
        values = sess.run(ops)
        assert all(v.shape == (2, 2) for v in values)
        assert sess.run(tf.nn.crelu(x)).shape == (2, 4)  # crelu concatenates relu(x), relu(-x)
        np.testing.assert_array_equal(values[5], [[0.0, 0.5], [1.0, 6.0]])
        assert sess.run(tf.nn.relu_layer(x, weights, biases, name=None)).tolist() == [[0.0], [7.0]]


def test_nce_loss_and_sequence_loss_by_example_signatures():
    # fragment: a 6-word vocabulary, 3-d embeddings, 2 examples, 2 sampled classes.
    vocabulary_size, num_sampled = 6, 2
    nce_weights = tf.Variable(tf.truncated_normal([vocabulary_size, 3], stddev=0.1))
    nce_biases = tf.Variable(tf.zeros([vocabulary_size]))
    embed = tf.constant([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]])
    train_labels = tf.constant([[1], [4]], dtype=tf.int64)
    loss = tf.nn.nce_loss(nce_weights, nce_biases, train_labels, embed, num_sampled, vocabulary_size)
    logits = [tf.constant([[2.0, 0.0], [0.0, 2.0]])]
    targets = [tf.constant([0, 0])]
    weights = [tf.constant([1.0, 1.0])]
    seq_loss = tf.contrib.legacy_seq2seq.sequence_loss_by_example(logits, targets, weights,
                                                                  average_across_timesteps=True,
                                                                  softmax_loss_function=None, name=None)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(loss).shape == (2,)
        np.testing.assert_allclose(sess.run(seq_loss), [np.log1p(np.exp(-2.0)), np.log1p(np.exp(2.0))],
                                   rtol=1e-6)


def test_saver_save_then_restore_a_subset_and_initialise_the_rest():
    sub_set = tf.Variable(5.0, name="sub_set")
    other = tf.Variable(1.0, name="other")
    init_op = tf.global_variables_initializer()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(init_op)
        sess.run([sub_set.assign(7.0), other.assign(9.0)])  # 训练模型。。。
        saver.save(sess, "save_path/file_name.ckpt")
    restor_from_checkpoint = True
    saver = tf.train.Saver([sub_set])
    init = tf.initialize_all_variables()
    with tf.Session() as sess:
        sess.run(init)
        if restor_from_checkpoint:
            saver.restore(sess, "save_path/file_name.ckpt")
        assert sess.run([sub_set, other]) == [7.0, 1.0]
        saver.save(sess, "file.ckpt")


def test_dropout_and_dropout_wrapper_signatures():
    x = tf.ones([4, 6])
    dropped = tf.nn.dropout(x, 0.5, noise_shape=None, seed=1, name=None)
    rnn_cell = tf.nn.rnn_cell.BasicLSTMCell(3)
    cell = tf.nn.rnn_cell.DropoutWrapper(rnn_cell, input_keep_prob=1.0, output_keep_prob=1.0)
    outputs, _ = tf.nn.dynamic_rnn(cell, tf.ones([2, 4, 5]), dtype=tf.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run(dropped)
        assert set(np.unique(values)) <= {0.0, 2.0}
        assert sess.run(outputs).shape == (2, 4, 3)


def test_dynamic_shape_versus_get_shape():
    shape = tf.placeholder(tf.float32, shape=[None, 227, 227, 3])
    with tf.Session() as sess:
        assert sess.run(tf.shape(shape)[0], {shape: np.zeros((2, 227, 227, 3), np.float32)}) == 2
    assert tuple(shape.get_shape().as_list()) == (None, 227, 227, 3)


def test_local_response_and_batch_normalization():
    inp = tf.constant(np.arange(1.0, 7.0, dtype=np.float32).reshape(1, 1, 1, 6))
    lrn = tf.nn.local_response_normalization(inp, depth_radius=2, bias=2.0, alpha=1e-4, beta=0.75, name=None)
    x = tf.constant([[1.0, 2.0], [3.0, 6.0]])
    mean, variance = tf.nn.moments(x, [0])
    bn = tf.nn.batch_normalization(x, mean, variance, offset=tf.zeros([2]), scale=tf.ones([2]),
                                   variance_epsilon=0.0, name=None)
    a = np.arange(1.0, 7.0)
    expected = [a[c] / (2.0 + 1e-4 * np.sum(a[max(0, c - 2):c + 3] ** 2)) ** 0.75 for c in range(6)]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(lrn).ravel(), expected, rtol=1e-6)
        np.testing.assert_allclose(sess.run(bn), [[-1.0, -1.0], [1.0, 1.0]], rtol=1e-6)


def test_gradient_clipping_framework_and_example():
    w = tf.Variable([3.0, 4.0])
    loss = tf.reduce_sum(tf.square(w)) / 2  # fragment: gradient = w
    train_op = tf.train.GradientDescentOptimizer(learning_rate=0.1).minimize(loss)
    opt = tf.train.GradientDescentOptimizer(learning_rate=0.1)
    grads_and_vars = opt.compute_gradients(loss, [w])
    capped_grads_and_vars = [(tf.clip_by_norm(gv[0], 1.0), gv[1]) for gv in grads_and_vars]  # MyCapper
    capped_op = opt.apply_gradients(capped_grads_and_vars)
    params = tf.trainable_variables()
    gradients = tf.gradients(loss, params)
    clipped_gradients, norm = tf.clip_by_global_norm(gradients, 2.5)  # max_gradient_norm
    clipped_op = opt.apply_gradients(zip(clipped_gradients, params))
    with tf.Session() as sess:
        for op, expected in [(train_op, [2.7, 3.6]), (capped_op, [2.94, 3.92]), (clipped_op, [2.85, 3.8])]:
            sess.run(tf.global_variables_initializer())
            sess.run(op)
            np.testing.assert_allclose(sess.run(w), expected, rtol=1e-6)
        sess.run(tf.global_variables_initializer())
        assert sess.run(norm) == pytest.approx(5.0)


def test_variable_scope_prefixes_get_variable(capsys):
    with variable_scope.variable_scope("tet1"):
        var3 = tf.get_variable("var3", shape=[2], dtype=tf.float32)
        print(var3.name)
        with variable_scope.variable_scope("tet2"):
            var4 = tf.get_variable("var4", shape=[2], dtype=tf.float32)
            print(var4.name)
    assert_printed(capsys.readouterr().out, "tet1/var3:0 tet1/tet2/var4:0")


def test_scope_is_where_the_function_is_called(capsys):
    def te2():
        with variable_scope.variable_scope("te2"):
            var2 = tf.get_variable("var2", shape=[2], dtype=tf.float32)
            print(var2.name)

            def te1():
                with variable_scope.variable_scope("te1"):
                    var1 = tf.get_variable("var1", shape=[2], dtype=tf.float32)
                return var1
            return te1()  # 在scope te2 内调用的
    res = te2()
    print(res.name)
    assert_printed(capsys.readouterr().out, "te2/var2:0 te2/te1/var1:0")

    with tf.Graph().as_default():
        def te2():
            with variable_scope.variable_scope("te2"):
                var2 = tf.get_variable("var2", shape=[2], dtype=tf.float32)
                print(var2.name)

                def te1():
                    with variable_scope.variable_scope("te1"):
                        var1 = tf.get_variable("var1", shape=[2], dtype=tf.float32)
                    return var1
            return te1()  # 在scope te2外面调用的
        res = te2()
        print(res.name)
    assert_printed(capsys.readouterr().out, "te2/var2:0 te1/var1:0")


def test_scope_by_name_nests_but_scope_object_reenters():
    with tf.variable_scope("scope"):
        tf.get_variable("w", shape=[1])  # 这个变量的name是 scope/w
        with tf.variable_scope("scope"):
            tf.get_variable("w", shape=[1])  # 这个变量的name是 scope/scope/w
    assert [v.name for v in tf.global_variables()] == ["scope/w:0", "scope/scope/w:0"]
    with pytest.raises(ValueError, match="Variable yin/w already exists, disallowed"):  # 会报错
        with tf.variable_scope("yin"):
            tf.get_variable("w", shape=[1])
            scope = tf.get_variable_scope()
            with tf.variable_scope(scope):
                tf.get_variable("w", shape=[1])


def test_sharing_my_image_filter_variables():
    def my_image_filter(input_images):
        conv1_weights = tf.get_variable("conv1_weights", [5, 5, 32, 32],
                                        initializer=tf.random_normal_initializer())
        conv1_biases = tf.get_variable("conv1_biases", [32], initializer=tf.zeros_initializer())
        conv1 = tf.nn.conv2d(input_images, conv1_weights, strides=[1, 1, 1, 1], padding='SAME')
        return tf.nn.relu(conv1 + conv1_biases)

    image1 = tf.ones([1, 6, 6, 32])  # fragment: image1, image2
    image2 = tf.ones([1, 6, 6, 32])
    result1 = my_image_filter(image1)
    with pytest.raises(ValueError, match="already exists"):  # get_variable twice: 会出问题
        my_image_filter(image2)
    with tf.variable_scope("image_filters") as scope:
        result1 = my_image_filter(image1)
        scope.reuse_variables()
        result2 = my_image_filter(image2)
    with tf.variable_scope("image_filters1") as scope1:
        result1 = my_image_filter(image1)
    with tf.variable_scope(scope1, reuse=True):  # seed typo: the ':' was missing
        result2 = my_image_filter(image2)
    assert len(tf.trainable_variables()) == 6
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        one, two = sess.run([result1, result2])
    np.testing.assert_array_equal(one, two)


def test_the_tf_variable_version_makes_two_sets_of_variables():
    def my_image_filter(input_images):
        conv1_weights = tf.Variable(tf.random_normal([5, 5, 32, 32]), name="conv1_weights")
        conv1_biases = tf.Variable(tf.zeros([32]), name="conv1_biases")
        conv1 = tf.nn.conv2d(input_images, conv1_weights, strides=[1, 1, 1, 1], padding='SAME')
        return tf.nn.relu(conv1 + conv1_biases)

    result1 = my_image_filter(tf.ones([1, 4, 4, 32]))
    result2 = my_image_filter(tf.ones([1, 4, 4, 32]))
    assert [v.op.name for v in tf.trainable_variables()] == [
        "conv1_weights", "conv1_biases", "conv1_weights_1", "conv1_biases_1"]
    assert result1.shape.as_list() == result2.shape.as_list() == [1, 4, 4, 32]


def test_name_scope_versus_variable_scope_programs(capsys):
    with tf.name_scope("hello") as name_scope:
        arr1 = tf.get_variable("arr1", shape=[2, 10], dtype=tf.float32)
        print(name_scope)
        print(arr1.name)
        print("scope_name:%s " % tf.get_variable_scope().original_name_scope)
    assert capsys.readouterr().out == "hello/\narr1:0\nscope_name: \n"

    with tf.Graph().as_default():
        with tf.variable_scope("hello") as variable_scope:
            arr1 = tf.get_variable("arr1", shape=[2, 10], dtype=tf.float32)
            print(variable_scope)
            print(variable_scope.name)
            print(arr1.name)
            print(tf.get_variable_scope().original_name_scope)
            with tf.variable_scope("xixi") as v_scope2:
                print(tf.get_variable_scope().original_name_scope)
    first, rest = capsys.readouterr().out.split("\n", 1)
    assert "VariableScope" in first  # TF: <tensorflow.python.ops.variable_scope.VariableScope object at 0x...>
    assert rest == "hello\nhello/arr1:0\nhello/\nhello/xixi/\n"

    with tf.Graph().as_default():
        with tf.name_scope("name1"):
            with tf.variable_scope("var1"):
                w = tf.get_variable("w", shape=[2])
                res = tf.add(w, [3])
        print(w.name)
        print(res.name)
    assert_printed(capsys.readouterr().out, "var1/w:0 name1/var1/Add:0")


def test_nested_scope_names(capsys):
    with tf.name_scope("scope1") as scope1:
        with tf.name_scope("scope2") as scope2:
            print(scope2)
    with tf.variable_scope("scope1") as scope1:
        with tf.variable_scope("scope2") as scope2:
            print(scope2.name)
    assert capsys.readouterr().out == "scope1/scope2/\nscope1/scope2\n"


def test_name_scope_hidden_prefixes_ops_and_variables(capsys):
    with tf.name_scope('hidden') as scope:
        a = tf.constant(5, name='alpha')
        W = tf.Variable(tf.random_uniform([1, 2], -1.0, 1.0), name='weights')
        b = tf.Variable(tf.zeros([1]), name='biases')
        print(a.name)
        print(W.name)
        print(b.name)
    # The seed lists the three operation names; printing the tensors adds ':0'.
    assert capsys.readouterr().out == "hidden/alpha:0\nhidden/weights:0\nhidden/biases:0\n"
    assert [t.op.name for t in (a, W, b)] == ["hidden/alpha", "hidden/weights", "hidden/biases"]


def test_default_name_uniquifies_scopes(capsys):
    def test(name=None):
        with tf.variable_scope(name, default_name="scope") as scope:
            w = tf.get_variable("w", shape=[2, 10])

    test()
    test()
    ws = tf.trainable_variables()
    for w in ws:
        print(w.name)
    assert capsys.readouterr().out == "scope/w:0\nscope_1/w:0\n"


def average_gradients(grads):  # grads:[[grad0, grad1,..], [grad0,grad1,..]..]  (seed §10)
    averaged_grads = []
    for grads_per_var in zip(*grads):
        grads = []
        for grad in grads_per_var:
            expanded_grad = tf.expand_dims(grad, 0)  # seed typo: tf.expanded_dim
            grads.append(expanded_grad)
        grads = tf.concat_v2(grads, 0)
        grads = tf.reduce_mean(grads, 0)
        averaged_grads.append(grads)
    return averaged_grads


def test_multi_gpu_towers_share_variables_and_average_gradients():
    # fragment: FLAGS.num_gpus = 2, TOWER_NAME, lr, a tower loss (w*x - y)^2 on one example per
    # tower; "average_gradients后面说明" is §10's function above, fed the towers' gradients.
    # There is no GPU: tf.device('/gpu:%d') needs allow_soft_placement=True, as on a CPU-only TF1.
    num_gpus, TOWER_NAME, lr = 2, "tower", 0.1
    batches = [(1.0, 3.0), (2.0, 2.0)]
    with tf.Graph().as_default(), tf.device('/cpu:0'):
        opt = tf.train.GradientDescentOptimizer(lr)
        tower_grads = []
        for i in range(num_gpus):
            with tf.device('/gpu:%d' % i):
                with tf.name_scope('%s_%d' % (TOWER_NAME, i)) as scope:
                    w = tf.get_variable("w", initializer=1.0)
                    x, y = batches[i]
                    loss = tf.square(w * x - y)
                    tf.get_variable_scope().reuse_variables()
                    grads = opt.compute_gradients(loss)
                    tower_grads.append(grads)
        grads = list(zip(average_gradients([[g for g, _ in tower] for tower in tower_grads]),
                         [v for _, v in tower_grads[0]]))
        apply_gradient_op = opt.apply_gradients(grads)
        with pytest.raises(tf.errors.InvalidArgumentError, match="allow_soft_placement"):
            tf.Session().run(apply_gradient_op)
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(apply_gradient_op)
            # tower gradients 2(w*x-y)x: -4 and 0; mean -2; w = 1 - 0.1 * -2
            assert sess.run(w) == pytest.approx(1.2)


def test_multi_gpu_model_collections_feed_and_run_epoch():
    # fragment: Model, is_training, config, learning_rate and a BatchGenerator of y = 3x.
    learning_rate = 0.1

    class Model:
        def __init__(self, is_training, config, scope):
            self.x = tf.placeholder(tf.float32, [None, 1])
            self.y = tf.placeholder(tf.float32, [None, 1])
            with tf.variable_scope("model", reuse=tf.AUTO_REUSE):
                w = tf.get_variable("w", [1, 1], initializer=tf.zeros_initializer())
            self.predict = tf.matmul(self.x, w)
            self.loss = tf.reduce_mean(tf.square(self.y - self.predict))
            self.grad = tf.gradients(self.loss, tf.trainable_variables())
            self.merge_summary = tf.summary.merge([tf.summary.scalar("loss", self.loss)])

    class BatchGenerator:
        def next_batch(self):
            x = np.array([[1.0], [2.0]], np.float32)
            return x, 3 * x

    is_training, config, scope = True, None, None

    def multi_gpu_model(num_gpus=1):
        grads = []
        for i in range(num_gpus):
            with tf.device("/gpu:%d" % i):
                with tf.name_scope("tower_%d" % i):
                    model = Model(is_training, config, scope)
                    tf.add_to_collection("train_model", model)
                    grads.append(model.grad)
                    tf.add_to_collection("loss", model.loss)
                    tf.add_to_collection("predict", model.predict)
                    tf.add_to_collection("merge_summary", model.merge_summary)
        with tf.device("cpu:0"):
            averaged_gradients = average_gradients(grads)
            opt = tf.train.GradientDescentOptimizer(learning_rate)
            # seed typo: zip(average_gradients, ...) zipped the function, not its result
            train_op = opt.apply_gradients(zip(averaged_gradients, tf.trainable_variables()))
        return train_op

    def generate_feed_dic(model, feed_dict, batch_generator):
        x, y = batch_generator.next_batch()
        feed_dict[model.x] = x
        feed_dict[model.y] = y

    def run_epoch(session, data_set, scope, train_op=None, is_training=True):
        batch_generator = BatchGenerator()
        if is_training and train_op is not None:
            models = tf.get_collection("train_model")
            feed_dic = {}
            for model in models:
                generate_feed_dic(model, feed_dic, batch_generator)
            losses = tf.get_collection("loss", scope)
            return session.run([train_op] + losses, feed_dic)[1:]

    with tf.name_scope("train") as train_scope:
        train_op = multi_gpu_model(num_gpus=2)
    with tf.name_scope("test") as test_scope:
        model = Model(False, config, scope)
        tf.add_to_collection("loss", model.loss)
    saver = tf.train.Saver()
    assert len(tf.get_collection("loss", train_scope)) == 2 and len(tf.get_collection("loss")) == 3
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run(tf.global_variables_initializer())
        first = run_epoch(sess, None, train_scope, train_op)
        second = run_epoch(sess, None, train_scope, train_op)
    assert first == [pytest.approx(22.5)] * 2 and second[0] < first[0]  # mean((3x)^2) at w = 0
    assert saver is not None


@pytest.fixture
def stop_servers():
    """Servers a snippet starts (on free localhost ports instead of the seed's hosts), stopped after."""
    started = []
    yield started.append
    for server in started:
        server.stop()


def _hosts_to_local_ports(cluster: dict) -> dict:
    return {job: [f"localhost:{free_port()}" for _ in tasks] for job, tasks in cluster.items()}


def test_cluster_spec_and_server_per_host(stop_servers):
    tf.train.ClusterSpec({
        "worker": ["worker_task0.example.com:2222", "worker_task1.example.com:2222",
                   "worker_task2.example.com:2222"],
        "ps": ["ps_task0.example.com:2222", "ps_task1.example.com:2222"]})
    # fragment: 10.1.1.1:2222 and 10.1.1.2:3333 become two free localhost ports, one process for both.
    hosts = _hosts_to_local_ports({"worker": ["10.1.1.1:2222", "10.1.1.2:3333"]})
    cluster = tf.train.ClusterSpec(hosts)
    with pytest.raises(ValueError, match=r"Job 'local' is not in the cluster \(jobs: worker\)"):
        tf.train.Server(cluster, job_name="local", task_index=0)  # the seed names a job its cluster lacks
    stop_servers(tf.train.Server(cluster, job_name="worker", task_index=0))
    stop_servers(tf.train.Server(cluster, job_name="worker", task_index=1))


def test_job_task_devices_place_on_the_local_cpu_with_soft_placement():
    # fragment: the `...` variables, input and labels; run locally instead of on the cluster hosts.
    with tf.device("/job:ps/task:0"):
        weights_1 = tf.Variable(tf.ones([2, 2]))
        biases_1 = tf.Variable(tf.zeros([2]))
    with tf.device("/job:ps/task:1"):
        weights_2 = tf.Variable(tf.ones([2, 1]))
        biases_2 = tf.Variable(tf.zeros([1]))
    with tf.device("/job:worker/task:0"):
        input = tf.constant([[1.0, 2.0]])
        layer_1 = tf.nn.relu(tf.matmul(input, weights_1) + biases_1)
        logits = tf.nn.relu(tf.matmul(layer_1, weights_2) + biases_2)
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(logits).tolist() == [[6.0]]


def test_session_on_a_grpc_master(stop_servers):
    # fragment: the master "10.1.1.2:3333" is task 1 of a local two-task cluster; train_op bumps a counter.
    cluster = tf.train.ClusterSpec(_hosts_to_local_ports({"worker": ["10.1.1.1:2222", "10.1.1.2:3333"]}))
    stop_servers(tf.train.Server(cluster, job_name="worker", task_index=1))
    steps = tf.Variable(0)
    train_op = steps.assign_add(1)
    with tf.Session("grpc://" + cluster.task_address("worker", 1)) as sess:
        sess.run(steps.initializer)
        for _ in range(10000):
            sess.run(train_op)
        assert sess.run(steps) == 10000


def test_trainer_py_between_graph_replication(stop_servers):
    # fragment: loss; the ps/worker flags of trainer.py as one worker would receive them, with the
    # ps task started in this process on a free port.
    cluster = tf.train.ClusterSpec(_hosts_to_local_ports({"ps": ["localhost:2222"], "worker": ["localhost:2223"]}))
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    stop_servers(ps)
    server = tf.train.Server(cluster, job_name="worker", task_index=0)
    stop_servers(server)
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0", cluster=cluster)):
        w = tf.Variable(1.0)
        loss = tf.square(w)
        global_step = tf.Variable(0)
        train_op = tf.train.AdagradOptimizer(0.01).minimize(loss, global_step=global_step)
        saver = tf.train.Saver()
        summary_op = tf.merge_all_summaries()
        init_op = tf.initialize_all_variables()
    sv = tf.train.Supervisor(is_chief=True, logdir="train_logs", init_op=init_op, summary_op=summary_op,
                             saver=saver, global_step=global_step, save_model_secs=600)
    with sv.managed_session(server.target) as sess:
        step = 0
        while not sv.should_stop() and step < 3:
            _, step = sess.run([train_op, global_step])
    sv.stop()
    assert step == 3 and ps.store.box(global_step.op.name).value == 3  # the step lives on the ps task
    assert tf.train.latest_checkpoint("train_logs") is not None  # saved by the Supervisor on stop


def test_replica_device_setter_round_robins_variables_over_ps_tasks():
    cluster_spec = {"ps": ["ps0:2222", "ps1:2222"], "worker": ["worker0:2222", "worker1:2222", "worker2:2222"]}
    with tf.device(tf.replica_device_setter(cluster=cluster_spec)):
        v1, v2, v3 = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
    assert [v.device for v in (v1, v2, v3)] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]


def test_sync_replicas_chief_ops():
    w = tf.Variable(1.0)
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=1)
    global_step = tf.Variable(0)
    train_op = opt.minimize(tf.square(w), global_step=global_step)
    init_token_op = opt.get_init_tokens_op()
    chief_queue_runner = opt.get_chief_queue_runner()
    sv = tf.train.Supervisor(is_chief=True, logdir="sync_logs", global_step=global_step)
    sess = sv.prepare_or_wait_for_session("")
    sv.start_queue_runners(sess, [chief_queue_runner])
    sess.run(init_token_op)
    # fragment: one training step of this only replica, then shut down
    sess.run(train_op)
    assert sess.run(global_step) in (0, 1)  # the chief's runner applies the gradient in its own thread
    sv.stop()
    sess.close()


def test_file_writer_graph_and_scalar_summary_of_a_training_loop():
    your_dir = "logs"
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(your_dir, sess.graph)
    # fragment: loss, train_op and feed_dict of a one-variable regression
    x = tf.placeholder(tf.float32, [None])
    w = tf.Variable(0.0)
    loss = tf.reduce_mean(tf.square(3 * x - w * x))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    feed_dict = {x: [1.0, 2.0]}
    tf.summary.scalar("loss", loss)
    merged_summary = tf.summary.merge_all()
    init = tf.global_variables_initializer()  # seed typo: tf.global_variable_initializer()
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(your_dir, sess.graph, max_queue=10, flush_secs=120)
        sess.run(init)
        for i in range(100):
            _, summary = sess.run([train_op, merged_summary], feed_dict)
            writer.add_summary(summary, i)
        writer.flush()
        writer.close()
    events = [e for f in sorted(tf.gfile.Glob(your_dir + "/events*"))
              for e in tf.summary.summary_iterator(f)]
    steps = [e.step for e in events if e.summary.value and e.summary.value[0].tag == "loss"]
    assert steps == list(range(100))


def test_image_histogram_audio_summaries_and_scoped_tags():
    images = tf.zeros([5, 4, 4, 3])
    gradients = tf.constant([0.1, -0.2, 0.3])
    # The seed gives 0.x signatures, (tag, ..., max_images=3, ..., name=None): those are the legacy
    # *_summary functions; tf.summary.* take (name, ..., max_outputs=3, collections=None).
    image = tf.summary.image("kernels", images, max_outputs=3, collections=None)
    legacy_image = tf.image_summary("legacy_kernels", images, max_images=3, collections=None, name=None)
    hist = tf.summary.histogram("weights", gradients, collections=None)
    legacy_hist = tf.histogram_summary("legacy_weights", gradients, collections=None, name=None)
    audio = tf.summary.audio("sound", tf.zeros([2, 100]), 8000, max_outputs=3, collections=None)
    with tf.name_scope("summary_gradients"):
        tf.summary.histogram("name", gradients)  # seed typo: tf.summary.histgram
    with tf.Session() as sess:
        tags = [v.tag for v in tf.summary.Summary.FromString(sess.run(tf.summary.merge_all())).value]
        assert len(tf.summary.Summary.FromString(sess.run(image)).value) == 3
        assert sess.run(hist) and sess.run(audio) and sess.run(legacy_hist)
        assert len(tf.summary.Summary.FromString(sess.run(legacy_image)).value) == 3
    assert "summary_gradients/name" in tags


def test_supervisor_program(capsys):
    logdir = "keith_tmp/"  # fragment: "/home/keith/tmp/" made a local directory
    a = tf.Variable(1)
    b = tf.Variable(2)
    c = tf.add(a, b)
    update = tf.assign(a, c)
    tf.scalar_summary("a", a)
    init_op = tf.initialize_all_variables()
    merged_summary_op = tf.merge_all_summaries()
    sv = tf.train.Supervisor(logdir=logdir, init_op=init_op)
    saver = sv.saver
    with sv.managed_session() as sess:
        for i in range(1000):
            update_ = sess.run(update)
            print(update_)
            if i % 10 == 0:
                merged_summary = sess.run(merged_summary_op)
                sv.summary_computed(sess, merged_summary, global_step=i)
            if i % 100 == 0:
                # seed typo: saver.save(sess, logdir=...): Saver.save's path argument is save_path
                saver.save(sess, save_path=logdir, global_step=i)
    assert capsys.readouterr().out.split() == [str(3 + 2 * i) for i in range(1000)]
    assert tf.train.latest_checkpoint(logdir) is not None


def test_variable_uniquifies_get_variable_refuses(capsys):
    w_1 = tf.Variable(3, name="w_1")
    w_2 = tf.Variable(1, name="w_1")
    print(w_1.name)
    print(w_2.name)
    assert capsys.readouterr().out == "w_1:0\nw_1_1:0\n"
    with tf.Graph().as_default():
        w_1 = tf.get_variable(name="w_1", initializer=1)
        with pytest.raises(ValueError) as error:
            w_2 = tf.get_variable(name="w_1", initializer=2)
    assert str(error.value).startswith("Variable w_1 already exists, disallowed. "
                                       "Did you mean to set reuse=True")


def test_collections_store_values_as_given():
    a, b = tf.constant(1), tf.constant(2)
    name, value = "haha", a
    tf.get_default_graph().add_to_collection(name, value)
    tf.add_to_collection("haha", [a, b])
    assert tf.get_collection("haha") == [a, [a, b]]
    assert tf.get_default_graph().get_collection(name, scope=None) == [a, [a, b]]


class Model(object):
    def __init__(self):
        self.graph()
        self.merged_summary = tf.summary.merge_all()  # 引起血案的地方

    def graph(self):
        self.x = tf.placeholder(dtype=tf.float32, shape=[None, 1])
        self.label = tf.placeholder(dtype=tf.float32, shape=[None, 1])
        w = tf.get_variable("w", shape=[1, 1])
        self.predict = tf.matmul(self.x, w)
        self.loss = tf.reduce_mean(tf.reduce_sum(tf.square(self.label - self.predict), axis=1))
        self.train_op = tf.train.GradientDescentOptimizer(0.01).minimize(self.loss)
        tf.summary.scalar("loss", self.loss)


class ScopedModel(Model):
    def __init__(self, scope):
        self.graph()
        self.merged_summary = tf.summary.merge(tf.get_collection(tf.GraphKeys.SUMMARIES, scope))


def run_epoch(session, model):
    x = np.random.rand(1000).reshape(-1, 1)
    label = x * 3
    feed_dic = {model.x.name: x, model.label: label}
    su = session.run([model.merged_summary], feed_dic)


def test_merge_all_with_two_models_fails_then_scoped_merge_fixes_it():
    def main():
        with tf.Graph().as_default():
            with tf.name_scope("train"):
                with tf.variable_scope("var1", dtype=tf.float32):
                    model1 = Model()
            with tf.name_scope("test"):
                with tf.variable_scope("var1", reuse=True, dtype=tf.float32):
                    model2 = Model()
            with tf.Session() as sess:
                tf.global_variables_initializer().run()
                run_epoch(sess, model1)
                run_epoch(sess, model2)

    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="You must feed a value for placeholder tensor 'train/var1/Placeholder'"):
        main()
    with tf.Graph().as_default():
        with tf.name_scope("train") as train_scope:
            with tf.variable_scope("var1", dtype=tf.float32):
                model1 = ScopedModel(train_scope)
        with tf.name_scope("test") as test_scope:
            with tf.variable_scope("var1", reuse=True, dtype=tf.float32):
                model2 = ScopedModel(test_scope)
        with tf.Session() as sess:
            tf.global_variables_initializer().run()
            run_epoch(sess, model1)
            run_epoch(sess, model2)


def test_gradients_of_an_unrelated_variable_wrong_then_right(capsys, numpy_1_13_print):
    w1 = tf.Variable([[1, 2]])
    w2 = tf.Variable([[3, 4]])
    res = tf.matmul(w1, [[2], [1]])
    grads = tf.gradients(res, [w1, w2])
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        with pytest.raises(TypeError, match="Fetch argument None has invalid type"):
            re = sess.run(grads)
    grads = tf.gradients(res, [w1])
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        re = sess.run(grads)
        print(re)
    assert capsys.readouterr().out == "[array([[2, 1]], dtype=int32)]\n"


def _stop_gradient_program():
    w1 = tf.Variable(2.0)
    w2 = tf.Variable(2.0)
    a = tf.multiply(w1, 3.0)
    a_stoped = tf.stop_gradient(a)
    b = tf.multiply(a_stoped, w2)  # b=w1*3.0*w2
    gradients = tf.gradients(b, xs=[w1, w2])
    print(gradients)


def test_stop_gradient_gives_none_for_the_blocked_variable(capsys):
    _stop_gradient_program()
    assert capsys.readouterr().out == \
        "[None, <tf.Tensor 'gradients/Mul_1_grad/Reshape_1:0' shape=() dtype=float32>]\n"


def test_stop_gradient_leaves_the_other_path_and_apply_gradients_skips_none(capsys, numpy_1_13_print):
    a = tf.Variable(1.0)
    b = tf.Variable(1.0)
    c = tf.add(a, b)
    c_stoped = tf.stop_gradient(c)
    d = tf.add(a, b)
    e = tf.add(c_stoped, d)
    gradients = tf.gradients(e, xs=[a, b])
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        print(sess.run(gradients))
    assert capsys.readouterr().out == "[1.0, 1.0]\n"

    with tf.Graph().as_default():
        w1 = tf.Variable(2.0)
        w2 = tf.Variable(2.0)
        a = tf.multiply(w1, 3.0)
        a_stoped = tf.stop_gradient(a)
        b = tf.multiply(a_stoped, w2)
        opt = tf.train.GradientDescentOptimizer(0.1)
        gradients = tf.gradients(b, xs=tf.trainable_variables())
        with pytest.raises(AttributeError):  # 这里会报错,因为gradients[0]是None (None.name)
            tf.summary.histogram(gradients[0].name, gradients[0])
        train_op = opt.apply_gradients(zip(gradients, tf.trainable_variables()))
        print(gradients)
        with tf.Session() as sess:
            tf.global_variables_initializer().run()
            print(sess.run(train_op))
            print(sess.run([w1, w2]))
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:] == ["None", "[2.0, 1.4]"]  # w2 -= 0.1 * (w1 * 3.0)


def test_saver_dict_list_and_swapping_restore(capsys):
    v1 = tf.Variable(1.0, name="v1")
    v2 = tf.Variable(2.0, name="v2")
    saver = tf.train.Saver({'v1': v1, 'v2': v2})
    saver = tf.train.Saver([v1, v2])
    saver = tf.train.Saver({v.op.name: v for v in [v1, v2]})
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        saver.save(sess, 'list-ckpt/model-2')
    print_tensors_in_checkpoint_file("list-ckpt/model-2", None, True)
    assert capsys.readouterr().out.startswith("tensor_name:  v1\n1.0\ntensor_name:  v2\n2.0\n")

    saver = tf.train.Saver({"variable_1": v1, "variable_2": v2})
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        saver.save(sess, 'test-ckpt/model-2')
    print_tensors_in_checkpoint_file("test-ckpt/model-2", None, True)
    assert capsys.readouterr().out.startswith("tensor_name:  variable_1\n1.0\ntensor_name:  variable_2\n2.0\n")

    with tf.Graph().as_default():
        v1 = tf.Variable(1.0, name="v1")
        v2 = tf.Variable(2.0, name="v2")
        saver = tf.train.Saver({"variable_1": v2, "variable_2": v1})
        with tf.Session() as sess:
            tf.global_variables_initializer().run()
            saver.restore(sess, 'test-ckpt/model-2')
            print(sess.run(v1), sess.run(v2))
    assert capsys.readouterr().out == "2.0 1.0\n"


def test_cond_and_case():
    a, b = tf.constant(2.0), tf.constant(3.0)  # fragment: a, b, x, y
    x, y = tf.placeholder(tf.float32, []), tf.constant(4.0)
    z = tf.mul(a, b)
    result = tf.cond(x < y, lambda: tf.add(x, z), lambda: tf.square(y))
    pred_1, pred_2 = x < 1.0, x < 2.0
    fn_1, fn_2 = (lambda: tf.constant(1)), (lambda: tf.constant(2))
    default = lambda: tf.constant(0)  # noqa: E731
    as_list = tf.case([(pred_1, fn_1), (pred_2, fn_2)], default, exclusive=False, name='case')
    as_dict = tf.case({pred_1: fn_1, pred_2: fn_2}, default)
    with tf.Session() as sess:
        assert [sess.run(result, {x: v}) for v in (1.0, 5.0)] == [7.0, 16.0]
        assert [sess.run(as_list, {x: v}) for v in (0.5, 1.5, 9.0)] == [1, 2, 0]
        assert [sess.run(as_dict, {x: v}) for v in (1.5, 9.0)] == [2, 0]


def test_group_returns_an_op_tuple_returns_tensors():
    w = tf.Variable(1)
    mul = tf.multiply(w, 2)
    add = tf.add(w, 2)
    group = tf.group(mul, add)
    tuple = tf.tuple([mul, add])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(group) is None
        assert sess.run(tuple) == [2, 3]


def test_exponential_decay_program(capsys):
    global_step = tf.Variable(0, trainable=False)
    initial_learning_rate = 0.1  # 初始学习率
    learning_rate = tf.train.exponential_decay(initial_learning_rate, global_step=global_step,
                                               decay_steps=10, decay_rate=0.9)
    opt = tf.train.GradientDescentOptimizer(learning_rate)
    add_global = global_step.assign_add(1)
    with tf.Session() as sess:
        tf.global_variables_initializer().run()
        print(sess.run(learning_rate))
        for i in range(10):
            _, rate = sess.run([add_global, learning_rate])
            print(rate)
    rates = [float(r) for r in capsys.readouterr().out.split()]
    # decayed = 0.1 * 0.9 ^ (global_step / 10); the assign_add and the read share one run, in
    # either order, so each printed rate is for step i or i+1
    assert rates[0] == pytest.approx(0.1)
    for i, rate in enumerate(rates[1:]):
        assert rate in (pytest.approx(0.1 * 0.9 ** (i / 10), rel=1e-6), pytest.approx(0.1 * 0.9 ** ((i + 1) / 10), rel=1e-6))


def test_sparse_to_dense_one_hot_labels_with_legacy_concat_and_pack(capsys):
    BATCHSIZE = 6
    label = tf.expand_dims(tf.constant([0, 2, 3, 6, 7, 9]), 1)
    index = tf.expand_dims(tf.range(0, BATCHSIZE), 1)
    concated = tf.concat(1, [index, label])
    onehot_labels = tf.sparse_to_dense(concated, tf.pack([BATCHSIZE, 10]), 1.0, 0.0)
    with tf.Session() as sess:
        print(sess.run(concated))
        onehot = sess.run(onehot_labels)
    assert_printed(capsys.readouterr().out, """[[0 0]
 [1 2]
 [2 3]
 [3 6]
 [4 7]
 [5 9]]""")
    np.testing.assert_array_equal(onehot, np.eye(10, dtype=np.float32)[[0, 2, 3, 6, 7, 9]])
