"""The tail the RNN differential snippets share: after building `out` and `state` from input `x`, set every
variable from its name (both sides hold the same weights only if the names are TF's), take a loss over
the outputs (`inputs['proj']`) and every state leaf, and fetch outputs, states, variable names and the
gradients w.r.t. every variable and `x`. Written for str.format (braces doubled)."""

EVALUATE_RNN = """
variables = tf.trainable_variables()
def flat(s):
    return [leaf for item in s for leaf in flat(item)] if isinstance(s, (tuple, list)) else [s]
leaves = flat(state)
loss = tf.reduce_sum(out * inputs['proj'][:, :, :out.shape.as_list()[2]]) + sum(
    tf.reduce_sum(s * (0.3 + 0.1 * k)) for k, s in enumerate(leaves))
grads = tf.gradients(loss, variables + [x])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for v in variables:
        rng = np.random.default_rng(zlib.crc32(v.op.name.encode()))
        v.load(rng.uniform(-0.6, 0.6, v.shape.as_list()).astype(np.float32), sess)
    out_v, leaves_v, grads_v = sess.run([out, leaves, grads])
outputs = {{'out': out_v, 'names': np.array([v.op.name for v in variables]),
           **{{'state%d' % k: s for k, s in enumerate(leaves_v)}},
           **{{'grad%d' % k: g for k, g in enumerate(grads_v)}}}}
"""
