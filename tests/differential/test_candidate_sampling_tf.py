"""Candidate samplers and compute_accidental_hits against real TensorFlow: the deterministic parts
(expected counts, shapes, dtypes, all_candidate_sampler, accidental hits) exactly; the draws by their
properties (range, distinctness with unique=True, ids of zero weight never drawn)."""

from tests.differential.op_tables import Row, table_tests

TRUE = "tc = tf.constant([[0, 3], [5, 1]], tf.int64)\n"

ROWS = [
    Row("uniform_expected_counts", TRUE + "s, t, e = tf.nn.uniform_candidate_sampler(tc, 2, 6, False, 10, seed=4)\n"
        "fetch = {'t': t, 'e': e, 'in_range': tf.reduce_all((s >= 0) & (s < 10)), 'dtype': tf.constant(s.dtype.name)}\n"),
    Row("uniform_unique", TRUE + "s, t, e = tf.random.uniform_candidate_sampler(tc, 2, 8, True, 8, seed=1)\n"
        "fetch = {'sorted': tf.sort(s), 'e_max_one': tf.reduce_all(e <= 1.0), 't_shape': tf.shape(t)}\n"),
    Row("fixed_unigram", TRUE + "s, t, e = tf.nn.fixed_unigram_candidate_sampler(tc, 2, 5, False, 6, "
        "unigrams=[1.0, 0.0, 3.0, 2.0, 0.0, 4.0], distortion=0.5, seed=2)\n"
        "fetch = {'t': t, 'no_zero_weight': tf.reduce_all(tf.not_equal(s, 1) & tf.not_equal(s, 4)), 'n': tf.size(e)}\n"),
    Row("fixed_unigram_reserved", TRUE + "s, t, e = tf.random.fixed_unigram_candidate_sampler(tc, 2, 3, False, 7, "
        "num_reserved_ids=2, unigrams=[1.0, 1.0, 2.0, 2.0, 4.0], seed=2)\n"
        "fetch = {'t': t, 'not_reserved': tf.reduce_all(s >= 2)}\n"),
    Row("all_candidate_sampler", TRUE + "s, t, e = tf.nn.all_candidate_sampler(tc, 2, 7, True)\n"
        "fetch = {'s': s, 't': t, 'e': e}\n"),
    Row("all_candidate_sampler_random_ns", TRUE + "s, t, e = tf.random.all_candidate_sampler(tc, 2, 3, False)\n"
        "fetch = {'s': s, 'e': e}\n"),
    Row("compute_accidental_hits", "tc = tf.constant([[1, 4], [2, 2], [7, 0]], tf.int64)\n"
        "i, ids, w = tf.nn.compute_accidental_hits(tc, tf.constant([4, 0, 9, 2], tf.int64), 2)\n"
        "fetch = {'i': i, 'ids': ids, 'w': w}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("candidate_sampling", ROWS)
