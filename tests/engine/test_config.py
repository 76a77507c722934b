"""ConfigProto: thread bounds on BLAS and Numba, device placement logging, soft placement."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tftk as tf


def run_python(code: str) -> dict:
    """Run `code` in a fresh interpreter (thread limits are process-wide) and parse its JSON line."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_intra_op_threads_bound_blas():
    out = run_python("""
        import json
        import numpy as np
        from threadpoolctl import threadpool_info
        import tftk as tf
        def blas():
            return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
        before = blas()
        a = tf.constant(np.ones((8, 8), np.float32))
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
            sess.run(tf.matmul(a, a))
        print(json.dumps({"before": before, "after": blas()}))
    """)
    if max(out["before"], default=1) < 2:
        pytest.skip("BLAS already runs one thread here: nothing to bound")
    assert out["after"] and all(n == 1 for n in out["after"])


@pytest.mark.parametrize("numba_first", [True, False], ids=["numba-imported-first", "numba-imported-later"])
def test_intra_op_threads_bound_numba(numba_first):
    out = run_python(f"""
        import json, os
        if {numba_first}:
            import numba
        import tftk as tf
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
            step = tf.constant(1.0) + 1.0
            sess.run(step)
            import numba  # a step run after Numba's import bounds its threads too
            sess.run(step)
        print(json.dumps({{"threads": numba.get_num_threads(), "cores": os.cpu_count(),
                          "variable": os.environ.get("NUMBA_NUM_THREADS")}}))
    """)
    if out["cores"] < 2:
        pytest.skip("one core: nothing to bound")
    assert out["threads"] == 1
    assert out["variable"] is None  # never written: Numba would raise at its next compilation


def test_log_device_placement_prints_each_op(capfd):
    a = tf.constant(np.eye(2, dtype=np.float32), name="a")
    m = tf.matmul(a, a, name="mm")
    with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as sess:
        sess.run(m)
    err = capfd.readouterr().err
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    assert f"mm: (MatMul): {cpu}" in err
    assert f"a: (Const): {cpu}" in err


def test_gpu_op_fails_clearly_without_soft_placement():
    x = tf.constant(2.0, name="x")
    with tf.device("/gpu:0"):
        y = tf.square(x, name="on_gpu")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y)
    assert "Cannot assign a device for operation 'on_gpu'" in str(info.value)
    assert "/gpu:0" in str(info.value) and "allow_soft_placement" in str(info.value)
    assert info.value.op is y.op
    config = tf.ConfigProto(allow_soft_placement=True, gpu_options=tf.GPUOptions(allow_growth=True))
    with tf.Session(config=config) as sess:
        assert sess.run(y) == 4.0


def test_config_fields_are_accepted():
    config = tf.ConfigProto(intra_op_parallelism_threads=2, inter_op_parallelism_threads=3,
                            gpu_options=tf.GPUOptions(per_process_gpu_memory_fraction=0.4))
    assert config.inter_op_parallelism_threads == 3
    assert config.gpu_options.per_process_gpu_memory_fraction == 0.4
